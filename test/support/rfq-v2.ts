/**
 * The RFQ v2 channel as the tests drive it: the stand-in's offer of a SOL/USDC bid; and the sandbox
 * stack with the channel on, started with a Redis of its own and one funded taker, the levels the
 * stand-in holds for a pair and what a bid walks through them.
 */
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import { type Stack, type StackOptions, startStack } from "../../sandbox/operator/stack.ts";
import { RfqV2StandIn, type StandInOptions } from "../../sandbox/rfq-v2/server.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { MINT } from "./config.ts";

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
    ...(o.land
      ? {
          land: async (tx) => {
            const r = await chain.send(tx);
            if (!r.ok) throw new Error(r.error);
            return r.signature;
          },
        }
      : {}),
  });
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
