/**
 * Starts the operator simulator on a socket: registry (with its 10-minute token refresh), fill-rate
 * tracker, order book, and the HTTP app. Used by main.ts, the sandbox, the demo and the tests.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { SmartAccountConfig } from "../fill/smart-account.ts";
import { createOperatorApp } from "./app.ts";
import type { BuildOptions, OperatorChain } from "./build-order.ts";
import type { ExecuteDeps } from "./execute.ts";
import { type FillRateOptions, FillRateTracker } from "./fill-rate.ts";
import { HttpClient } from "./http-client.ts";
import { DEFAULT_STABLE_MINTS, type OrderDeps } from "./order.ts";
import { OrderBook } from "./order-book.ts";
import { type SyncOutcome, type WebhookRegistration, WebhookRegistry } from "./webhooks.ts";

export interface OperatorServerOptions {
  chain: OperatorChain;
  webhooks?: WebhookRegistration[];
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  feeBps?: number;
  stableMints?: ReadonlySet<string>;
  suggestedPrioritizationFees?: number;
  tokenRefreshMs?: number;
  quoteTimeoutMs?: number;
  swapTimeoutMs?: number;
  apiKey?: string;
  now?: () => number;
  fillRate?: FillRateOptions;
  build?: Partial<BuildOptions>;
  onFanout?: OrderDeps["onFanout"];
  onOutcome?: ExecuteDeps["onOutcome"];
  /** Takers that are smart accounts: their orders carry the fill wrapped for them (order.ts). */
  smartAccounts?: readonly SmartAccountConfig[];
}

export interface OperatorServer {
  /** Tests only: set `tamper.build` to have orders carry a dishonest transaction (order.ts). */
  tamper: NonNullable<OrderDeps["tamper"]>;
  url: string;
  registry: WebhookRegistry;
  fillRate: FillRateTracker;
  orders: OrderBook;
  /** Outcome of the first token sync of each registered webhook. */
  firstSync: Map<string, SyncOutcome>;
  close(): Promise<void>;
}

export async function startOperator(opts: OperatorServerOptions): Promise<OperatorServer> {
  const now = opts.now ?? Date.now;
  const http = new HttpClient();
  const registry = new WebhookRegistry({ http, now, refreshIntervalMs: opts.tokenRefreshMs });
  const fillRate = new FillRateTracker({ now, ...opts.fillRate });
  const orders = new OrderBook(now);
  const tamper: NonNullable<OrderDeps["tamper"]> = {};
  for (const w of opts.webhooks ?? []) registry.register(w);
  const firstSync = await registry.start();

  const app = createOperatorApp({
    http,
    registry,
    fillRate,
    chain: opts.chain,
    orders,
    feeBps: opts.feeBps ?? 10,
    stableMints: opts.stableMints ?? DEFAULT_STABLE_MINTS,
    ...(opts.suggestedPrioritizationFees !== undefined
      ? { suggestedPrioritizationFees: opts.suggestedPrioritizationFees }
      : {}),
    ...(opts.quoteTimeoutMs !== undefined ? { quoteTimeoutMs: opts.quoteTimeoutMs } : {}),
    ...(opts.swapTimeoutMs !== undefined ? { swapTimeoutMs: opts.swapTimeoutMs } : {}),
    ...(opts.build ? { build: opts.build } : {}),
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.onFanout ? { onFanout: opts.onFanout } : {}),
    ...(opts.onOutcome ? { onOutcome: opts.onOutcome } : {}),
    tamper,
    ...(opts.smartAccounts
      ? { smartAccounts: new Map(opts.smartAccounts.map((sa) => [sa.vault.toBase58(), sa])) }
      : {}),
    now,
  });
  const host = opts.host ?? "127.0.0.1";
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? 0 }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    registry,
    fillRate,
    orders,
    firstSync,
    tamper,
    close: async () => {
      registry.stop();
      await new Promise<void>((r) => server.close(() => r()));
      http.close();
    },
  };
}
