/**
 * The sweep's baselines (`npm run loadtest -- --sweep`): a bare server answering the quote request's
 * shape with none of the webhook's work (auth, validation, pricing, store), on the same number of
 * workers (node:cluster) as the webhook it is compared with.
 *
 *   --kind http   node:http alone: read the body, JSON.parse, answer a quote-shaped JSON echoing ids
 *   --kind hono   a bare Hono app on @hono/node-server reading the body with `c.req.json()`
 *
 *   tsx sandbox/loadtest/bare.ts --kind http --port 8099 --workers 2
 */
import cluster from "node:cluster";
import { createServer, type Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { parseArgs } from "../../src/cli/args.ts";
import { OPERATOR_KEEP_ALIVE_MS } from "../../src/http/listener.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "tsx sandbox/loadtest/bare.ts",
  summary: "A bare server answering POST .../quote with a quote-shaped JSON (the sweep's baseline).",
  flags: {
    kind: {
      type: "string",
      value: "http|hono",
      default: "http",
      description: "node:http or a bare Hono app",
    },
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
}

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

const port = Number(args.port);
const workers = Math.max(1, Number(args.workers));

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
  const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }) as Server;
  // The webhook's own keep-alive: with Node's default 5 s, a connection the generator left idle
  // between two steps was closed as it was reused, and the step failed on that, not on capacity.
  server.keepAliveTimeout = OPERATOR_KEEP_ALIVE_MS;
} else {
  const server = createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      let body: string;
      try {
        body = JSON.stringify(answer(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Req));
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"message":"body: must be a JSON object"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = OPERATOR_KEEP_ALIVE_MS;
  server.listen(port, "127.0.0.1");
}
