/**
 * The local chain's stand-in for the aggregator's `route_v2` carrying one RFQ v2 leg, whose program
 * binaries are not available here. Checked as the RFQ v2 program checks it (its published errors:
 * 6001 NoFill, 6002 StaleOrderbook, 6003 InvalidLevelOrdering, 6005 MakerAppearsInOtherInstruction; the
 * fill authority a required signer), walked as it walks the levels (whole lots, floors), then replaced
 * by the two token transfers it makes: the taker's input into the maker's account of that mint, the
 * maker's output into the taker's. What it does not model: routes with other legs (refused), the
 * aggregator's slippage and platform fee (the RFQ leg is the whole route here), Token-2022 extensions,
 * and the unlabelled last account of the leg. Accounts the swap loads from lookup tables reach it
 * resolved: the local chain decompiles the message with its tables before any emulation.
 */
import { createTransferCheckedInstruction } from "@solana/spl-token";
import type { PublicKey, TransactionInstruction } from "@solana/web3.js";
import {
  AGGREGATOR_PROGRAM,
  decodeRouteV2,
  RFQ_V2_PROGRAM,
  ROUTE_FIXED_ACCOUNTS,
  ROUTE_V2_DISCRIMINATOR,
  startsWith,
  sweep,
} from "../../program/rfq-v2.ts";
import type { Emulation, EmulationContext } from "./fill-emulation.ts";
import { readMint } from "./spl-state.ts";

export function isRouteV2Instruction(ix: TransactionInstruction): boolean {
  return ix.programId.toBase58() === AGGREGATOR_PROGRAM && startsWith(ix.data, ROUTE_V2_DISCRIMINATOR);
}

const LEG = ROUTE_FIXED_ACCOUNTS;

/** Checks the route and returns the transfers it makes; `others` are the transaction's other instructions. */
export function emulateRouteV2(
  ix: TransactionInstruction,
  others: readonly TransactionInstruction[],
  ctx: EmulationContext,
): Emulation {
  const decoded = decodeRouteV2(ix.data);
  if (!decoded.ok) return { ok: false, error: `aggregator: ${decoded.detail}` };
  const leg = decoded.leg;
  if (ix.keys.length < LEG + 12)
    return { ok: false, error: `aggregator: route has ${ix.keys.length} accounts` };
  const k = (i: number) => {
    const meta = ix.keys[i];
    if (!meta) throw new Error(`route account ${i} missing`); // unreachable after the length check
    return meta;
  };
  if (k(LEG).pubkey.toBase58() !== RFQ_V2_PROGRAM)
    return { ok: false, error: "aggregator: the leg is not RFQ v2" };
  const user = k(LEG + 1);
  const authority = k(LEG + 2);
  if (!user.isSigner || !k(0).isSigner) return { ok: false, error: "rfq v2: the user did not sign" };
  if (!authority.isSigner) return { ok: false, error: "rfq v2: the fill authority did not sign" };
  const [userBase, userQuote, makerBase, makerQuote, baseMint, quoteMint, baseProgram, quoteProgram] = [
    3, 4, 5, 6, 7, 8, 9, 10,
  ].map((i) => k(LEG + i).pubkey) as PublicKey[] as [
    PublicKey,
    PublicKey,
    PublicKey,
    PublicKey,
    PublicKey,
    PublicKey,
    PublicKey,
    PublicKey,
  ];
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
  const amount = (leg.inAmount * BigInt(leg.bps)) / 10_000n;
  const walked = sweep(leg.takerSide, amount, leg.levels, leg.lotSizeBase);
  if (walked.lots === 0n) return { ok: false, error: "rfq v2: 6001 NoFill" };
  const decimals = (mint: PublicKey, program: PublicKey) => readMint(mint, ctx.read(mint), program)?.decimals;
  const bd = decimals(baseMint, baseProgram);
  const qd = decimals(quoteMint, quoteProgram);
  if (bd === undefined || qd === undefined)
    return { ok: false, error: "rfq v2: a mint is not a mint of its token program" };
  const transfer = (
    from: PublicKey,
    mint: PublicKey,
    to: PublicKey,
    owner: PublicKey,
    n: bigint,
    d: number,
    program: PublicKey,
  ) => createTransferCheckedInstruction(from, mint, to, owner, n, d, [], program);
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
  return { ok: true, instructions };
}
