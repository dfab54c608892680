/**
 * A webhook instance for pricing/ops tests: the operator's app (createApp) and the operations app
 * (createOpsApp, with the admin API mounted as compose.ts mounts it), each on its own real socket as
 * main.ts serves them, composed from the given pricing pieces. The swap handler is
 * an honest refusal: these tests never swap.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { TokenLists } from "../../inventory/token-lists.ts";
import { QuotingBook } from "../../pricing/book.ts";
import type { Controls } from "../../pricing/controls.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { createApp, createOpsApp } from "../../src/app.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { QuoteService } from "../../src/quote/service.ts";
import { MemoryQuoteStore } from "../../src/quote-store/memory.ts";
import { registerAdminRoutes } from "../../src/routes/admin.ts";
import type { SwapHandler } from "../../src/swap/handler.ts";

/** These tests never swap: any /swap is refused, honestly. */
const noSwaps: SwapHandler = {
  execute: async (req) => ({
    quoteId: req.quoteId,
    state: "rejected",
    rejectionReason: "swaps are off in this test",
  }),
};

/** Every configured token, split by its permissioned flag (the lists are not under test here). */
function configuredLists(config: Config): TokenLists {
  const open = config.file.tokens.filter((t) => !t.permissioned).map((t) => t.mint);
  const permissioned = config.file.tokens.filter((t) => t.permissioned).map((t) => t.mint);
  return { tokens: () => open, permissionedTokens: () => permissioned };
}

export interface Webhook {
  /** The operator's listener. */
  url: string;
  /** The operations listener (/admin, /metrics). */
  adminUrl: string;
  book: QuotingBook;
  close(): Promise<void>;
}

export async function startWebhook(parts: {
  config: Config;
  sources: ReadonlyMap<string, PriceSource>;
  controls: Controls;
  inventory: Inventory;
  maker: string;
  adminApiKey?: string;
}): Promise<Webhook> {
  const { config, sources, controls, inventory } = parts;
  const book = new QuotingBook(config, sources, { position: (mint) => inventory.position(mint), controls });
  const log = createLogger("silent");
  const metrics = new Metrics();
  const app = createApp({
    config,
    log,
    metrics,
    store: new MemoryQuoteStore(10_000),
    quotes: new QuoteService({ config, book, inventory, maker: parts.maker }),
    swap: noSwaps,
    tokenLists: configuredLists(config),
    probes: [],
  });
  const opsApp = createOpsApp({
    config,
    log,
    metrics,
    probes: [],
    adminRoutes: (root) =>
      registerAdminRoutes(root, {
        adminApiKey: parts.adminApiKey,
        controls,
        inventory,
        pairs: config.file.pairs.map((p) => `${p.base}/${p.quote}`),
      }),
  });
  const [operator, ops] = await Promise.all([serveOn(app), serveOn(opsApp)]);
  return {
    url: operator.url,
    adminUrl: ops.url,
    book,
    close: async () => {
      await operator.close();
      await ops.close();
    },
  };
}

async function serveOn(app: { fetch: Parameters<typeof serve>[0]["fetch"] }) {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** POST /quote as the operator sends it. */
export async function postQuote(
  url: string,
  q: { tokenIn: string; tokenOut: string; amount: bigint; quoteType?: "exactIn" | "exactOut" },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/quote`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-request-start": String(Date.now()),
      // Generous: these helpers want a quote, and a loaded test machine must not turn it into a 404.
      // The deadline itself is tested in test/http/deadline.test.ts and the fault suite.
      "x-request-timeout": "2000",
    },
    body: JSON.stringify({
      requestId: randomUUID(),
      quoteId: randomUUID(),
      tokenIn: q.tokenIn,
      tokenOut: q.tokenOut,
      amount: q.amount.toString(),
      quoteType: q.quoteType ?? "exactIn",
      protocol: "v1",
      feeBps: 0,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
