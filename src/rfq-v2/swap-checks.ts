/**
 * An RFQ v2 swap as the operator offers it (SWAP_AVAILABLE): decoded, then judged against the levels
 * the maker streamed. Signed only when it is the aggregator's `route_v2` whose plan reads exactly, step
 * by step (src/program/route-plan.ts), with exactly one RFQ v2 step (tag 120), alone or beside other
 * legs, for a pair the maker streams, whose lot and levels are a streamed set still valid (each level
 * no better for the taker than the streamed one, no more lots), and whose maker key and token accounts
 * each appear exactly once in the whole transaction: in the RFQ leg's block (right after the RFQ v2
 * program, which the route names once), in the leg's own order. The other legs' payloads are read only
 * as far as their length; what they do is not judged, only that the maker's accounts are not theirs. A
 * step the maker cannot read (a tag outside the published enum) makes the route unreadable: refused,
 * never searched for bytes that look like an RFQ step. The keys are the message's resolved list
 * (lookup.ts): an account loaded from a lookup table is judged exactly as a static one.
 *
 * The leg's input: a first leg (input index 0, which no step feeds) takes in_amount x bps / 10,000; a
 * mid-chain leg's input is known only at run time, so it is priced at the worst case, the whole ladder
 * it carries (what the inventory reserves).
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
  RFQ_BLOCK_ACCOUNTS,
  RFQ_LEG_ACCOUNTS,
  RFQ_V2_PROGRAM,
  ROUTE_FIXED_ACCOUNTS,
  ROUTE_V2_DISCRIMINATOR,
  type RouteV2Data,
  type RouteV2Problem,
  startsWith,
  sweep,
} from "../program/rfq-v2.ts";
import {
  FillRejectCode,
  type Refusal,
  type RefusalCode,
  type Refused,
  V2RejectCode,
} from "../refusal/codes.ts";
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
  /** The leg's input: in_amount x bps / 10,000 for a first leg, the whole ladder's cost mid-chain. */
  inAmount: bigint;
  /** The route's in_amount as the data carries it. */
  routeInAmount: bigint;
  /** "first": the leg takes its share of the route's input; "mid-chain": an earlier step feeds it. */
  input: "first" | "mid-chain";
}

const PROBLEM_CODE: Record<RouteV2Problem, RefusalCode> = {
  malformed: FillRejectCode.MALFORMED_TRANSACTION,
  unreadable: V2RejectCode.V2_ROUTE_UNREADABLE,
  "not-found": V2RejectCode.V2_ROUTE_NOT_FOUND,
};

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
  | Refused;

const refused = (code: RefusalCode, context: string): Refused => ({ ok: false, code, context });

/** Decodes base64 into a transaction, or a refusal. */
export function decodeSwapTransaction(base64: string): VersionedTransaction | Refusal {
  try {
    const bytes = Buffer.from(base64, "base64");
    if (bytes.length === 0) throw new Error("empty");
    return VersionedTransaction.deserialize(bytes);
  } catch (err) {
    return {
      code: FillRejectCode.MALFORMED_TRANSACTION,
      context: `cannot read the transaction: ${(err as Error).message}`,
    };
  }
}

/** What the structure alone says: the leg, its pair, the route instruction's index. */
export type V2RouteVerdict = { ok: true; leg: V2Leg; pair: V2Pair; routeIndex: number } | Refused;

type KeyAt = (i: number) => PublicKey;
type Message = VersionedTransaction["message"];
type Instruction = Message["compiledInstructions"][number];

/**
 * The structural checks, which need no streamed state (the signer service runs them too): the
 * signers, one route_v2 with one RFQ v2 leg, the programs and fixed accounts, the maker's fill
 * authority and associated token accounts, their exclusivity, and the leg's share of its input.
 * Each check below returns its refusal, or nothing when it holds; they run in this order.
 */
