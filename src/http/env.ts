/** Hono context typing shared by the app, middleware and routes. */
import type { Logger } from "../observability/logger.ts";

export interface AppEnv {
  Variables: {
    /** Request-scoped child logger; routes add requestId/quoteId to it as they learn them. */
    log: Logger;
  };
}
