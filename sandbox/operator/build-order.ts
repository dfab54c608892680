/**
 * From the winning maker quote to the unsigned fill transaction, built as the operator builds it:
 * the taker's balances checked (except permissioned pairs), the taker's output ATA created at the
 * taker's cost when missing, `expire_at` = now + 55 s, the maker's `prioritizationFeeToUse` as the
 * compute-unit price, the compute-unit limit from a simulation (or the 200,000 maximum for permissioned
 * pairs, which are not simulated), and a recent blockhash from the chain. The fill's amounts carry
 * the operator's fee on the side of the order's fee mint (fee-mint.ts), computed by the caller.
 */
import { ACCOUNT_SIZE, getAssociatedTokenAddressSync, unpackAccount } from "@solana/spl-token";
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { AccountSnapshot, Chain } from "../../src/chain/interface.ts";
import {
  LAMPORTS_PER_SIGNATURE,
  NATIVE_MINT,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "../../src/program/layout.ts";
import { buildFillTransaction } from "../fill/builder.ts";
import type { MakerQuote, QuoteIntent } from "./fanout.ts";
import { type FeeSide, type OrderAmounts, orderAmountsFor } from "./fee-mint.ts";

/** A quote's transaction lives 55 s from creation (docs/contract.md, "Time limits"). */
export const ORDER_LIFETIME_S = 55n;
/** The compute-unit limit for permissioned pairs (no simulation) and the ceiling for the rest. */
export const MAX_COMPUTE_UNIT_LIMIT = 200_000;
/** Token-2022 ATAs carry the ImmutableOwner extension: 165 + 1 (type) + 4 (TLV header). */
const TOKEN_2022_ATA_SIZE = ACCOUNT_SIZE + 5;

export type SimulationResult = { ok: true; unitsConsumed: number } | { ok: false; error: string };

/** The chain as the operator sees it: the Chain port plus (optionally) a simulation call. */
export interface OperatorChain {
  chain: Chain;
  /** Runs a transaction without committing it (signatures not checked). */
  simulate?: (tx: VersionedTransaction) => Promise<SimulationResult>;
}

export interface BuildOptions {
  /** Compute-unit price when the maker names none (micro-lamports per CU). */
  defaultComputeUnitPrice: number;
  /** Limit used when no simulation is available. */
  fallbackComputeUnitLimit: number;
  /** Headroom over the simulated units (the operator's margin). */
  computeUnitMargin: number;
  now: () => number;
}

export const DEFAULT_BUILD_OPTIONS: BuildOptions = {
  defaultComputeUnitPrice: 10_000,
  fallbackComputeUnitLimit: MAX_COMPUTE_UNIT_LIMIT,
  computeUnitMargin: 1.2,
  now: Date.now,
};

export interface BuiltOrder {
  tx: VersionedTransaction;
  /** The serialized message: the execute check compares the signed transaction's to these bytes. */
  messageBytes: Uint8Array;
  lastValidBlockHeight: bigint;
  /** Unix seconds. */
  expireAt: bigint;
  inputAmount: bigint;
  /** What the taker receives (net of the fee when the fee is in the output mint). */
  outputAmount: bigint;
  /** The operator's fee, in the fee side's mint (fee-mint.ts). */
  fee: bigint;
  feeSide: FeeSide;
  computeUnitLimit: number;
  computeUnitPrice: bigint;
  createsTakerOutputAta: boolean;
  /** Rent the taker pays for the created ATA, lamports (0 when none). */
  rentLamports: bigint;
  signatureFeeLamports: bigint;
  prioritizationFeeLamports: bigint;
  nativeSolIn: boolean;
  nativeSolOut: boolean;
}

/** Why no transaction: the order still answers, with the seed's errorCode (1, 2) and message. */
export type BuildFailure =
  | { kind: "insufficientFunds"; errorCode: 1; errorMessage: string }
  | { kind: "topUpSol"; errorCode: 2; errorMessage: string }
  | { kind: "simulationFailed"; detail: string }
  | { kind: "unsupported"; detail: string };

export type BuildResult = { ok: true; order: BuiltOrder } | { ok: false; failure: BuildFailure };

function tokenProgramOf(mint: AccountSnapshot | null): PublicKey | undefined {
  if (!mint) return undefined;
  if (mint.owner.equals(TOKEN_PROGRAM_ID) || mint.owner.equals(TOKEN_2022_PROGRAM_ID)) return mint.owner;
  return undefined;
}

function tokenAmount(address: PublicKey, snap: AccountSnapshot | null, program: PublicKey): bigint {
  if (!snap) return 0n;
  try {
    const info = {
      data: Buffer.from(snap.data),
      owner: snap.owner,
      lamports: Number(snap.lamports),
      executable: snap.executable,
    };
    return unpackAccount(address, info, program).amount;
  } catch {
    return 0n;
  }
}

const lamportsToSol = (l: bigint): string => (Number(l) / 1e9).toFixed(9).replace(/\.?0+$/, "");

/**
 * Builds the fill for one maker quote. `permissioned` pairs skip the balance check and the simulation
 * (limit = 200,000), as the operator does.
 */
export async function buildOrder(
  chain: OperatorChain,
  quote: MakerQuote,
  intent: QuoteIntent & { taker: string },
  permissioned: boolean,
  opts: BuildOptions = DEFAULT_BUILD_OPTIONS,
  fee: { side: FeeSide; amounts: OrderAmounts } = {
    side: "output",
    amounts: orderAmountsFor("output", intent.quoteType, intent.amount, quote, intent.feeBps),
  },
): Promise<BuildResult> {
  const { inputAmount, outputAmount } = fee.amounts;
  const taker = new PublicKey(intent.taker);
  const maker = new PublicKey(quote.response.maker);
  const inputMint = new PublicKey(intent.inputMint);
  const outputMint = new PublicKey(intent.outputMint);
  const nativeSolIn = inputMint.equals(NATIVE_MINT) && !intent.isWsol;
  const nativeSolOut = outputMint.equals(NATIVE_MINT) && !intent.isWsol;

  const [inMintAcc, outMintAcc, takerAcc] = await chain.chain.getAccounts([inputMint, outputMint, taker]);
  const inputTokenProgram = tokenProgramOf(inMintAcc ?? null);
  const outputTokenProgram = tokenProgramOf(outMintAcc ?? null);
  if (!inputTokenProgram || !outputTokenProgram) {
    return {
      ok: false,
      failure: { kind: "unsupported", detail: "a mint is missing on chain or not an SPL mint" },
    };
  }
  const takerIn = getAssociatedTokenAddressSync(inputMint, taker, true, inputTokenProgram);
  const takerOut = getAssociatedTokenAddressSync(outputMint, taker, true, outputTokenProgram);
  const [takerInAcc, takerOutAcc] = await chain.chain.getAccounts([takerIn, takerOut]);

  const createsTakerOutputAta = !nativeSolOut && !takerOutAcc;
  const ataSize = outputTokenProgram.equals(TOKEN_2022_PROGRAM_ID) ? TOKEN_2022_ATA_SIZE : ACCOUNT_SIZE;
  const rentLamports = createsTakerOutputAta
    ? await chain.chain.getMinimumBalanceForRentExemption(ataSize)
    : 0n;
  const takerLamports = takerAcc?.lamports ?? 0n;

  if (!permissioned) {
    // Permissioned pairs get no taker pre-check: the maker must check and reject (docs/contract.md).
    const have = nativeSolIn ? takerLamports : tokenAmount(takerIn, takerInAcc ?? null, inputTokenProgram);
    if (have < inputAmount) {
      return {
        ok: false,
        failure: { kind: "insufficientFunds", errorCode: 1, errorMessage: "Insufficient funds" },
      };
    }
    const lamportsNeeded = rentLamports + (nativeSolIn ? inputAmount : 0n);
    if (takerLamports < lamportsNeeded) {
      return {
        ok: false,
        failure: {
          kind: "topUpSol",
          errorCode: 2,
          errorMessage: `Top up ${lamportsToSol(lamportsNeeded - takerLamports)} SOL for gas`,
        },
      };
    }
  }

  const { blockhash, lastValidBlockHeight } = await chain.chain.getLatestBlockhash();
  const expireAt = BigInt(Math.floor(opts.now() / 1000)) + ORDER_LIFETIME_S;
  const computeUnitPrice = BigInt(quote.response.prioritizationFeeToUse ?? opts.defaultComputeUnitPrice);
  const params = {
    maker,
    taker,
    inputMint,
    outputMint,
    inputTokenProgram,
    outputTokenProgram,
    inputAmount,
    outputAmount,
    expireAt,
    feeBps: intent.feeBps,
    exactOut: intent.quoteType === "exactOut",
    computeUnitLimit: MAX_COMPUTE_UNIT_LIMIT,
    computeUnitPrice,
    recentBlockhash: blockhash,
    createTakerOutputAta: createsTakerOutputAta,
    nativeSolIn,
    nativeSolOut,
  };

  let computeUnitLimit = MAX_COMPUTE_UNIT_LIMIT;
  if (!permissioned) {
    if (chain.simulate) {
      const sim = await chain.simulate(buildFillTransaction(params));
      if (!sim.ok) return { ok: false, failure: { kind: "simulationFailed", detail: sim.error } };
      computeUnitLimit = Math.min(
        MAX_COMPUTE_UNIT_LIMIT,
        Math.ceil(sim.unitsConsumed * opts.computeUnitMargin),
      );
    } else {
      computeUnitLimit = opts.fallbackComputeUnitLimit;
    }
  }
  const tx = buildFillTransaction({ ...params, computeUnitLimit });
  const signatures = BigInt(tx.message.header.numRequiredSignatures);
  return {
    ok: true,
    order: {
      tx,
      messageBytes: tx.message.serialize(),
      lastValidBlockHeight,
      expireAt,
      inputAmount,
      outputAmount,
      fee: fee.amounts.fee,
      feeSide: fee.side,
      computeUnitLimit,
      computeUnitPrice,
      createsTakerOutputAta,
      rentLamports,
      signatureFeeLamports: signatures * LAMPORTS_PER_SIGNATURE,
      // Micro-lamports per CU times the limit, rounded up to whole lamports as the runtime charges.
      prioritizationFeeLamports: (computeUnitPrice * BigInt(computeUnitLimit) + 999_999n) / 1_000_000n,
      nativeSolIn,
      nativeSolOut,
    },
  };
}
