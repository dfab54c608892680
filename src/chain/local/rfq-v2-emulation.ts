/**
 * The local chain's stand-in for the aggregator's `route_v2` carrying one RFQ v2 leg, alone or beside a
 * stand-in AMM leg, whose program binaries are not available here.
 *
 * The route: its plan read exactly as the maker reads it (src/program/route-plan.ts: one RFQ v2 step,
 * every step known), the legs' account blocks in plan order after the route's 10 accounts (and the
 * platform fee account at 10 when the route carries a fee), then the route's last account. Each step
 * takes `bps` of the amount its input index holds: input 0 holds `in_amount`, another index what the
 * earlier steps put out into it (the whole-lot remainder a leg does not spend stays with the taker).
 *
 * The RFQ v2 leg: checked as the RFQ v2 program checks it (its published errors: 6001 NoFill, 6002
 * StaleOrderbook, 6003 InvalidLevelOrdering, 6005 MakerAppearsInOtherInstruction; the fill authority a
 * required signer), walked as it walks the levels (whole lots, floors), then replaced by the two token
 * transfers it makes: the taker's input into the maker's account of that mint, the maker's output into
 * the taker's.
 *
 * The stand-in AMM leg (the plan names it swap 3, TokenSwap, a constant-product pool; its program is
 * STAND_IN_AMM_PROGRAM, a made-up id): a pool whose two vaults are its authority's (a PDA of that id,
 * seed "pool") associated token accounts, swapping at x*y=k without a fee: out = floor(in x
 * destination vault / (source vault + in)), the vaults as they stand before the transaction. Replaced by
 * the taker's transfer into the source vault and the pool authority's out of the destination vault (the
 * authority signs as the program would for its PDA). Block: the program, the pool authority, the
 * taker's source and destination token accounts, the pool's source and destination vaults, the source
 * and destination mints, the token program. It does not check what a real AMM would: no fee, no
 * minimum out, no curve but x*y=k, no pool state account, one token program for both mints.
 *
 * What the route stand-in does not model: any other step (refused as not modelled), the aggregator's
 * slippage check on the route's output and its platform fee, Token-2022 extensions, and the route's
 * last account. Accounts the swap loads from lookup tables reach it resolved: the local chain
 * decompiles the message with its tables before any emulation.
 */
import { createHash } from "node:crypto";
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import { type AccountMeta, PublicKey, type TransactionInstruction } from "@solana/web3.js";
import {
  AGGREGATOR_PROGRAM,
  decodeRouteV2,
  RFQ_BLOCK_ACCOUNTS,
  RFQ_V2_PROGRAM,
  ROUTE_FIXED_ACCOUNTS,
  ROUTE_V2_DISCRIMINATOR,
  type RouteV2Data,
  startsWith,
  sweep,
} from "../../program/rfq-v2.ts";
import type { EmulationContext } from "./fill-emulation.ts";
import { readMint, readTokenAccount } from "./spl-state.ts";

/** The stand-in AMM's program id (made up: sha256 of its name), the swap tag its step carries, its block. */
export const STAND_IN_AMM_PROGRAM = new PublicKey(createHash("sha256").update("local stand-in amm").digest());
export const STAND_IN_AMM_TAG = 3;
const STAND_IN_AMM_ACCOUNTS = 9;
/** The pool's authority: owner of its vaults, signing for them as the program would. */
export const STAND_IN_POOL_AUTHORITY = PublicKey.findProgramAddressSync(
  [Buffer.from("pool")],
  STAND_IN_AMM_PROGRAM,
)[0];

/** The pool's vault of `mint`: the pool authority's associated token account. */
export function standInPoolVault(mint: PublicKey, tokenProgram: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(mint, STAND_IN_POOL_AUTHORITY, true, tokenProgram);
}

export type RouteEmulation =
  | { ok: true; instructions: TransactionInstruction[]; extraSigners: PublicKey[] }
  | { ok: false; error: string };

