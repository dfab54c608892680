/**
 * The sweep's baselines (`npm run loadtest -- --sweep`): a bare server answering the quote request's
 * shape with none of the webhook's work (auth, validation, pricing, store), on the same number of
 * workers (node:cluster) as the webhook it is compared with.
 *
 *   --kind http   node:http alone: read the body, JSON.parse, answer a quote-shaped JSON echoing ids
 *   --kind hono   a bare Hono app on @hono/node-server reading the body with `c.req.json()`
 *   --kind store  node:http as `http`, and before answering, the webhook's own quote store `put`
 *                 (src/quote-store/redis.ts: the same client factory, script, key layout and write
 *                 coalescing) of the request and its answer, in the Redis at --redis
 *   --kind floor  node:http answering every POST with one fixed 404 as soon as its headers are read,
 *                 the body never read: the least a request refused inside Node can cost, whatever
 *                 the code that refuses it (the webhook's shedding, src/http/shed.ts, is compared with it)
 *
 * `store` is the floor for any webhook that keeps every quote in Redis before answering it, as this
 * one must (a /swap may reach another instance): no auth, no validation, no pricing, no metrics, only
 * the one round trip to Redis that a quote cannot do without. Beside `http` it says what that round
 * trip costs on this machine (a write that wakes Redis, a reply that wakes the server, Redis' own
 * CPU); beside the webhook it says what the webhook's own work costs on top of it.
 *
 * Each listens with the webhook's accept queue (LISTEN_BACKLOG, the same default), so that past
 * capacity both lose (or keep) the same connections.
 *
 *   tsx sandbox/loadtest/bare.ts --kind http --port 8099 --workers 2
 *   tsx sandbox/loadtest/bare.ts --kind store --redis redis://127.0.0.1:6390 --port 8099
 */
import cluster from "node:cluster";
import { createServer, type Server, type ServerResponse } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { envSchema } from "../../config/schema.ts";
import { parseArgs } from "../../src/cli/args.ts";
import { OPERATOR_KEEP_ALIVE_MS } from "../../src/http/listener.ts";
import { OVERLOADED_MESSAGE } from "../../src/http/shed.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { createRedisClient } from "../../src/redis/client.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "tsx sandbox/loadtest/bare.ts",
  summary: "A bare server answering POST .../quote with a quote-shaped JSON (the sweep's baseline).",
  flags: {
    kind: {
      type: "string",
      value: "http|hono|store|floor",
      default: "http",
      description: "node:http, a bare Hono app, node:http with the quote store's put, or a fixed 404",
    },
    redis: { type: "string", value: "URL", description: "--kind store: the Redis to store quotes in" },
    port: { type: "string", value: "N", default: "8099", description: "port (127.0.0.1)" },
    workers: { type: "string", value: "N", default: "1", description: "processes sharing the port" },
  },
});

const MAKER = "7wCiid5CRcyHKsW9UTSf78jPq2vpHv6k4MDJiwkVQG2n";

interface Req {
  requestId?: string;
  quoteId?: string;
  tokenIn?: string;
  tokenOut?: string;
  amount?: string;
  quoteType?: string;
  feeBps?: number;
  taker?: string;
}

/**
 * --kind store: the key prefix (apart from the webhook's `rfq:`), and the default quote TTL
 * (config/default.json's `limits.quoteTtlMs`; the store adds its retention past expiry, as for the webhook).
 */
const STORE_PREFIX = "rfq:bare:";
const STORE_TTL_MS = 55_000;

/** The answer the webhook would give, computed from nothing but the request. */
const answer = (r: Req) => ({
  requestId: r.requestId,
  quoteId: r.quoteId,
  tokenIn: r.tokenIn,
  tokenOut: r.tokenOut,
  quoteType: r.quoteType,
  protocol: "v1",
  amountIn: r.amount,
  amountOut: "5545077",
  maker: MAKER,
  prioritizationFeeToUse: 10000,
});

/** --kind floor: one answer, built once (a 404 with the shape of the webhook's shed answer). */
const FLOOR_BODY = Buffer.from(JSON.stringify({ message: OVERLOADED_MESSAGE }));
const FLOOR_HEADERS = { "content-type": "application/json", "content-length": FLOOR_BODY.length };

const port = Number(args.port);
const listenOn = {
  port,
  host: "127.0.0.1",
  backlog: envSchema.shape.LISTEN_BACKLOG.parse(process.env.LISTEN_BACKLOG),
};
const workers = Math.max(1, Number(args.workers));
if (!["http", "hono", "store", "floor"].includes(args.kind as string))
  throw new Error(`--kind: "${args.kind}" is not one of http, hono, store, floor`);
if (args.kind === "store" && !args.redis) throw new Error("--kind store needs --redis URL");

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on("SIGTERM", () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGTERM");
    process.exit(0);
  });
} else if (args.kind === "hono") {
  const app = new Hono();
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.post("*", async (c) => c.json(answer((await c.req.json()) as Req)));
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  // The webhook's own keep-alive: with Node's default 5 s, a connection the generator left idle
  // between two steps was closed as it was reused, and the step failed on that, not on capacity.
  server.keepAliveTimeout = OPERATOR_KEEP_ALIVE_MS;
  server.listen(listenOn);
} else {
  /** --kind store: the webhook's quote store, one client per process (each worker its own, as the webhook). */
  const store =
    args.kind === "store"
      ? new RedisQuoteStore(createRedisClient(args.redis as string), STORE_PREFIX)
      : undefined;
  const send = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  const server = createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
      return;
    }
    if (args.kind === "floor") {
      // Node dumps the unread body itself once the answer is sent, as it does for the webhook's shed.
      res.writeHead(404, FLOOR_HEADERS);
      res.end(FLOOR_BODY);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      let r: Req;
      try {
        r = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Req;
      } catch {
        send(res, 400, '{"message":"body: must be a JSON object"}');
        return;
      }
      const a = answer(r);
      if (!store) return send(res, 200, JSON.stringify(a));
      // Every request is stored, the ones the webhook would decline (6% of the mix) too, and as
      // received: for the mix's requests, the fields the webhook stores once parsed.
      const now = Date.now();
      const quote = {
        quoteId: String(r.quoteId),
        requestId: String(r.requestId),
        request: r,
        response: a,
        feeBps: r.feeBps ?? 0,
        ...(r.taker ? { taker: r.taker } : {}),
        permissioned: false,
        createdAtMs: now,
        expiresAtMs: now + STORE_TTL_MS,
      } as unknown as StoredQuote;
      store.put(quote).then(
        (stored) =>
          stored
            ? send(res, 200, JSON.stringify(a))
            : send(res, 404, '{"message":"no quote: quoteId claimed"}'),
        (e: Error) => send(res, 503, JSON.stringify({ message: `quote store: ${e.message}` })),
      );
    });
  });
  server.keepAliveTimeout = OPERATOR_KEEP_ALIVE_MS;
  server.listen(listenOn);
}
// Exit on SIGTERM rather than die of it, so that exit hooks run (a --cpu-prof profile is written then).
if (!(cluster.isPrimary && workers > 1)) process.on("SIGTERM", () => process.exit(0));
