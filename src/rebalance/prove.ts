/**
 * After the shape check (shape.ts), prove that the transaction does only what the order says: run it
 * unsigned (Chain.simulateUnsigned) and compare every account the maker owns or controls before and
 * after.
 *
 * Watched: the maker's wallet, its ATA of every configured token, and every account key of the
 * message. Among them, every token account the maker owns, or whose delegate or close authority is
 * the maker, before or after (whatever its mint, configured or not). Refused unless:
 * - the wallet keeps its owner (the System program) and its data (none);
 * - no such token account changes owner, delegate or close authority;
 * - the input mint leaves the maker's token accounts by at most `inAmount`, the output mint arrives by
 *   at least `outAmount`, and no other mint moves at all;
 * - the maker's SOL, its wallet's lamports plus the lamports of every token account it owns (wrapped
 *   SOL and rent included), falls by no more than what the order moves of SOL plus the fees the order
 *   declares the maker pays (signature, priority, rent), and never more than `rebalance.maxFeeLamports`
 *   of fees; a gasless order declares none;
 * - the simulation succeeds.
 *
 * What it cannot check: the state the transaction meets when it lands may differ from the state it was
 * simulated on (another transaction in between); an account the message does not name is untouched
 * by construction (Solana locks only named accounts).
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import { ataFor } from "../../inventory/holdings.ts";
import type { AccountSnapshot, Chain } from "../chain/interface.ts";
import type { SwapOrder } from "../operator-api/wire.ts";
import { NATIVE_MINT, SYSTEM_PROGRAM_ID } from "../program/layout.ts";
import type { RefusalCode, Refused } from "../refusal/codes.ts";
import { readTokenAccount, type TokenAccountView } from "./token-account.ts";

export interface OrderAmounts {
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
  /** The lamports the order declares the maker pays (fees and rent); 0 for a gasless order. */
  declaredFeeLamports: bigint;
}

export type ProofResult =
  | {
      ok: true;
      /** Per mint, the maker's change (smallest units; wrapped SOL without the wallet's lamports). */
      deltas: Map<string, bigint>;
      /** The maker's SOL change: the wallet and every token account it owns. */
      lamportsDelta: bigint;
    }
  /** Its codes are RebalanceRefusalCode's and SIMULATION_FAILED (src/refusal/codes.ts). */
  | Refused;

/** The lamports `order` says the maker (as taker) pays: none when gasless. */
export function declaredMakerFees(order: SwapOrder, maker: string): bigint {
  if (order.gasless) return 0n;
  const paid = (lamports: number, payer: string | null) =>
    // Stryker disable next-line EqualityOperator: at 0 lamports both branches give 0n
    payer === maker && Number.isSafeInteger(lamports) && lamports > 0 ? BigInt(lamports) : 0n;
  return (
    paid(order.signatureFeeLamports, order.signatureFeePayer) +
    paid(order.prioritizationFeeLamports, order.prioritizationFeePayer) +
    paid(order.rentFeeLamports, order.rentFeePayer)
  );
}

const no = (code: RefusalCode, context: string): Refused => ({ ok: false, code, context });

/** Owner, delegate and close authority of one watched token account the maker owns or controls. */
function authorities(address: string, me: string, before?: TokenAccountView, after?: TokenAccountView) {
  const controls = (v?: TokenAccountView) =>
    v !== undefined && (v.owner === me || v.delegate === me || v.closeAuthority === me);
  if (!controls(before) && !controls(after)) return undefined;
  if (before && after) {
    if (before.owner !== after.owner)
      return no(
        "REBALANCE_OWNER_CHANGED",
        `the maker's token account ${address} changes owner to ${after.owner}`,
      );
    if (before.delegate !== after.delegate)
      return no(
        "REBALANCE_DELEGATE_CHANGED",
        `the maker's token account ${address} changes delegate from ${before.delegate} to ${after.delegate}`,
      );
    if (before.closeAuthority !== after.closeAuthority)
      return no(
        "REBALANCE_CLOSE_AUTHORITY_CHANGED",
        `the maker's token account ${address} changes close authority from ${before.closeAuthority} to ${after.closeAuthority}`,
      );
  } else if (after && after.owner === me && (after.delegate !== null || after.closeAuthority !== null)) {
    // A maker account the transaction creates must come without anyone else's authority.
    return no(
      after.delegate !== null ? "REBALANCE_DELEGATE_CHANGED" : "REBALANCE_CLOSE_AUTHORITY_CHANGED",
      `the maker's new token account ${address} has delegate ${after.delegate}, close authority ${after.closeAuthority}`,
    );
  }
  return undefined;
}