export function isRouteV2Instruction(ix: TransactionInstruction): boolean {
  return ix.programId.toBase58() === AGGREGATOR_PROGRAM && startsWith(ix.data, ROUTE_V2_DISCRIMINATOR);
}

/** Checks the route and returns the transfers it makes; `others` are the transaction's other instructions. */
export function emulateRouteV2(
  ix: TransactionInstruction,
  others: readonly TransactionInstruction[],
  ctx: EmulationContext,
): RouteEmulation {
  const decoded = decodeRouteV2(ix.data);
  if (!decoded.ok) return { ok: false, error: `aggregator: ${decoded.detail}` };
  const route = decoded.leg;
  const held = new Map<number, bigint>([[0, route.inAmount]]);
  const instructions: TransactionInstruction[] = [];
  const extraSigners: PublicKey[] = [];
  let at = ROUTE_FIXED_ACCOUNTS + (route.platformFeeBps > 0 ? 1 : 0);
  for (const [n, step] of route.steps.entries()) {
    const size = step.rfq ? RFQ_BLOCK_ACCOUNTS : STAND_IN_AMM_ACCOUNTS;
    const block = ix.keys.slice(at, at + size);
    if (block.length !== size)
      return {
        ok: false,
        error: `aggregator: route has ${ix.keys.length} accounts, step ${n} needs ${size} from ${at}`,
      };
    at += size;
    const amount = ((held.get(step.inputIndex) ?? 0n) * BigInt(step.bps)) / 10_000n;
    const leg = step.rfq
      ? rfqLeg(route, block, ix.keys[0] as AccountMeta, amount, others, ctx)
      : step.tag === STAND_IN_AMM_TAG && block[0]?.pubkey.equals(STAND_IN_AMM_PROGRAM)
        ? ammLeg(block, (ix.keys[0] as AccountMeta).pubkey, amount, ctx)
        : {
            ok: false as const,
            error: `aggregator: step ${n} (swap ${step.tag}) is not modelled by the local chain`,
          };
    if (!leg.ok) return leg;
    instructions.push(...leg.instructions);
    extraSigners.push(...leg.extraSigners);
    held.set(step.outputIndex, (held.get(step.outputIndex) ?? 0n) + leg.out);
  }
  if (ix.keys.length !== at + 1)
    return {
      ok: false,
      error: `aggregator: route has ${ix.keys.length} accounts, its legs and last account ${at + 1}`,
    };
  return { ok: true, instructions, extraSigners };
}

/** `N` account keys, a leg block's length checked before it is read. */
type Keys<N extends number, K extends PublicKey[] = []> = K["length"] extends N
  ? K
  : Keys<N, [...K, PublicKey]>;

type Leg =
  | { ok: true; instructions: TransactionInstruction[]; extraSigners: PublicKey[]; out: bigint }
  | { ok: false; error: string };

const transfer = (
  from: PublicKey,
  mint: PublicKey,
  to: PublicKey,
  owner: PublicKey,
  n: bigint,
  d: number,
  program: PublicKey,
) => createTransferCheckedInstruction(from, mint, to, owner, n, d, [], program);

