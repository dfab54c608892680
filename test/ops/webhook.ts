/**
 * A webhook instance for pricing/ops tests, composed by the composition root (src/compose.ts) exactly
 * as `npm start` composes it, with the test's own started pricing pieces passed in (price sources,
 * controls, inventory: shared with another instance or driven by the test). The operator's app and
 * the operations app (admin API) each listen on their own real socket, as main.ts serves them.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Keypair } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { QuotingBook } from "../../pricing/book.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { Chain } from "../../src/chain/interface.ts";
import { composeService } from "../../src/compose.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";

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
  chain: Chain;
  sources: ReadonlyMap<string, PriceSource>;
  controls: Controls;
  inventory: Inventory;
  maker: Keypair;
  adminApiKey?: string;
}): Promise<Webhook> {
  const config: Config = parts.adminApiKey
    ? { ...parts.config, env: { ...parts.config.env, ADMIN_API_KEY: parts.adminApiKey } }
    : parts.config;
  const service = await composeService(config, {
    log: createLogger("silent"),
    chain: parts.chain,
    signer: new KeypairSigner(parts.maker),
    priceSources: parts.sources,
    controls: parts.controls,
    inventory: parts.inventory,
  });
  const [operator, ops] = await Promise.all([serveOn(service.app), serveOn(service.opsApp)]);
  return {
    url: operator.url,
    adminUrl: ops.url,
    book: service.book,
    close: async () => {
      await operator.close();
      await ops.close();
      await service.close();
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
      // The deadline's own rules are pinned in test/http/deadline.test.ts; here a budget (the most the
      // webhook honours) that no loaded test machine misses, so no test depends on wall-clock speed.
      "x-request-timeout": "10000",
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