export function checkV2Route(
  input: Pick<V2CheckInput, "tx" | "accountKeys" | "maker" | "pairs">,
): V2RouteVerdict {
  const { tx, maker, accountKeys } = input;
  const msg = tx.message;
  const signers = signersRefusal(msg, accountKeys, maker);
  if (signers) return signers;
  const ixs = msg.compiledInstructions;
  if (
    ixs.some(
      (ix) =>
        ix.programIdIndex >= accountKeys.length || ix.accountKeyIndexes.some((i) => i >= accountKeys.length),
    )
  )
    return refused(
      FillRejectCode.MALFORMED_TRANSACTION,
      "an instruction names an account beyond the message's keys",
    );
  // Every index was checked against the keys above; out of range from here on is a bug, not input.
  const key: KeyAt = (i) => {
    const k = accountKeys[i];
    // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable, every index was checked against the keys above
    if (!k) throw new Error(`account index ${i} beyond the message's ${accountKeys.length} keys`);
    return k;
  };
  const routes = ixs.flatMap((ix, index) =>
    key(ix.programIdIndex).toBase58() === AGGREGATOR_PROGRAM && startsWith(ix.data, ROUTE_V2_DISCRIMINATOR)
      ? [{ ix, index }]
      : [],
  );
  const [route, ...more] = routes;
  if (!route || more.length > 0)
    return refused(
      V2RejectCode.V2_ROUTE_NOT_FOUND,
      `${routes.length} route_v2 instructions: expected exactly one`,
    );
  const decoded = decodeRouteV2(route.ix.data);
  if (!decoded.ok) return refused(PROBLEM_CODE[decoded.problem], decoded.detail);
  const leg = decoded.leg;

  const block = legBlock(route.ix, leg, key);
  if (!block.ok) return block;
  const accounts = legAccounts(block.at, block.legAt, key(0), leg, maker, input.pairs);
  if (!accounts.ok) return accounts;
  const { pair, baseMint, quoteMint } = accounts;
  const exclusive = exclusivityRefusal(ixs, route.index, key, [
    [block.start + LEG.fillAuthority, maker],
    [block.start + LEG.makerBase, accounts.makerBase],
    [block.start + LEG.makerQuote, accounts.makerQuote],
  ]);
  if (exclusive) return exclusive;
  const twice = keyLoadedTwice(accountKeys);
  if (twice)
    return refused(
      FillRejectCode.MALFORMED_TRANSACTION,
      `account ${twice} appears twice among the message's keys`,
    );
  const share = shareRefusal(leg);
  if (share) return share;

  // A first leg takes input 0, which no step feeds; any other's input is known only at run time.
  const first = leg.inputIndex === 0 && !leg.steps.some((s) => s.outputIndex === 0);
  const legIn = first ? (leg.inAmount * BigInt(leg.bps)) / 10_000n : wholeLadder(leg);
  return {
    ok: true,
    leg: {
      ...leg,
      inAmount: legIn,
      routeInAmount: leg.inAmount,
      input: first ? "first" : "mid-chain",
      taker: accounts.taker,
      baseMint,
      quoteMint,
    },
    pair,
    routeIndex: route.index,
  };
}

/** The maker co-signs slot 1 read-only; the taker pays the fee at slot 0. */
function signersRefusal(
  msg: Message,
  accountKeys: readonly PublicKey[],
  maker: PublicKey,
): Refused | undefined {
  const header = msg.header;
  if (header.numRequiredSignatures !== 2 || header.numReadonlySignedAccounts !== 1)
    return refused(
      V2RejectCode.V2_INVALID_SIGNERS,
      `${header.numRequiredSignatures} required signatures, ${header.numReadonlySignedAccounts} read-only: expected 2 and 1 (the maker at slot 1)`,
    );
  // A signer is always a static key (a lookup table cannot load one): the maker's slot is checked there.
  const statics = msg.staticAccountKeys;
  // Two signers (checked above): fewer than two statics leave slot 1 empty, which is not the maker.
  if (!statics[1]?.equals(maker) || !accountKeys[1]?.equals(maker))
    return refused(
      V2RejectCode.V2_INVALID_SIGNERS,
      "the maker is not the static signer at slot 1 (a key loaded from a lookup table cannot sign)",
    );
  return undefined;
}

/**
 * Where the RFQ leg's block sits among the route's accounts: after the route's 10 (and the platform fee
 * account when the route carries a fee), at the RFQ v2 program, which the route names once, and before
 * the route's last account. A lone leg's block is the legs' whole span.
 */
