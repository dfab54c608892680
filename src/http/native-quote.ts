/**
 * POST <basePath>/quote served straight on node:http, for the operator's listener.
 *
 * Through @hono/node-server every request becomes a web Request, runs Hono's router and middleware
 * chain, and leaves as a web Response that the adapter writes back: on the quote path that was about
 * a third of the CPU per quote, the difference between the rate one core can price within the
 * operator's 250 ms and a fraction of it. This listener does the same steps, in the same order, with
 * Node's own objects:
 *
 *   1. a declared Content-Length over `limits.maxBodyBytes`: 413 (before the key, as the app's
 *      body-limit middleware does);
 *   2. the operator's X-API-KEY: 401 missing or invalid (the app's `apiKeyAuth`, one check);
 *   3. the route's own work, `quoteHandler` (src/routes/quote.ts), the very function the Hono route
 *      runs; the body is read only when the handler asks (after shedding), counted against the limit
 *      as it streams (a chunked body over it: 413);
 *   4. errors answered by `errorAnswer`, the app's error handler's own mapping;
 *   5. the answer counted in `rfq_http_responses_total{route,status}` under the label Hono gives it:
 *      the route's path, or the API's middleware pattern (`<basePath>/*`) for a refused key or an
 *      oversized body, which Hono counts there.
 *
 * Everything else on the listener (tokens, swap, health, openapi, unknown paths) goes to the Hono app.
 * test/http/native-quote.test.ts sends the same requests to both and requires the same status, body,
 * content type and counters.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { QUOTE_REQUEST_UNINTERNED, quoteRequestFast, quoteRequestSchema } from "../contract/quote.ts";
import { errorAnswer } from "../errors/index.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { QuoteAnswer, QuoteCall } from "../routes/quote.ts";
import { apiKeyCheck } from "./auth.ts";
import { bodyTooLarge, declaredSize, parseJsonText, readIncoming } from "./body.ts";
import { nodeHeader } from "./env.ts";

export interface NativeQuoteOptions {
  /** The route's path, basePath included (e.g. /jupiter/rfq/quote); also its metrics label. */
  path: string;
  handle: (call: QuoteCall) => Promise<QuoteAnswer>;
  apiKey: string | undefined;
  maxBodyBytes: number;
  metrics: Metrics;
  log: Logger;
}

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

const JSON_TYPE = "application/json";

/** Writes a JSON answer in one go, with its length (no chunked encoding). */
function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": JSON_TYPE, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The listener for POST <path>; anything else must be routed elsewhere by the caller. */
export function nativeQuoteRoute(opts: NativeQuoteOptions): NodeListener {
  const { path, handle, maxBodyBytes, metrics, log } = opts;
  const checkKey = apiKeyCheck(opts.apiKey);
  const refusedLabel = `${path.slice(0, path.lastIndexOf("/"))}/*`;
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    send(res, status, body);
    const route = status === 401 || status === 413 ? refusedLabel : path;
    metrics.responses.inc({ route, status: String(status) });
  };
  const fail = (res: ServerResponse, err: unknown, errLog: Logger) => {
    const a = errorAnswer(err, errLog);
    answer(res, a.status, a.body);
  };

  return (req, res) => {
    const declared = declaredSize(
      nodeHeader(req, "content-length"),
      nodeHeader(req, "transfer-encoding"),
      maxBodyBytes,
    );
    if (declared === "over") return fail(res, bodyTooLarge(maxBodyBytes), log);
    const refused = checkKey(nodeHeader(req, "x-api-key"));
    if (refused) return fail(res, refused, log);

    const call: QuoteCall = {
      header: (name) => nodeHeader(req, name),
      body: async () =>
        parseJsonText(
          await readIncoming(req, maxBodyBytes),
          quoteRequestSchema,
          quoteRequestFast,
          QUOTE_REQUEST_UNINTERNED,
        ),
      log,
    };
    handle(call).then(
      (a) => answer(res, a.status, a.body),
      (e) => fail(res, e, call.log),
    );
  };
}
