/**
 * Builds an RFQ v2 swap transaction as the operator offers it (SWAP_AVAILABLE): SetComputeUnitLimit,
 * SetComputeUnitPrice, the taker's CreateIdempotent of its output account, and the aggregator's
 * `route_v2` with one RFQ v2 leg carrying the maker's levels, alone or (with `amm`) split beside a leg
 * through the local chain's stand-in AMM pool (src/chain/local/rfq-v2-emulation.ts). Unsigned; key 0 is
 * the taker (fee payer, slot 0), key 1 the maker (read-only signer, slot 1). Stands in for the
 * operator's route builder, which is not published: the layout follows the decoded mainnet
 * transactions (the route's 10 accounts, the legs' blocks in plan order, the route's last account). With
 * `lookupTables`, every key a table holds that is neither a signer nor an invoked program is loaded
 * from it, as the v0 compiler does (mainnet loads most accounts from lookup tables).
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import {
  type AddressLookupTableAccount,
  ComputeBudgetProgram,
  PublicKey as Pk,
  type PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import {
  STAND_IN_AMM_PROGRAM,
  STAND_IN_AMM_TAG,
  STAND_IN_POOL_AUTHORITY,
  standInPoolVault,
} from "../../src/chain/local/rfq-v2-emulation.ts";
import {
  AGGREGATOR_EVENT_AUTHORITY,
  AGGREGATOR_PROGRAM,
  INSTRUCTIONS_SYSVAR,
  RFQ_V2_LEG_TAG,
  RFQ_V2_PROGRAM,
  ROUTE_V2_DISCRIMINATOR,
} from "../../src/program/rfq-v2.ts";

export interface V2SwapParams {
  taker: PublicKey;
  maker: PublicKey;
  baseMint: PublicKey;
  quoteMint: PublicKey;
  baseTokenProgram: PublicKey;
  quoteTokenProgram: PublicKey;
  /** "bid": the taker pays quote for base (takes the maker's asks); "ask": it pays base for quote. */
  takerSide: "bid" | "ask";
  inAmount: bigint;
  quotedOutAmount: bigint;
  expireAt: bigint;
  tickSizeQpb: bigint;
  lotSizeBase: bigint;
  /** px_ticks and qty_lots, best first for the consuming side. */
  levels: readonly { pxTicks: bigint; qtyLots: bigint }[];
  recentBlockhash: string;
  /** The route's last account, after every leg (a shared lookup-table entry on mainnet; default: the aggregator id). */
  legExtra?: PublicKey;
  platformFeeBps?: number;
  computeUnitLimit?: number;
  computeUnitPrice?: bigint;
  /**
   * A second leg beside the RFQ one: the stand-in AMM pool taking `bps` of the route's input (the RFQ
   * leg the rest), both from input 0 to output 1, the RFQ step first.
   */
  amm?: { bps: number };
  /** Overrides for tampering tests: the step's bps, input and output indexes. */
  bps?: number;
  inputIndex?: number;
  outputIndex?: number;
}

const u64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
const u16 = (v: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return b;
};

/** The fill data inside the leg: expire_at, tick, lot, the levels. */
export function encodeV2FillData(
  p: Pick<V2SwapParams, "expireAt" | "tickSizeQpb" | "lotSizeBase" | "levels">,
): Buffer {
  return Buffer.concat([
    u64(p.expireAt),
    u64(p.tickSizeQpb),
    u64(p.lotSizeBase),
    u32(p.levels.length),
    ...p.levels.flatMap((l) => [u64(l.pxTicks), u64(l.qtyLots)]),
  ]);
}

export function encodeRouteV2Data(p: V2SwapParams): Buffer {
  const fill = encodeV2FillData(p);
  return Buffer.concat([
    Buffer.from(ROUTE_V2_DISCRIMINATOR),
    u64(p.inAmount),
    u64(p.quotedOutAmount),
    u16(50), // slippage_bps
    u16(p.platformFeeBps ?? 0),
    u16(0), // positive_slippage_bps
    u32(p.amm ? 2 : 1),
    Buffer.from([RFQ_V2_LEG_TAG, p.takerSide === "bid" ? 0 : 1]),
    u32(fill.length),
    fill,
    u16(p.bps ?? 10_000 - (p.amm?.bps ?? 0)),
    Buffer.from([p.inputIndex ?? 0, p.outputIndex ?? 1]),
    ...(p.amm ? [Buffer.from([STAND_IN_AMM_TAG]), u16(p.amm.bps), Buffer.from([0, 1])] : []),
  ]);
}