function legBlock(
  route: Instruction,
  leg: RouteV2Data,
  key: KeyAt,
):
  | Refused
  | { ok: true; start: number; at: (i: number) => PublicKey; legAt: (name: keyof typeof LEG) => PublicKey } {
  const accs = route.accountKeyIndexes;
  const legsStart = ROUTE_FIXED_ACCOUNTS + (leg.platformFeeBps > 0 ? 1 : 0);
  const programAt = accs.flatMap((idx, pos) => (key(idx).toBase58() === RFQ_V2_PROGRAM ? [pos] : []));
  const [start, ...more] = programAt;
  if (start === undefined || more.length > 0)
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      `the route names the RFQ v2 program ${programAt.length} times: expected once, at the head of the leg's block`,
    );
  if (leg.steps.length === 1 && (start !== legsStart || accs.length !== legsStart + RFQ_LEG_ACCOUNTS))
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      `the lone leg's block starts at ${start} of ${accs.length} accounts: expected at ${legsStart} of ${legsStart + RFQ_LEG_ACCOUNTS}`,
    );
  if (start < legsStart || start + RFQ_BLOCK_ACCOUNTS > accs.length - 1)
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      `the RFQ leg's block (${start}-${start + RFQ_BLOCK_ACCOUNTS - 1}) is not among the legs (${legsStart}-${accs.length - 2}; the last account is the route's)`,
    );
  const at = (i: number) => key(accs[i] ?? Number.NaN);
  return { ok: true, start, at, legAt: (name) => at(start + LEG[name]) };
}

/**
 * The accounts the fill needs, in the route's and the leg's slots: one taker, the aggregator's own
 * accounts, the maker as fill authority, a streamed pair with its configured token programs, the
 * route's mints on the leg's side, the maker's associated token accounts.
 */
function legAccounts(
  at: (i: number) => PublicKey,
  legAt: (name: keyof typeof LEG) => PublicKey,
  feePayer: PublicKey,
  leg: RouteV2Data,
  maker: PublicKey,
  pairs: ReadonlyMap<string, V2Pair>,
):
  | Refused
  | {
      ok: true;
      taker: PublicKey;
      pair: V2Pair;
      baseMint: PublicKey;
      quoteMint: PublicKey;
      makerBase: PublicKey;
      makerQuote: PublicKey;
    } {
  // The route's authority (its account 0), the leg's user and the message's fee payer: one taker.
  const taker = at(0);
  if (!feePayer.equals(taker) || !legAt("user").equals(taker))
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the route's authority, the leg's user and the fee payer are not one taker",
    );
  if (at(8).toBase58() !== AGGREGATOR_EVENT_AUTHORITY || at(9).toBase58() !== AGGREGATOR_PROGRAM)
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the route's event authority or program account is not the aggregator's",
    );
  if (!legAt("fillAuthority").equals(maker))
    return refused(V2RejectCode.V2_INVALID_ACCOUNTS, "the leg's fill authority is not the maker");
  if (legAt("instructionsSysvar").toBase58() !== INSTRUCTIONS_SYSVAR)
    return refused(V2RejectCode.V2_INVALID_ACCOUNTS, "the leg's instructions sysvar is another account");

  const baseMint = legAt("baseMint");
  const quoteMint = legAt("quoteMint");
  const pair = pairs.get(`${baseMint.toBase58()}/${quoteMint.toBase58()}`);
  if (!pair)
    return refused(
      V2RejectCode.V2_PAIR_NOT_STREAMED,
      `no streamed pair ${baseMint.toBase58()}/${quoteMint.toBase58()}`,
    );
  if (
    legAt("baseTokenProgram").toBase58() !== pair.base.tokenProgram ||
    legAt("quoteTokenProgram").toBase58() !== pair.quote.tokenProgram
  )
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      `${pair.pairKey}: a token program is not the configured one`,
    );
  // The route's mints follow the taker's side (a Bid pays quote for base): its source mint is the
  // leg's input when the leg takes the route's input, its destination the leg's output when alone.
  const [srcMint, dstMint] = leg.takerSide === "bid" ? [quoteMint, baseMint] : [baseMint, quoteMint];
  if ((leg.inputIndex === 0 && !at(3).equals(srcMint)) || (leg.steps.length === 1 && !at(4).equals(dstMint)))
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the route's source and destination mints do not match the leg's side",
    );
  // Stryker disable next-line BooleanLiteral: the maker signs, so its key is on the curve and allowOwnerOffCurve changes nothing
  const makerBase = getAssociatedTokenAddressSync(baseMint, maker, false, legAt("baseTokenProgram"));
  // Stryker disable next-line BooleanLiteral: the maker signs, so its key is on the curve and allowOwnerOffCurve changes nothing
  const makerQuote = getAssociatedTokenAddressSync(quoteMint, maker, false, legAt("quoteTokenProgram"));
  if (!legAt("makerBase").equals(makerBase) || !legAt("makerQuote").equals(makerQuote))
    return refused(
      V2RejectCode.V2_INVALID_ACCOUNTS,
      "the leg's maker token accounts are not the maker's associated accounts",
    );
  return { ok: true, taker, pair, baseMint, quoteMint, makerBase, makerQuote };
}

