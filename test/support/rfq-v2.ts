/**
 * The RFQ v2 channel as the tests drive it: in this process (the channel started against the stand-in
 * of the operator's service, as src/wiring composes it), the stand-in's offer of a SOL/USDC bid; and
 * the sandbox stack with the channel on, started with a Redis of its own and one funded taker, the
 * levels the stand-in holds for a pair and what a bid walks through them.
 */
import { Registry } from "prom-client";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import { QuotingBook } from "../../pricing/book.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { type Stack, type StackOptions, startStack } from "../../sandbox/operator/stack.ts";
import { RfqV2StandIn, type StandInOptions } from "../../sandbox/rfq-v2/server.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { createLogger, type Logger } from "../../src/observability/logger.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { MemoryQuoteStore } from "../../src/quote-store/memory.ts";
import { rfqV2Metrics } from "../../src/rfq-v2/metrics.ts";
import { RfqV2Service, type RfqV2ServiceDeps } from "../../src/rfq-v2/service.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import type { Signer } from "../../src/signing/port.ts";
import type { World } from "../inventory/support.ts";
import type { Cleanup } from "./cleanups.ts";
import { MINT } from "./config.ts";

/** Waits until `cond` holds (polled every 20 ms); after `ms` fails naming `what`. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The maker's RFQ v2 channel in this process, connected to the stand-in at `url` as `makerId`: a
 * started in-memory inventory over the world's chain, the quoting book over `sources` (the world's by
 * default) with switches of its own that the channel also follows, a registry of its own, the maker's
 * keypair (or `signer`), an in-memory message binding (or `messages`), `deps` for the rest, and a
 * reconnect backoff of 50-200 ms. What it starts is pushed onto `closers`. Resolves once the channel
 * is connected, or at once with `connect: false` (`started` is its connection).
 */
export async function startV2Channel(o: {
  w: World;
  url: string;
  makerId: string;
  token: string;
  closers: Cleanup[];
  sources?: ReadonlyMap<string, PriceSource>;
  signer?: Signer;
  messages?: RfqV2ServiceDeps["messages"];
  log?: Logger;
  deps?: Partial<Pick<RfqV2ServiceDeps, "takers" | "issuance" | "ledger" | "fillPath">>;
  connect?: boolean;
}) {
  const { w, closers } = o;
  const inventory = new MemoryInventory({ ...w.options(), now: Date.now });
  await inventory.start();
  closers.push(() => inventory.close());
  const controls = new MemoryControls();
  const registry = new Registry();
  const metrics = rfqV2Metrics(registry);
  const service = new RfqV2Service({
    config: w.config,
    chain: w.chain,
    settings: { url: o.url, makerId: o.makerId, authToken: o.token },
    book: new QuotingBook(w.config, o.sources ?? w.sources, { controls }),
    inventory,
    signer: o.signer ?? new KeypairSigner(w.maker),
    log: o.log ?? createLogger("silent"),
    metrics,
    messages: o.messages ?? new MemoryQuoteStore(),
    client: { backoff: { initialMs: 50, maxMs: 200 } },
    controls,
    ...o.deps,
  });
  closers.push(() => service.close());
  const started = service.start();
  if (o.connect !== false) await started;
  return { inventory, controls, registry, metrics, service, started };
}

/** How many swaps the channel counted with `outcome` (rfq_v2_swaps_total) in `registry`. */
export async function swapsWith(registry: Registry, outcome: string): Promise<number> {
  return (
    (await registry.getSingleMetric("rfq_v2_swaps_total")!.get()).values.find(
      (v) => v.labels.outcome === outcome,
    )?.value ?? 0
  );
}

/** The stack with RFQ v2 on, a Redis of its own and taker "t" funded with 20 SOL and 5,000 USDC. */
export function startRfqV2Stack(dir: string, opts: Partial<StackOptions> = {}): Promise<Stack> {
  return startStack({
    dir,
    rfqV2: true,
    // A Redis of its own: the pair switches live in Redis, and tests sharing REDIS_URL flip them.
    ownRedis: true,
    takers: [{ name: "t", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n } }],
    ...opts,
  });
}

