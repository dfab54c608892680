/** Hono context typing shared by the app, middleware and routes. */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { Logger } from "../observability/logger.ts";

export interface AppEnv {
  Variables: {
    /** Request-scoped child logger; routes add requestId/quoteId to it as they learn them. */
    log: Logger;
  };
}

/**
 * A request header (lower-case name). Under @hono/node-server it is read from Node's IncomingMessage:
 * `c.req.header()` would first build a web `Headers` object (undici) from every header the request
 * has, a few percent of the quote path's CPU. Elsewhere (`app.request()` in tests) Hono's own.
 */
export function header(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming ? nodeHeader(incoming, name) : c.req.header(name);
}

/** A header of Node's own request (lower-case name); repeated ones joined as `Headers` joins them. */
export function nodeHeader(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}