/**
 * Exclusivity: the maker's three accounts only in the leg's slots of the route instruction, each once:
 * not in another leg's accounts, not in another instruction, never run as a program.
 */
function exclusivityRefusal(
  ixs: readonly Instruction[],
  routeIndex: number,
  key: KeyAt,
  slots: readonly (readonly [number, PublicKey])[],
): Refused | undefined {
  const own = slots.map(([, k]) => k);
  const slotOf = new Map(slots);
  for (const [n, ix] of ixs.entries()) {
    if (own.some((k) => key(ix.programIdIndex).equals(k)))
      return refused(
        FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
        `instruction ${n} runs a maker account as a program`,
      );
    for (const [pos, idx] of ix.accountKeyIndexes.entries()) {
      if (!own.some((k) => key(idx).equals(k))) continue;
      if (n === routeIndex && slotOf.get(pos)?.equals(key(idx))) continue;
      return refused(
        FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
        `instruction ${n} names a maker account at position ${pos}`,
      );
    }
  }
  return undefined;
}

/** The runtime refuses a key loaded twice (AccountLoadedTwice); refused here so no slot can name a copy. */
function keyLoadedTwice(accountKeys: readonly PublicKey[]): string | undefined {
  const distinct = new Set<string>();
  for (const k of accountKeys) {
    const b58 = k.toBase58();
    if (distinct.has(b58)) return b58;
    distinct.add(b58);
  }
  return undefined;
}

/** A lone leg takes the whole route input; a leg beside others a share (1-10,000 bps) of an input. */
function shareRefusal(leg: RouteV2Data): Refused | undefined {
  const alone = leg.steps.length === 1;
  if (alone ? leg.bps !== 10_000 || leg.inputIndex !== 0 : leg.bps < 1 || leg.bps > 10_000)
    return refused(
      V2RejectCode.V2_INVALID_AMOUNTS,
      alone
        ? `the leg takes ${leg.bps} bps of input ${leg.inputIndex}: expected all of input 0`
        : `the leg takes ${leg.bps} bps of its input: expected 1-10,000`,
    );
  return undefined;
}

/** The input that walks every level of the leg to its end: the worst case for the maker. */
function wholeLadder(leg: RouteV2Data): bigint {
  let total = 0n;
  for (const l of leg.levels) total += l.lots * (leg.takerSide === "bid" ? l.perLot : leg.lotSizeBase);
  return total;
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
    return refused(V2RejectCode.V2_PAIR_NOT_STREAMED, `${pair.pairKey}: no level set is valid now`);
  const set = [...sets].reverse().find(
    (s) =>
      s.lotSizeBase === leg.lotSizeBase &&
      leg.levels.length > 0 &&
      leg.levels.every((l, i) => {
        const ours = consuming(s)[i];
        return ours !== undefined && l.lots > 0n && l.lots <= ours.lots && noBetter(l.perLot, ours.perLot);
      }),
  );
  if (!set)
    return refused(
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
      `${pair.pairKey}: lot ${leg.lotSizeBase} and ${leg.levels.length} level(s) match no streamed set still valid`,
    );
  const nowS = BigInt(Math.floor(input.nowMs / 1000));
  if (leg.expireAt <= nowS)
    return refused(V2RejectCode.V2_EXPIRED, `expire_at ${leg.expireAt} is past (now ${nowS})`);
  if (leg.expireAt * 1000n > BigInt(set.validUntilMs))
    return refused(
      V2RejectCode.V2_EXPIRED,
      `expire_at ${leg.expireAt} is later than the levels' validity (${Math.floor(set.validUntilMs / 1000)})`,
    );

  const walked = sweep(leg.takerSide, leg.inAmount, leg.levels, leg.lotSizeBase);
  if (walked.lots === 0n)
    return refused(V2RejectCode.V2_INVALID_AMOUNTS, `${leg.inAmount} buys no whole lot`);
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
