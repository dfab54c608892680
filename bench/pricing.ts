/**
 * Pricing benchmark (`npm run bench:pricing`), figures reported, not asserted:
 *
 * 1. QuotingBook.price() then Inventory.check(), in-process, with everything on: inventory (cover, SOL for fees, exposure on
 *    both legs), inventory skew, USD notional cap, pause and pair switches. Per-call latency.
 * 2. A price update from the maker's engine through Redis to two instances: publish -> every
 *    instance's in-memory price (pub/sub), and the fallback when the message is lost (poll).
 * 3. The kill switch: pause on one instance -> the other instance refuses quotes.
 *
 *   tsx scripts/with-redis.ts tsx bench/pricing.ts [--calls 200000] [--updates 200]
 */
import { Redis } from "ioredis";
import type { FileConfig } from "../config/schema.ts";
import { MemoryInventory } from "../inventory/memory.ts";
import { type QuoteAsk, QuotingBook } from "../pricing/book.ts";
import { MemoryControls } from "../pricing/controls/memory.ts";
import { RedisControls } from "../pricing/controls/redis.ts";
import { publishPrice, RedisPriceSource } from "../pricing/redis.ts";
import { parseArgs } from "../src/cli/args.ts";
import { makeWorld, withToken } from "../test/inventory/support.ts";
import { MINT } from "../test/support/config.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:pricing",
  summary:
    "Pricing benchmark (Redis from scripts/with-redis.ts): QuotingBook.price() with every check on, a\n" +
    "price update through Redis to two instances (pub/sub and the poll fallback), and the kill switch\n" +
    "across instances. Figures are printed, not asserted.",
  flags: {
    calls: { type: "string", value: "N", default: "200000", description: "price() calls measured" },
    updates: { type: "string", value: "N", default: "200", description: "price updates measured" },
  },
});
const CALLS = Number(args.calls);
const UPDATES = Number(args.updates);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const fmt = (xs: number[], unit: string, scale = 1) =>
  `p50 ${(pct(xs, 50) * scale).toFixed(3)} ${unit}, p99 ${(pct(xs, 99) * scale).toFixed(3)} ${unit}, max ${(xs.reduce((m, x) => Math.max(m, x), 0) * scale).toFixed(3)} ${unit} (n=${xs.length})`;

async function bookCost(): Promise<void> {
  const everything = (f: FileConfig): FileConfig =>
    withToken("SOL", { targetInventory: "10000000000000", maxExposureUsd: "5000000" })(
      withToken("USDC", { targetInventory: "10000000000000", maxExposureUsd: "5000000" })({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "SOL" && p.quote === "USDC"
            ? { ...p, maxNotionalUsd: "100000", skew: { maxBps: 10, fullAtBase: "100000000000" } }
            : p,
        ),
      }),
    );
  const w = makeWorld(everything);
  w.clock.t = Date.now();
  const inventory = new MemoryInventory({ ...w.options(), now: Date.now });
  await inventory.start();
  const book = new QuotingBook(w.config, w.sources, {
    position: (mint) => inventory.position(mint),
    controls: new MemoryControls(),
    usd: w.usd,
  });
  // What the quote service asks per quote: the book, then the inventory for what the book priced.
  const price = (ask: QuoteAsk) => {
    const q = book.price(ask);
    if (!q.ok) return q;
    const cover = inventory.check({
      outMint: ask.tokenOut,
      outAmount: q.amountOut,
      inMint: ask.tokenIn,
      inAmount: q.amountIn,
    });
    return cover.ok ? q : cover;
  };
  const asks = [
    { tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: 1_234_567_890n, quoteType: "exactIn" as const },
    { tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount: 250_000_000n, quoteType: "exactIn" as const },
    { tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount: 3_000_000_000n, quoteType: "exactOut" as const },
    { tokenIn: MINT.JUP, tokenOut: MINT.SOL, amount: 77_000_000n, quoteType: "exactIn" as const },
  ];
  for (let i = 0; i < 20_000; i++) price(asks[i % asks.length]!); // warm up the JIT
  const times: number[] = [];
  let ok = 0;
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const s = performance.now();
    const q = price(asks[i % asks.length]!);
    times.push(performance.now() - s);
    if (q.ok) ok++;
  }
  const total = performance.now() - t0;
  console.log(`1. QuotingBook.price(), all checks on: ${fmt(times, "µs", 1000)}`);
  console.log(
    `   ${Math.round(CALLS / (total / 1000)).toLocaleString()} calls/s on one core; ${ok}/${CALLS} priced`,
  );
  await inventory.close();
}

