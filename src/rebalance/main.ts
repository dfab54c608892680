/**
 * `npm run rebalance -- [--dry-run] [--loop]`: keeps the maker's inventory inside its configured bands
 * (`rebalance.targets`) by trading through the operator's own swap API as a taker.
 *
 * One pass by default; `--loop` repeats it every `rebalance.intervalMs`. The loop is its own process,
 * not part of the webhook: the webhook scales to N instances behind a load balancer, and a loop in
 * each would see the same shortfall and trade it N times; here exactly one process trades, its
 * simulations and signing stay off the quote path's event loop, and it can be stopped or restarted
 * without touching quoting. It shares the inventory reservations (and its own cooldowns and daily
 * notional) with the webhooks through Redis (REDIS_URL), so quotes never promise what it is selling.
 * Configured like `npm start` (environment and CONFIG).
 */
import { loadConfig, loadDotEnv, redisKeys } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import { RedisInventory } from "../../inventory/redis.ts";
import { startPriceSources } from "../../pricing/sources.ts";
import { UsdValuer } from "../../pricing/usd.ts";
import { parseArgs } from "../cli/args.ts";
import { runMain } from "../cli/run.ts";
import { RedisFillJournal } from "../journal/redis.ts";
import { createLogger } from "../observability/logger.ts";
import { makeOperatorSwapApi } from "../operator-api/http.ts";
import { opsContext } from "../ops/context.ts";
import { RebalanceMetrics, serveMetrics } from "./metrics.ts";
import { type PassReport, Rebalancer } from "./rebalancer.ts";
import { MemoryRebalanceState, type RebalanceState, RedisRebalanceState } from "./state.ts";

const USAGE = {
  command: "npm run rebalance",
  summary:
    "Brings every token with a rebalance target (config rebalance.targets) back inside its band by\n" +
    "trading through the operator's swap API (OPERATOR_API_URL, OPERATOR_API_KEY) with the maker's own\n" +
    "wallet as taker. Each order is checked against the maker's mids and limits, its transaction\n" +
    "decoded and checked against its router's allowlist, then simulated, and refused unsigned if it\n" +
    "does more than the order says. One pass unless --loop.",
  flags: {
    "dry-run": {
      type: "boolean",
      description:
        "print what it would trade and why, and the price the operator offers this maker as taker (or\n" +
        "that no one offered one); change nothing",
    },
    loop: { type: "boolean", description: "repeat the pass every rebalance.intervalMs until SIGINT/SIGTERM" },
    "metrics-port": {
      type: "string",
      value: "PORT",
      description: "with --loop: serve Prometheus metrics at http://127.0.0.1:PORT/metrics",
    },
  },
  notes:
    "Without REDIS_URL (the paper setup) it sees a freshly seeded local chain and keeps its limits in\n" +
    "memory: point RPC_URL and REDIS_URL at the deployment the webhooks use.",
} as const;

/** The pass as lines for a person. */
function formatPass(report: PassReport, dryRun: boolean): string {
  const lines: string[] = [];
  for (const s of report.plan.skipped) lines.push(`${s.symbol}: no trade: ${s.why}`);
  for (const t of report.trades) {
    lines.push(`${t.trade.symbol}: ${dryRun ? "would trade" : t.outcome}: ${t.trade.why}`);
    lines.push(
      `  ${t.detail}${t.slippageBps !== undefined ? ` (${t.slippageBps} bps from the maker's mid)` : ""}`,
    );
    if (t.signature) lines.push(`  signature ${t.signature}`);
  }
  if (!report.plan.skipped.length && !report.trades.length) lines.push("no rebalance targets configured");
  if (dryRun) lines.push("dry run: nothing reserved, signed or sent.");
  return `${lines.join("\n")}\n`;
}

async function main(): Promise<number> {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const dryRun = values["dry-run"];
  loadDotEnv();
  const config = loadConfig(process.env, { hazards: "report" });
  const log = createLogger(config.env.LOG_LEVEL);
  const ctx = await opsContext(config);
  const usd = new UsdValuer(config, ctx.sources);
  const inventoryOpts = { config, chain: ctx.chain, maker: ctx.signer.publicKey, usd, log };
  const inventory: Inventory = ctx.redis
    ? new RedisInventory(ctx.redis, inventoryOpts, redisKeys(config.file).inventory)
    : new MemoryInventory(inventoryOpts);
  try {
    await ctx.redis?.connect();
    await startPriceSources(ctx.sources);
    await inventory.start();
    const r = config.file.rebalance;
    const api = makeOperatorSwapApi(config.env, {
      orderTimeoutMs: r.orderTimeoutMs,
      executeTimeoutMs: r.executeTimeoutMs,
    });
    const state: RebalanceState = ctx.redis
      ? new RedisRebalanceState(ctx.redis, `${config.file.redisPrefix}rebal:`)
      : new MemoryRebalanceState();
    const metrics = new RebalanceMetrics();
    // The webhooks' fill journal: which of their reservations' fills have landed (one count of holdings).
    const fills = ctx.redis ? new RedisFillJournal(ctx.redis, redisKeys(config.file).swap) : undefined;
    const rebalancer = new Rebalancer({
      ...(fills ? { fills } : {}),
      metrics,
      config,
      chain: ctx.chain,
      signer: ctx.signer,
      inventory,
      usd,
      ...(api ? { api } : {}),
      state,
      log,
    });
    process.stdout.write(
      `rebalance: ${config.configPath}, maker ${ctx.signer.publicKey.toBase58()}, chain ${ctx.chainNote}\n`,
    );
    if (!values.loop) {
      const report = await rebalancer.runPass({ dryRun });
      process.stdout.write(formatPass(report, dryRun));
      return report.trades.every((t) => t.outcome === "landed" || t.outcome === "dryRun") ? 0 : 1;
    }
    const port = values["metrics-port"];
    if (port !== undefined && !/^\d{1,5}$/.test(port)) {
      process.stderr.write(`npm run rebalance: --metrics-port: not a port number: ${port}\n`);
      return 64;
    }
    const served = port !== undefined ? await serveMetrics(metrics, Number(port)) : undefined;
    if (served) process.stdout.write(`metrics at ${served.url}\n`);
    let stop = false;
    let wake: () => void = () => {};
    const onSignal = () => {
      stop = true;
      wake();
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    while (!stop) {
      const report = await rebalancer.runPass({ dryRun }).catch((e: unknown) => {
        log.error({ err: e }, "rebalance pass failed");
        return undefined;
      });
      if (report) process.stdout.write(formatPass(report, dryRun));
      await new Promise<void>((res) => {
        wake = res;
        setTimeout(res, r.intervalMs);
      });
    }
    served?.server.close();
    return 0;
  } finally {
    await inventory.close();
    await ctx.close();
  }
}

runMain(main);
