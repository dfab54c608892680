/** Hono context typing shared by the app, middleware and routes. */
import type { Logger } from "../observability/logger.ts";

export interface AppEnv {
  Variables: {
    /** Request-scoped child logger; routes add requestId/quoteId to it as they learn them. */
    log: Logger;
    /** The AppError code an error answer carried, for the access log and metrics. */
    errorCode: string;
  };
}
