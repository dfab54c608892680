/** Hono context typing shared by the app, middleware and routes. */
import type { Context } from "hono";
import type { Logger } from "../observability/logger.ts";

export interface AppEnv {
  Variables: {
    /** Request-scoped child logger; routes add requestId/quoteId to it as they learn them. */
    log: Logger;
  };
}

/** A request header by its (case-insensitive) name. */
export function header(c: Context, name: string): string | undefined {
  return c.req.header(name);
}