/** Simulates `tx` unsigned and checks the maker's accounts against `order`; see the module comment. */
export async function proveTransaction(args: {
  tx: VersionedTransaction;
  order: OrderAmounts;
  maker: PublicKey;
  config: Config;
  chain: Chain;
  maxFeeLamports: bigint;
}): Promise<ProofResult> {
  const { tx, order, maker, config, chain } = args;
  if (!chain.simulateUnsigned)
    return no(
      "REBALANCE_SIMULATION_UNAVAILABLE",
      `the chain (${chain.description}) cannot simulate with post-state`,
    );

  const watch = new Map<string, PublicKey>();
  watch.set(maker.toBase58(), maker);
  for (const t of config.file.tokens) {
    const a = ataFor(maker, t);
    watch.set(a.toBase58(), a);
  }
  for (const k of tx.message.staticAccountKeys) watch.set(k.toBase58(), k);
  const list = [...watch.values()];
  const pre = await chain.getAccounts(list);
  const sim = await chain.simulateUnsigned(tx, list);
  if (!sim.ok) return no("SIMULATION_FAILED", sim.error);

  const me = maker.toBase58();
  const wallet = { before: pre[0] ?? null, after: sim.post[0] ?? null };
  const walletProblem = walletChange(wallet.before, wallet.after);
  if (walletProblem) return no("REBALANCE_WALLET_OWNER_CHANGED", walletProblem);

  const deltas = new Map<string, bigint>();
  let lamportsDelta = (wallet.after?.lamports ?? 0n) - (wallet.before?.lamports ?? 0n);
  for (let i = 1; i < list.length; i++) {
    const address = (list[i] as PublicKey).toBase58();
    const before = readTokenAccount(pre[i] ?? null);
    const after = readTokenAccount(sim.post[i] ?? null);
    const bad = authorities(address, me, before, after);
    if (bad) return bad;
    const mineBefore = before?.owner === me ? before : undefined;
    const mineAfter = after?.owner === me ? after : undefined;
    const mine = mineAfter ?? mineBefore;
    if (!mine) continue;
    const mint = mine.mint;
    const change = (mineAfter?.amount ?? 0n) - (mineBefore?.amount ?? 0n);
    deltas.set(mint, (deltas.get(mint) ?? 0n) + change);
    lamportsDelta += (mineAfter?.lamports ?? 0n) - (mineBefore?.lamports ?? 0n);
  }

  const native = NATIVE_MINT.toBase58();
  for (const [mint, delta] of deltas) {
    if (mint === native) continue;
    if (mint === order.inputMint) {
      if (-delta > order.inAmount)
        return no(
          "REBALANCE_INPUT_EXCEEDED",
          `${mint} leaves the maker by ${-delta}, more than the order's inAmount ${order.inAmount}`,
        );
    } else if (mint !== order.outputMint && delta !== 0n) {
      return no(
        "REBALANCE_OTHER_TOKEN_MOVED",
        `${mint}, not in the order, moves the maker's balance by ${delta}`,
      );
    }
  }
  if (order.outputMint !== native && (deltas.get(order.outputMint) ?? 0n) < order.outAmount)
    return no(
      "REBALANCE_OUTPUT_BELOW_ORDER",
      `${order.outputMint} reaches the maker by ${deltas.get(order.outputMint) ?? 0n}, less than the order's outAmount ${order.outAmount}`,
    );
  // SOL, native and wrapped, as one asset: what the order moves of it, plus the fees it declares.
  const fees =
    // Stryker disable next-line EqualityOperator: when the two are equal either is the fee
    order.declaredFeeLamports < args.maxFeeLamports ? order.declaredFeeLamports : args.maxFeeLamports;
  const solIn = order.inputMint === native ? order.inAmount : 0n;
  const solOut = order.outputMint === native ? order.outAmount : 0n;
  if (lamportsDelta < solOut - solIn - fees) {
    const code: RefusalCode =
      solOut > 0n
        ? "REBALANCE_OUTPUT_BELOW_ORDER"
        : solIn > 0n
          ? "REBALANCE_INPUT_EXCEEDED"
          : "REBALANCE_SOL_LEFT_MAKER";
    return no(
      code,
      `the maker's SOL (wallet and token accounts) changes by ${lamportsDelta} lamports: ` +
        `${solOut - solIn - lamportsDelta} leave it beyond what the order moves of SOL, and the order declares ` +
        `${order.declaredFeeLamports} of fees for the maker` +
        `${fees < order.declaredFeeLamports ? ` (capped at rebalance.maxFeeLamports, ${fees})` : ""}`,
    );
  }
  return { ok: true, deltas, lamportsDelta };
}

/** Why the wallet is no longer a plain wallet, or undefined. */
function walletChange(before: AccountSnapshot | null, after: AccountSnapshot | null): string | undefined {
  if (!after) return before ? "the maker's wallet is emptied and closed" : undefined;
  // A wallet the transaction creates (none before) must come out a plain wallet as well.
  if (!after.owner.equals(SYSTEM_PROGRAM_ID) || (before !== null && !after.owner.equals(before.owner)))
    return `the maker's wallet is assigned to ${after.owner.toBase58()}`;
  if (after.data.length !== (before ? before.data.length : 0))
    return `the maker's wallet gets ${after.data.length} bytes of data`;
  return undefined;
}