async function propagation(url: string): Promise<void> {
  const prefix = `bench:${process.pid}:`;
  const names = { keyPrefix: `${prefix}price:`, channel: `${prefix}prices` };
  const pub = new Redis(url);
  const conns = [new Redis(url), new Redis(url)];
  const instances = conns.map(
    (c) => new RedisPriceSource("engine", c, ["SOL/USDC"], { ...names, pollMs: 500 }),
  );
  for (const s of instances) await s.start();

  /** When each instance sees the update stamped `ts` (performance.now() at arrival). */
  const arrivals = (ts: number) =>
    instances.map(
      (s) =>
        new Promise<number>((resolve) => {
          const off = s.onUpdate((_p, point) => {
            if (point.updatedAtMs === ts) {
              off();
              resolve(performance.now());
            }
          });
        }),
    );

  const viaPubSub: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const ts = Date.now() * 1000 + i; // unique, increasing
    const arrived = arrivals(ts);
    const start = performance.now();
    await publishPrice(pub, "SOL/USDC", { ts, mid: `180.${String(i % 100).padStart(2, "0")}` }, names);
    for (const t of await Promise.all(arrived)) viaPubSub.push(t - start);
    await new Promise((r) => setTimeout(r, 20));
  }
  console.log(`2. price update -> both instances' memory (pub/sub): ${fmt(viaPubSub, "ms")}`);

  const viaPoll: number[] = [];
  for (let i = 0; i < 20; i++) {
    const ts = Date.now() * 1000 + UPDATES + i;
    const arrived = arrivals(ts);
    const start = performance.now();
    await pub.set(`${names.keyPrefix}SOL/USDC`, JSON.stringify({ ts, mid: "181.00" })); // message "lost"
    for (const t of await Promise.all(arrived)) viaPoll.push(t - start);
  }
  console.log(`   same, message lost (poll every 500 ms):       ${fmt(viaPoll, "ms")}`);
  for (const s of instances) await s.close();

  const ctl = `${prefix}ctl:`;
  const ctlConns = [new Redis(url), new Redis(url)];
  const [a, b] = ctlConns.map((c) => new RedisControls(c, { prefix: ctl, pollMs: 500 }));
  await a!.start();
  await b!.start();
  const pause: number[] = [];
  for (let i = 0; i < 50; i++) {
    const paused = i % 2 === 0;
    const seen = new Promise<number>((resolve) => {
      const off = b!.onChange((s) => {
        if (s.paused === paused) {
          off();
          resolve(performance.now());
        }
      });
    });
    const start = performance.now();
    await (paused ? a!.pause("bench") : a!.resume());
    pause.push((await seen) - start);
  }
  console.log(`3. pause/resume on one instance -> the other obeys:  ${fmt(pause, "ms")}`);
  await a!.close();
  await b!.close();
  const keys = await pub.keys(`${prefix}*`);
  if (keys.length) await pub.del(...keys);
  for (const c of [pub, ...conns, ...ctlConns]) c.disconnect();
}

await bookCost();
const url = process.env.REDIS_URL;
if (url) await propagation(url);
else console.log("REDIS_URL unset: run through scripts/with-redis.ts for the propagation figures");
process.exit(0);
