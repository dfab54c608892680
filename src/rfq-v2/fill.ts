/**
 * An RFQ v2 swap as the operator offers it (SWAP_AVAILABLE): decoded, then judged against the levels
 * the maker streamed. Signed only when it is the aggregator's `route_v2` with exactly one step, an RFQ
 * v2 leg (tag 120), for a pair the maker streams, whose lot and levels are a streamed set still valid
 * (each level no better for the taker than the streamed one, no more lots), whose amounts follow from
 * the program's walk of those levels, and whose maker key and token accounts appear nowhere but the
 * leg's own slots. Routes with other legs are refused: their payloads cannot be read here, so the
 * maker's accounts could hide in them. The keys are the message's resolved list (lookup.ts): an
 * account loaded from a lookup table is judged exactly as a static one.
 *
 * The layouts are in src/program/rfq-v2.ts.
 */
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { type PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { TokenConfig } from "../../config/schema.ts";
import {
  AGGREGATOR_EVENT_AUTHORITY,
  AGGREGATOR_PROGRAM,
  decodeRouteV2,
  INSTRUCTIONS_SYSVAR,
  RFQ_LEG_ACCOUNTS,
  RFQ_V2_PROGRAM,
  ROUTE_FIXED_ACCOUNTS,
  ROUTE_V2_DISCRIMINATOR,
  type RouteV2Data,
  startsWith,
  sweep,
} from "../program/rfq-v2.ts";
import { V2RejectCode } from "./codes.ts";
import type { StreamedSet } from "./streamed.ts";

/** Indexes inside the leg block (after the RFQ v2 program at 0). */
const LEG = {
  program: 0,
  user: 1,
  fillAuthority: 2,
  userBase: 3,
  userQuote: 4,
  makerBase: 5,
  makerQuote: 6,
  baseMint: 7,
  quoteMint: 8,
  baseTokenProgram: 9,
  quoteTokenProgram: 10,
  instructionsSysvar: 11,
} as const;

export interface V2Leg extends RouteV2Data {
  taker: PublicKey;
  baseMint: PublicKey;
  quoteMint: PublicKey;
}

export interface V2Pair {
  pairKey: string;
  base: TokenConfig;
  quote: TokenConfig;
}

export interface V2CheckInput {
  tx: VersionedTransaction;
  /** Every account key of the message: static ones, then those loaded from lookup tables (writable, read-only). */
  accountKeys: readonly PublicKey[];
  maker: PublicKey;
  /** Streamed pairs by "baseMint/quoteMint". */
  pairs: ReadonlyMap<string, V2Pair>;
  /** The pair's level sets still valid. */
  streamed: (pairKey: string) => readonly StreamedSet[];
  nowMs: number;
}

export type V2Verdict =
  | {
      ok: true;
      leg: V2Leg;
      pair: V2Pair;
      set: StreamedSet;
      /** What the taker pays and receives, as the program will compute it. */
      amountIn: bigint;
      amountOut: bigint;
      /** Base atoms traded. */
      baseAmount: bigint;
    }
  | { ok: false; code: V2RejectCode; detail: string };

const refuse = (code: V2RejectCode, detail: string): V2Verdict => ({ ok: false, code, detail });

/** Decodes base64 into a transaction, or a refusal. */
export function decodeSwapTransaction(
  base64: string,
): VersionedTransaction | { code: V2RejectCode; detail: string } {
  try {
    const bytes = Buffer.from(base64, "base64");
    if (bytes.length === 0) throw new Error("empty");
    return VersionedTransaction.deserialize(bytes);
  } catch (err) {
    return {
      code: V2RejectCode.V2_MALFORMED_TRANSACTION,
      detail: `cannot read the transaction: ${(err as Error).message}`,
    };
  }
}

/** What the structure alone says: the leg, its pair, the route instruction's index. */
export type V2RouteVerdict =
  | { ok: true; leg: V2Leg; pair: V2Pair; routeIndex: number }
  | { ok: false; code: V2RejectCode; detail: string };

/**
 * The structural checks, which need no streamed state (the signer service runs them too): the
 * signers, one route_v2 with one RFQ v2 leg, the programs and fixed accounts, the maker's fill
 * authority and associated token accounts, their exclusivity, and the leg taking all of input 0.
 */
export function checkV2Route(
  input: Pick<V2CheckInput, "tx" | "accountKeys" | "maker" | "pairs">,
): V2RouteVerdict {
  const refuse = (code: V2RejectCode, detail: string): V2RouteVerdict => ({ ok: false, code, detail });
  const { tx, maker, accountKeys } = input;
  const msg = tx.message;
  const header = msg.header;
  // The maker co-signs slot 1 read-only; the taker pays the fee at slot 0.
  if (header.numRequiredSignatures !== 2 || header.numReadonlySignedAccounts !== 1)
    return refuse(
      V2RejectCode.V2_INVALID_SIGNERS,
      `${header.numRequiredSignatures} required signatures, ${header.numReadonlySignedAccounts} read-only: expected 2 and 1 (the maker at slot 1)`,
    );
  // A signer is always a static key (a lookup table cannot load one): the maker's slot is checked there.
  const statics = msg.staticAccountKeys;
  if (
    statics.length < header.numRequiredSignatures ||
    !statics[1]?.equals(maker) ||
    !accountKeys[1]?.equals(maker)
  )
    return refuse(
      V2RejectCode.V2_INVALID_SIGNERS,
      "the maker is not the static signer at slot 1 (a key loaded from a lookup table cannot sign)",
    );

  // Every index is checked against the keys below before any is read; out of range is a bug, not input.
  const key = (i: number): PublicKey => {
    const k = accountKeys[i];
    if (!k) throw new Error(`account index ${i} beyond the message's ${accountKeys.length} keys`);
    return k;
  };
  const ixs = msg.compiledInstructions;
  for (const ix of ixs) {
    if (ix.programIdIndex >= accountKeys.length || ix.accountKeyIndexes.some((i) => i >= accountKeys.length))
      return refuse(
        V2RejectCode.V2_MALFORMED_TRANSACTION,
        "an instruction names an account beyond the message's keys",
      );
  }
  const routes = ixs
    .map((ix, index) => ({ ix, index }))
    .filter(
      ({ ix }) =>
        key(ix.programIdIndex).toBase58() === AGGREGATOR_PROGRAM &&
        startsWith(ix.data, ROUTE_V2_DISCRIMINATOR),
    );
  if (routes.length !== 1)
    return refuse(
      V2RejectCode.V2_ROUTE_NOT_FOUND,
      `${routes.length} route_v2 instructions: expected exactly one`,
    );
  const [route] = routes as [(typeof routes)[number]];

  const decoded = decodeRouteV2(route.ix.data);
  if (!decoded.ok)
    return refuse(
      decoded.malformed ? V2RejectCode.V2_MALFORMED_TRANSACTION : V2RejectCode.V2_ROUTE_NOT_FOUND,
      decoded.detail,
    );
  const leg = decoded.leg;

  // Accounts: the route's 10, then the leg block.
  const accs = route.ix.accountKeyIndexes;
  if (accs.length !== ROUTE_FIXED_ACCOUNTS + RFQ_LEG_ACCOUNTS)
    return refuse(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      `the route has ${accs.length} accounts: expected ${ROUTE_FIXED_ACCOUNTS + RFQ_LEG_ACCOUNTS}`,
    );
  const at = (i: number) => key(accs[i] ?? Number.NaN);
  const legAt = (name: keyof typeof LEG) => at(ROUTE_FIXED_ACCOUNTS + LEG[name]);
  const taker = at(0);
  if (!key(0).equals(taker) || !legAt("user").equals(taker))
    return refuse(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the route's authority, the leg's user and the fee payer are not one taker",
    );
  if (at(8).toBase58() !== AGGREGATOR_EVENT_AUTHORITY || at(9).toBase58() !== AGGREGATOR_PROGRAM)
    return refuse(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the route's event authority or program account is not the aggregator's",
    );
  if (legAt("program").toBase58() !== RFQ_V2_PROGRAM)
    return refuse(V2RejectCode.V2_INVALID_ACCOUNTS, "the leg's program is not RFQ v2");
  if (!legAt("fillAuthority").equals(maker))
    return refuse(V2RejectCode.V2_INVALID_ACCOUNTS, "the leg's fill authority is not the maker");
  if (legAt("instructionsSysvar").toBase58() !== INSTRUCTIONS_SYSVAR)
    return refuse(V2RejectCode.V2_INVALID_ACCOUNTS, "the leg's instructions sysvar is another account");

  const baseMint = legAt("baseMint");
  const quoteMint = legAt("quoteMint");
  const pair = input.pairs.get(`${baseMint.toBase58()}/${quoteMint.toBase58()}`);
  if (!pair)
    return refuse(
      V2RejectCode.V2_PAIR_NOT_STREAMED,
      `no streamed pair ${baseMint.toBase58()}/${quoteMint.toBase58()}`,
    );
  if (
    legAt("baseTokenProgram").toBase58() !== pair.base.tokenProgram ||
    legAt("quoteTokenProgram").toBase58() !== pair.quote.tokenProgram
  )
    return refuse(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      `${pair.pairKey}: a token program is not the configured one`,
    );
  // The route's mints follow the taker's side: a Bid pays quote for base.
  const [srcMint, dstMint] = leg.takerSide === "bid" ? [quoteMint, baseMint] : [baseMint, quoteMint];
  if (!at(3).equals(srcMint) || !at(4).equals(dstMint))
    return refuse(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the route's source and destination mints do not match the leg's side",
    );
  const makerBase = getAssociatedTokenAddressSync(baseMint, maker, false, legAt("baseTokenProgram"));
  const makerQuote = getAssociatedTokenAddressSync(quoteMint, maker, false, legAt("quoteTokenProgram"));
  if (!legAt("makerBase").equals(makerBase) || !legAt("makerQuote").equals(makerQuote))
    return refuse(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the leg's maker token accounts are not the maker's associated accounts",
    );

  // Exclusivity: the maker's three accounts only in the leg's slots of this one instruction.
  const own = [maker, makerBase, makerQuote];
  const slots = new Set([
    ROUTE_FIXED_ACCOUNTS + LEG.fillAuthority,
    ROUTE_FIXED_ACCOUNTS + LEG.makerBase,
    ROUTE_FIXED_ACCOUNTS + LEG.makerQuote,
  ]);
  for (const [n, ix] of ixs.entries()) {
    if (own.some((k) => key(ix.programIdIndex).equals(k)))
      return refuse(
        V2RejectCode.V2_MAKER_NOT_EXCLUSIVE,
        `instruction ${n} runs a maker account as a program`,
      );
    for (const [pos, idx] of ix.accountKeyIndexes.entries()) {
      if (!own.some((k) => key(idx).equals(k))) continue;
      if (n === route.index && slots.has(pos) && own[[...slots].indexOf(pos)]?.equals(key(idx))) continue;
      return refuse(
        V2RejectCode.V2_MAKER_NOT_EXCLUSIVE,
        `instruction ${n} names a maker account at position ${pos}`,
      );
    }
  }

  // The runtime refuses a key loaded twice (AccountLoadedTwice); refused here so no slot can name a copy.
  const distinct = new Set<string>();
  for (const k of accountKeys) {
    const b58 = k.toBase58();
    if (distinct.has(b58))
      return refuse(
        V2RejectCode.V2_MALFORMED_TRANSACTION,
        `account ${b58} appears twice among the message's keys`,
      );
    distinct.add(b58);
  }

  // Amounts: a lone leg takes the whole route input.
  if (leg.bps !== 10_000 || leg.inputIndex !== 0)
    return refuse(
      V2RejectCode.V2_INVALID_AMOUNTS,
      `the leg takes ${leg.bps} bps of input ${leg.inputIndex}: expected all of input 0`,
    );
  return { ok: true, leg: { ...leg, taker, baseMint, quoteMint }, pair, routeIndex: route.index };
}

/** Judges one offered swap. Pure: the streamed sets, the clock and the keys are given. */
export function checkV2Swap(input: V2CheckInput): V2Verdict {
  const route = checkV2Route(input);
  if (!route.ok) return route;
  const { leg, pair } = route;

  // Levels: a streamed set still valid, the fill's levels each no better and no larger.
  const consuming = (s: StreamedSet) => (leg.takerSide === "bid" ? s.asks : s.bids);
  const noBetter = (fill: bigint, ours: bigint) => (leg.takerSide === "bid" ? fill >= ours : fill <= ours);
  const sets = input.streamed(pair.pairKey);
  if (sets.length === 0)
    return refuse(V2RejectCode.V2_PAIR_NOT_STREAMED, `${pair.pairKey}: no level set is valid now`);
  const set = [...sets].reverse().find(
    (s) =>
      s.lotSizeBase === leg.lotSizeBase &&
      leg.levels.length > 0 &&
      leg.levels.length <= consuming(s).length &&
      leg.levels.every((l, i) => {
        const ours = consuming(s)[i];
        return ours !== undefined && l.lots > 0n && l.lots <= ours.lots && noBetter(l.perLot, ours.perLot);
      }),
  );
  if (!set)
    return refuse(
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
      `${pair.pairKey}: lot ${leg.lotSizeBase} and ${leg.levels.length} level(s) match no streamed set still valid`,
    );
  const nowS = BigInt(Math.floor(input.nowMs / 1000));
  if (leg.expireAt <= nowS)
    return refuse(V2RejectCode.V2_EXPIRED, `expire_at ${leg.expireAt} is past (now ${nowS})`);
  if (leg.expireAt * 1000n > BigInt(set.validUntilMs))
    return refuse(
      V2RejectCode.V2_EXPIRED,
      `expire_at ${leg.expireAt} is later than the levels' validity (${Math.floor(set.validUntilMs / 1000)})`,
    );

  const walked = sweep(leg.takerSide, leg.inAmount, leg.levels, leg.lotSizeBase);
  if (walked.lots === 0n) return refuse(V2RejectCode.V2_INVALID_AMOUNTS, `${leg.inAmount} buys no whole lot`);
  const baseAmount = walked.lots * leg.lotSizeBase;
  return {
    ok: true,
    leg,
    pair,
    set,
    amountIn: walked.spent,
    amountOut: walked.out,
    baseAmount,
  };
}
