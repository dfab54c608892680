/**
 * The rebalancer's metrics (its own registry: it runs as its own process). `npm run rebalance --
 * --loop --metrics-port N` serves them at http://127.0.0.1:N/metrics for Prometheus.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Histogram, Registry } from "prom-client";

export class RebalanceMetrics {
  readonly registry = new Registry();

  /** Every planned trade's outcome: landed, failedOnChain, expired, retrySafe, notRetrySafe, refused, noOrder. */
  readonly rebalances = new Counter({
    name: "rfq_rebalances_total",
    help: "Rebalancing trades by token and outcome",
    labelNames: ["symbol", "outcome"] as const,
    registers: [this.registry],
  });

  /** Trades refused before signing, by the refusal's code (order, shape, inventory, proof, signer). */
  readonly refusals = new Counter({
    name: "rfq_rebalance_refusals_total",
    help: "Rebalancing trades refused before signing, by token and refusal code",
    labelNames: ["symbol", "code"] as const,
    registers: [this.registry],
  });

  /** The price of landed rebalances against the maker's own mid, bps (positive: worse than mid). */
  readonly slippage = new Histogram({
    name: "rfq_rebalance_slippage_bps",
    help: "Landed rebalances: price against the maker's mid, bps (fees included)",
    labelNames: ["symbol"] as const,
    buckets: [-10, 0, 5, 10, 25, 50, 100, 200, 500],
    registers: [this.registry],
  });

  /** USD (at the maker's mids) moved by landed rebalances. */
  readonly notionalUsd = new Counter({
    name: "rfq_rebalance_notional_usd_total",
    help: "USD at the maker's mids paid by landed rebalances",
    labelNames: ["symbol"] as const,
    registers: [this.registry],
  });
}

/** Serves `GET /metrics` on 127.0.0.1:`port` (0: any free port); resolves with the server and its URL. */
export async function serveMetrics(
  metrics: RebalanceMetrics,
  port: number,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(body),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics` };
}