/** The route_v2 instruction alone (accounts: the route's 10, the RFQ leg's block, the AMM's, the last one). */
export function routeV2Instruction(p: V2SwapParams): TransactionInstruction {
  const ata = (mint: PublicKey, owner: PublicKey, program: PublicKey) =>
    getAssociatedTokenAddressSync(mint, owner, true, program);
  const userBase = ata(p.baseMint, p.taker, p.baseTokenProgram);
  const userQuote = ata(p.quoteMint, p.taker, p.quoteTokenProgram);
  const [src, dst] = p.takerSide === "bid" ? [userQuote, userBase] : [userBase, userQuote];
  const [srcMint, dstMint] = p.takerSide === "bid" ? [p.quoteMint, p.baseMint] : [p.baseMint, p.quoteMint];
  const [srcProg, dstProg] =
    p.takerSide === "bid"
      ? [p.quoteTokenProgram, p.baseTokenProgram]
      : [p.baseTokenProgram, p.quoteTokenProgram];
  const aggregator = new Pk(AGGREGATOR_PROGRAM);
  const ro = (pubkey: PublicKey) => ({ pubkey, isSigner: false, isWritable: false });
  const w = (pubkey: PublicKey) => ({ pubkey, isSigner: false, isWritable: true });
  return new TransactionInstruction({
    programId: aggregator,
    keys: [
      { pubkey: p.taker, isSigner: true, isWritable: true },
      w(src),
      w(dst),
      ro(srcMint),
      ro(dstMint),
      ro(srcProg),
      ro(dstProg),
      ro(aggregator), // no destination_token_account: the program id stands in
      ro(new Pk(AGGREGATOR_EVENT_AUTHORITY)),
      ro(aggregator),
      ro(new Pk(RFQ_V2_PROGRAM)),
      { pubkey: p.taker, isSigner: true, isWritable: true },
      { pubkey: p.maker, isSigner: true, isWritable: false },
      w(userBase),
      w(userQuote),
      w(ata(p.baseMint, p.maker, p.baseTokenProgram)),
      w(ata(p.quoteMint, p.maker, p.quoteTokenProgram)),
      ro(p.baseMint),
      ro(p.quoteMint),
      ro(p.baseTokenProgram),
      ro(p.quoteTokenProgram),
      ro(new Pk(INSTRUCTIONS_SYSVAR)),
      ...(p.amm
        ? [
            ro(STAND_IN_AMM_PROGRAM),
            ro(STAND_IN_POOL_AUTHORITY),
            w(src),
            w(dst),
            w(standInPoolVault(srcMint, srcProg)),
            w(standInPoolVault(dstMint, srcProg)),
            ro(srcMint),
            ro(dstMint),
            ro(srcProg),
          ]
        : []),
      ro(p.legExtra ?? aggregator),
    ],
    data: encodeRouteV2Data(p),
  });
}

/** The whole offered transaction, unsigned. */
export function buildV2SwapTransaction(
  p: V2SwapParams,
  opts: {
    before?: TransactionInstruction[];
    after?: TransactionInstruction[];
    lookupTables?: AddressLookupTableAccount[];
  } = {},
): VersionedTransaction {
  const dstMint = p.takerSide === "bid" ? p.baseMint : p.quoteMint;
  const dstProg = p.takerSide === "bid" ? p.baseTokenProgram : p.quoteTokenProgram;
  const instructions = [
    ComputeBudgetProgram.setComputeUnitLimit({ units: p.computeUnitLimit ?? 54_586 }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: p.computeUnitPrice ?? 1_000n }),
    ...(opts.before ?? []),
    createAssociatedTokenAccountIdempotentInstruction(
      p.taker,
      getAssociatedTokenAddressSync(dstMint, p.taker, true, dstProg),
      p.taker,
      dstMint,
      dstProg,
    ),
    routeV2Instruction(p),
    ...(opts.after ?? []),
  ];
  const message = new TransactionMessage({
    payerKey: p.taker,
    recentBlockhash: p.recentBlockhash,
    instructions,
  }).compileToV0Message(opts.lookupTables);
  return new VersionedTransaction(message);
}