/** The RFQ v2 leg: the program's checks and walk, as its two transfers. */
function rfqLeg(
  leg: RouteV2Data,
  block: AccountMeta[],
  routeAuthority: AccountMeta,
  amount: bigint,
  others: readonly TransactionInstruction[],
  ctx: EmulationContext,
): Leg {
  const k = (i: number) => block[i] as AccountMeta;
  if (k(0).pubkey.toBase58() !== RFQ_V2_PROGRAM)
    return { ok: false, error: "aggregator: the leg is not RFQ v2" };
  const user = k(1);
  const authority = k(2);
  if (!user.isSigner || !routeAuthority.isSigner)
    return { ok: false, error: "rfq v2: the user did not sign" };
  if (!authority.isSigner) return { ok: false, error: "rfq v2: the fill authority did not sign" };
  const [userBase, userQuote, makerBase, makerQuote, baseMint, quoteMint, baseProgram, quoteProgram] = [
    3, 4, 5, 6, 7, 8, 9, 10,
  ].map((i) => k(i).pubkey) as Keys<8>;
  if (leg.expireAt < ctx.unixTimestamp)
    return {
      ok: false,
      error: `rfq v2: 6002 StaleOrderbook (expire_at ${leg.expireAt} < now ${ctx.unixTimestamp})`,
    };
  for (const [i, level] of leg.levels.entries()) {
    const before = leg.levels[i - 1];
    if (!before) continue;
    const [a, b] = [before.perLot, level.perLot];
    if (leg.takerSide === "bid" ? b < a : b > a)
      return { ok: false, error: "rfq v2: 6003 InvalidLevelOrdering" };
  }
  const makerKeys = [authority.pubkey, makerBase, makerQuote];
  for (const o of others) {
    if (o.keys.some((m) => makerKeys.some((x) => x.equals(m.pubkey))))
      return { ok: false, error: "rfq v2: 6005 MakerAppearsInOtherInstruction" };
  }
  const walked = sweep(leg.takerSide, amount, leg.levels, leg.lotSizeBase);
  if (walked.lots === 0n) return { ok: false, error: "rfq v2: 6001 NoFill" };
  const decimals = (mint: PublicKey, program: PublicKey) => readMint(mint, ctx.read(mint), program)?.decimals;
  const bd = decimals(baseMint, baseProgram);
  const qd = decimals(quoteMint, quoteProgram);
  if (bd === undefined || qd === undefined)
    return { ok: false, error: "rfq v2: a mint is not a mint of its token program" };
  const instructions =
    leg.takerSide === "bid"
      ? [
          transfer(userQuote, quoteMint, makerQuote, user.pubkey, walked.spent, qd, quoteProgram),
          transfer(makerBase, baseMint, userBase, authority.pubkey, walked.out, bd, baseProgram),
        ]
      : [
          transfer(userBase, baseMint, makerBase, user.pubkey, walked.spent, bd, baseProgram),
          transfer(makerQuote, quoteMint, userQuote, authority.pubkey, walked.out, qd, quoteProgram),
        ];
  return { ok: true, instructions, extraSigners: [], out: walked.out };
}

/** The stand-in AMM leg (see the file comment): x*y=k on the pool's vaults, as two transfers. */
function ammLeg(block: AccountMeta[], taker: PublicKey, amount: bigint, ctx: EmulationContext): Leg {
  const [, authority, userSrc, userDst, poolSrc, poolDst, srcMint, dstMint, program] = block.map(
    (m) => m.pubkey,
  ) as Keys<9>;
  if (!authority.equals(STAND_IN_POOL_AUTHORITY))
    return { ok: false, error: "stand-in amm: the pool authority is not the program's" };
  if (
    !poolSrc.equals(standInPoolVault(srcMint, program)) ||
    !poolDst.equals(standInPoolVault(dstMint, program))
  )
    return { ok: false, error: "stand-in amm: a vault is not the pool's" };
  const vault = (key: PublicKey) => readTokenAccount(key, ctx.read(key), program)?.amount;
  const [x, y] = [vault(poolSrc), vault(poolDst)];
  const decimals = (mint: PublicKey) => readMint(mint, ctx.read(mint), program)?.decimals;
  const [sd, dd] = [decimals(srcMint), decimals(dstMint)];
  if (x === undefined || y === undefined || sd === undefined || dd === undefined)
    return { ok: false, error: "stand-in amm: the pool's vaults or mints do not exist" };
  const out = (amount * y) / (x + amount);
  if (out === 0n) return { ok: false, error: "stand-in amm: the input buys nothing" };
  return {
    ok: true,
    instructions: [
      transfer(userSrc, srcMint, poolSrc, taker, amount, sd, program),
      transfer(poolDst, dstMint, userDst, authority, out, dd, program),
    ],
    extraSigners: [authority],
    out,
  };
}