/** The live level set the stand-in holds for base/quote, waited for up to 20 s. */
export async function liveLevels(stack: Stack, base: string, quote: string) {
  const v2 = stack.rfqV2!;
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    const live = v2.standIn.liveSet(v2.makerId, base, quote);
    if (live) return live;
    await new Promise((r) => setTimeout(r, 100));
  }
  // What the stand-in answered, and the webhook's log names why a pair is not streamed.
  throw new Error(
    `no levels for ${base}/${quote}; answers: ${JSON.stringify(v2.standIn.updates.slice(-12))}; see ${stack.dir}/webhook.log`,
  );
}

/** What a bid of `inAmount` quote units walks through the ask levels of `live` (9-decimal base). */
export function bidWalk(live: Awaited<ReturnType<typeof liveLevels>>, inAmount: bigint) {
  const lot = BigInt(live.quote.lot_size_base);
  const asks = live.quote.ask_levels.map((l) => ({
    perLot: (BigInt(l.price) * lot) / 10n ** 9n,
    lots: BigInt(l.volume) / lot,
  }));
  return sweep("bid", inAmount, asks, lot);
}

/**
 * The stand-in of the operator's RFQ v2 service for one maker over a local chain: the swaps' recent
 * blockhash read from that chain and, with `land`, each signed swap sent to it (a failed send throws,
 * which the stand-in reports as the swap's ERROR).
 */
export function standInOver(
  chain: LocalChain,
  o: { makerId: string; token: string; land: boolean; tables?: StandInOptions["tables"] },
): RfqV2StandIn {
  return new RfqV2StandIn({
    makers: [{ makerId: o.makerId, token: o.token }],
    heartbeatMs: 60_000,
    recentBlockhash: async () => (await chain.getLatestBlockhash()).blockhash,
    ...(o.tables ? { tables: o.tables } : {}),
    ...(o.land ? { land: landOn(chain) } : {}),
  });
}

/**
 * How the stand-in lands a signed swap on a local chain: sent (a refused send throws) and, with
 * `confirmed`, also failed when it did not confirm there.
 */
export function landOn(
  chain: LocalChain,
  o: { confirmed?: boolean } = {},
): NonNullable<StandInOptions["land"]> {
  return async (tx) => {
    const r = await chain.send(tx);
    if (!r.ok) throw new Error(r.error);
    if (o.confirmed) {
      const status = await chain.getSignatureStatus(r.signature);
      if (status.state !== "confirmed")
        throw new Error(`landed ${status.state}: ${"error" in status ? status.error : ""}`);
    }
    return r.signature;
  };
}

type Offer = Parameters<RfqV2StandIn["offerSwap"]>[0];

/** What the stand-in offers for a taker's SOL/USDC bid of `inAmount` USDC units (9-decimal SOL, SPL Token). */
export const solUsdcBid = (
  o: Pick<Offer, "makerId" | "taker" | "inAmount"> & Partial<Pick<Offer, "timeoutMs" | "tamper">>,
): Offer => ({
  baseMint: MINT.SOL,
  quoteMint: MINT.USDC,
  baseTokenProgram: TOKEN_PROGRAM,
  quoteTokenProgram: TOKEN_PROGRAM,
  baseDecimals: 9,
  takerSide: "bid",
  ...o,
});

/** The stand-in offers the stack's first taker a SOL/USDC bid of `BID_IN`, as the operator would. */
export const offerSolUsdcBid = (stack: Stack, extra: Partial<Pick<Offer, "timeoutMs" | "tamper">>) =>
  stack.rfqV2!.standIn.offerSwap(
    solUsdcBid({
      makerId: stack.rfqV2!.makerId,
      taker: stack.takers[0]!.keypair,
      inAmount: BID_IN,
      ...extra,
    }),
  );

/** The bid's size: 10 USDC (6 decimals). */
export const BID_IN = 10_000_000n;
