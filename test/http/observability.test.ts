/**
 * What a maker's dashboard and log pipeline get: prom-client's process metrics, gauges for balances,
 * reservations, price age, the switches and the build, the RPC error counter, no empty label values;
 * and logs sized for 2,000 quotes/s: no line per quote at info (debug, or every LOG_QUOTE_SAMPLE-th at
 * info), one line per /swap at info.
 */
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { RpcChain } from "../../src/chain/rpc.ts";
import type { Service } from "../../src/compose.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { MINT } from "../support/config.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

const services: Service[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

async function service(opts: Parameters<typeof testService>[0] = {}): Promise<Service> {
  const s = await testService(opts);
  services.push(s);
  return s;
}

const scrape = async (s: Service) => (await s.opsApp.request("/metrics")).text();

/** The value of one series in a Prometheus text exposition. */
function series(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** A pino destination keeping the lines. */
function captured(): { stream: Writable; lines: () => Record<string, unknown>[]; bytes: () => number } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const all = () => chunks.join("");
  return {
    stream,
    lines: () =>
      all()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    bytes: () => Buffer.byteLength(all()),
  };
}

describe("GET /metrics (operations listener)", () => {
  it("exports prom-client's process metrics and the build info", async () => {
    const s = await service({ metrics: new Metrics({ defaultMetrics: true }) });
    const text = await scrape(s);
    for (const name of [
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_p99_seconds",
    ]) {
      expect(text).toContain(`\n${name} `);
    }
    expect(text).toMatch(/nodejs_gc_duration_seconds/);
    expect(text).toMatch(
      /rfq_build_info\{version="0\.1\.0",git_sha="(?:[0-9a-f]{12}|unknown)",node_version="v\d+\.\d+\.\d+"\} 1/,
    );
  });

  it("exports balances and reservations by token, SOL, price age by pair and the switches", async () => {
    const s = await service();
    const text = await scrape(s);
    const usdc = s.inventory.snapshot().holdings.find((h) => h.symbol === "USDC")!;
    expect(usdc.balance).toBeGreaterThan(0n);
    expect(series(text, "rfq_inventory_balance_units", `symbol="USDC",mint="${MINT.USDC}"`)).toBe(
      Number(usdc.balance),
    );
    expect(series(text, "rfq_inventory_reserved_units", `symbol="USDC",mint="${MINT.USDC}"`)).toBe(0);
    expect(series(text, "rfq_maker_sol_lamports")).toBe(Number(s.inventory.snapshot().lamports));
    expect(series(text, "rfq_inventory_balance_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(series(text, "rfq_price_age_seconds", 'pair="SOL/USDC",source="static"')).toBeGreaterThanOrEqual(
      0,
    );
    expect(series(text, "rfq_paused")).toBe(0);
    expect(series(text, "rfq_controls_known")).toBe(1);

    await s.inventory.reserve({
      quoteId: "gauge-test",
      mint: MINT.USDC,
      amount: 1_000_000n,
      expiresAtMs: Date.now() + 60_000,
    });
    await s.controls.pause("gauge test");
    await s.controls.setPair("SOL/USDC", false);
    const after = await scrape(s);
    expect(series(after, "rfq_inventory_reserved_units", `symbol="USDC",mint="${MINT.USDC}"`)).toBe(
      1_000_000,
    );
    expect(series(after, "rfq_paused")).toBe(1);
    expect(series(after, "rfq_pair_switched_off", 'pair="SOL/USDC"')).toBe(1);
  });

  it("exports the floors the alerts compare with: each token's minInventory, minSolLamports, each pair's price max age", async () => {
    const s = await service({
      vary: (f) => ({
        ...f,
        tokens: f.tokens.map((t) => (t.symbol === "JUP" ? { ...t, minInventory: "7000000" } : t)),
        inventory: { ...f.inventory, minSolLamports: "123000000" },
      }),
    });
    const text = await scrape(s);
    expect(series(text, "rfq_inventory_floor_units", `symbol="JUP",mint="${MINT.JUP}"`)).toBe(7_000_000);
    expect(series(text, "rfq_inventory_floor_units", `symbol="USDC",mint="${MINT.USDC}"`)).toBe(0);
    expect(series(text, "rfq_maker_sol_floor_lamports")).toBe(123_000_000);
    // Static prices never go stale.
    expect(text).toContain('rfq_price_max_age_seconds{pair="SOL/USDC",source="static"} +Inf\n');
    // The in-process local chain has no RPC: no rfq_rpc_up sample, so no "RPC down" alert.
    expect(text).not.toContain("rfq_rpc_up");
  });

  it("sets rfq_rpc_up to 1 after a JSON-RPC call that answered and 0 after one that failed", async () => {
    const metrics = new Metrics();
    metrics.watchRpc();
    const local = LocalChain.create();
    const rpc = await startRpcServer(local, { port: 0 });
    const report = {
      onError: (method: string) => metrics.rpcCall(method, false),
      onOk: (method: string) => metrics.rpcCall(method, true),
    };
    const up = new RpcChain({ urls: [rpc.url], timeoutMs: 5_000, ...report });
    const down = new RpcChain({ urls: ["http://127.0.0.1:9"], timeoutMs: 1_000, ...report });
    try {
      await up.getLatestBlockhash();
      expect(series(await metrics.registry.metrics(), "rfq_rpc_up")).toBe(1);
      await expect(down.getLatestBlockhash()).rejects.toThrow(/getLatestBlockhash/);
      expect(series(await metrics.registry.metrics(), "rfq_rpc_up")).toBe(0);
      await up.getBlockHeight();
      expect(series(await metrics.registry.metrics(), "rfq_rpc_up")).toBe(1);
    } finally {
      await up.close();
      await down.close();
      await rpc.close();
    }
    expect(
      series(await metrics.registry.metrics(), "rfq_rpc_errors_total", 'method="getLatestBlockhash"'),
    ).toBe(1);
  });

  it("counts failed JSON-RPC calls by method", async () => {
    const metrics = new Metrics();
    // Port 9 (discard) on loopback: nothing listens, every call fails.
    const chain = new RpcChain({
      urls: ["http://127.0.0.1:9"],
      timeoutMs: 1_000,
      onError: (method) => metrics.rpcCall(method, false),
    });
    try {
      await expect(chain.getLatestBlockhash()).rejects.toThrow(/getLatestBlockhash/);
      await expect(chain.getUnixTimestamp()).rejects.toThrow();
      expect(await chain.ping()).toBe(false);
    } finally {
      await chain.close();
    }
    const text = await metrics.registry.metrics();
    expect(series(text, "rfq_rpc_errors_total", 'method="getLatestBlockhash"')).toBe(1);
    expect(series(text, "rfq_rpc_errors_total", 'method="getAccountInfo(clock)"')).toBe(1);
    expect(series(text, "rfq_rpc_errors_total", 'method="getSlot"')).toBe(1);
  });

  it("has no empty label value after quotes, declines and swaps (swaps without a reason count as none)", async () => {
    const s = await service();
    await s.app.request("/quote", jsonPost(quoteBody()));
    await s.app.request("/quote", jsonPost(quoteBody({ tokenIn: MINT.SOL, tokenOut: MINT.SOL })));
    await s.app.request("/quote", jsonPost(quoteBody({ amount: "1" })));
    const swap = await s.app.request(
      "/swap",
      jsonPost({
        requestId: "r-unknown",
        quoteId: "q-unknown",
        transaction: Buffer.from("x").toString("base64"),
      }),
    );
    expect(((await swap.json()) as { state: unknown }).state).toBe("rejected");
    await s.app.request("/nowhere");
    const text = await scrape(s);
    expect(series(text, "rfq_swaps_total", 'state="rejected",reason="none"')).toBe(1);
    expect(text).not.toMatch(/=""/);
  });
});

describe("logs", () => {
  it("writes no line per quote at info, one per /swap, and every quote at debug", async () => {
    const info = captured();
    const s = await service({ log: createLogger("info", info.stream) });
    for (let i = 0; i < 20; i++)
      expect((await s.app.request("/quote", jsonPost(quoteBody()))).status).toBe(200);
    await s.app.request("/quote", jsonPost(quoteBody({ tokenIn: MINT.USDT, tokenOut: MINT.USDT })));
    await s.app.request(
      "/swap",
      jsonPost({ requestId: "r-1", quoteId: "q-1", transaction: Buffer.from("x").toString("base64") }),
    );
    const lines = info.lines();
    expect(lines.filter((l) => l.msg === "quoted" || l.msg === "no quote")).toEqual([]);
    expect(lines.filter((l) => l.msg === "swap answered")).toEqual([
      expect.objectContaining({ level: 30, requestId: "r-1", quoteId: "q-1", state: "rejected" }),
    ]);

    const debug = captured();
    const d = await service({ log: createLogger("debug", debug.stream) });
    for (let i = 0; i < 5; i++) await d.app.request("/quote", jsonPost(quoteBody()));
    const quoted = debug.lines().filter((l) => l.msg === "quoted");
    expect(quoted).toHaveLength(5);
    expect(quoted[0]).toMatchObject({
      level: 20,
      requestId: expect.any(String),
      quoteId: expect.any(String),
    });
  });

  it("with LOG_QUOTE_SAMPLE=5 logs every fifth quote at info", async () => {
    const info = captured();
    const s = await service({ env: { LOG_QUOTE_SAMPLE: "5" }, log: createLogger("info", info.stream) });
    for (let i = 0; i < 20; i++) await s.app.request("/quote", jsonPost(quoteBody()));
    const quoted = info.lines().filter((l) => l.msg === "quoted");
    expect(quoted).toHaveLength(4);
    expect(quoted.every((l) => l.level === 30)).toBe(true);
  });
});
