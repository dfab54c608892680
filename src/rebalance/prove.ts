/**
 * Before the maker signs an order's transaction, prove that it does only what the order says: run it
 * unsigned (Chain.simulateUnsigned) and compare the maker's balance changes with the order.
 *
 * Watched: the maker's wallet, the maker's ATA of every configured token, and every writable account
 * of the message. Among them, every token account the maker owns before or after counts (whatever its
 * mint, configured or not). The transaction is refused unless:
 * - the input mint leaves the maker's accounts by at most `inAmount`;
 * - the output mint arrives by at least `outAmount`;
 * - no other mint moves at all;
 * - no maker token account changes owner or delegate (an approval would let someone move it later);
 * - the wallet's lamports fall by at most the fee cap (`rebalance.maxFeeLamports`), native SOL counted
 *   with wrapped SOL as one asset (an order may pay or deliver SOL either way);
 * - the message uses no address lookup table (its accounts could not all be watched), and the
 *   simulation succeeds.
 */
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import { ataFor } from "../../inventory/holdings.ts";
import type { AccountSnapshot, Chain } from "../chain/interface.ts";
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../fill/layout.ts";

export interface OrderAmounts {
  inputMint: string;
  outputMint: string;
  inAmount: bigint;
  outAmount: bigint;
}

export type ProofResult =
  | {
      ok: true;
      /** Per mint, the maker's change (smallest units; wrapped SOL without the wallet's lamports). */
      deltas: Map<string, bigint>;
      lamportsDelta: bigint;
    }
  | { ok: false; code: ProofRefusal; detail: string };

/** Refusal codes (fixed names, house style 8). */
export type ProofRefusal =
  | "LOOKUP_TABLES_UNSUPPORTED"
  | "MAKER_NOT_SIGNER"
  | "SIMULATION_UNAVAILABLE"
  | "SIMULATION_FAILED"
  | "INPUT_EXCEEDED"
  | "OUTPUT_BELOW_ORDER"
  | "OTHER_TOKEN_MOVED"
  | "AUTHORITY_CHANGED"
  | "LAMPORTS_EXCEEDED";

interface TokenView {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
}

function tokenView(acc: AccountSnapshot | null): TokenView | undefined {
  if (!acc) return undefined;
  if (!acc.owner.equals(TOKEN_PROGRAM_ID) && !acc.owner.equals(TOKEN_2022_PROGRAM_ID)) return undefined;
  const d = Buffer.from(acc.data);
  // SPL token account layout (Token-2022's base is the same); a mint (82 bytes) is not one.
  if (d.length < 165) return undefined;
  const hasDelegate = d.readUInt32LE(72) === 1;
  return {
    mint: new PublicKey(d.subarray(0, 32)).toBase58(),
    owner: new PublicKey(d.subarray(32, 64)).toBase58(),
    amount: d.readBigUInt64LE(64),
    delegate: hasDelegate ? new PublicKey(d.subarray(76, 108)).toBase58() : null,
  };
}

/** Simulates `tx` unsigned and checks the maker's balance changes against `order`. */
export async function proveTransaction(args: {
  tx: VersionedTransaction;
  order: OrderAmounts;
  maker: PublicKey;
  config: Config;
  chain: Chain;
  maxFeeLamports: bigint;
}): Promise<ProofResult> {
  const { tx, order, maker, config, chain } = args;
  const msg = tx.message;
  if (msg.addressTableLookups.length > 0) {
    return {
      ok: false,
      code: "LOOKUP_TABLES_UNSUPPORTED",
      detail: "the transaction loads accounts from lookup tables, which this check cannot watch",
    };
  }
  const keys = msg.staticAccountKeys;
  const signerIndex = keys.findIndex((k) => k.equals(maker));
  if (signerIndex < 0 || signerIndex >= msg.header.numRequiredSignatures) {
    return { ok: false, code: "MAKER_NOT_SIGNER", detail: "the maker is not a signer of this transaction" };
  }
  if (!chain.simulateUnsigned) {
    return {
      ok: false,
      code: "SIMULATION_UNAVAILABLE",
      detail: `the chain (${chain.description}) cannot simulate with post-state`,
    };
  }

  const watch = new Map<string, PublicKey>();
  watch.set(maker.toBase58(), maker);
  for (const t of config.file.tokens) {
    const a = ataFor(maker, t);
    watch.set(a.toBase58(), a);
  }
  keys.forEach((k, i) => {
    if (msg.isAccountWritable(i)) watch.set(k.toBase58(), k);
  });
  const list = [...watch.values()];
  const pre = await chain.getAccounts(list);
  const sim = await chain.simulateUnsigned(tx, list);
  if (!sim.ok) return { ok: false, code: "SIMULATION_FAILED", detail: sim.error };

  const me = maker.toBase58();
  const deltas = new Map<string, bigint>();
  for (let i = 0; i < list.length; i++) {
    const before = tokenView(pre[i] ?? null);
    const after = tokenView(sim.post[i] ?? null);
    const mine = (v: TokenView | undefined) => v?.owner === me;
    if (!mine(before) && !mine(after)) continue;
    const address = list[i]!.toBase58();
    if (mine(before) && after && !mine(after)) {
      return {
        ok: false,
        code: "AUTHORITY_CHANGED",
        detail: `the maker's token account ${address} changes owner to ${after.owner}`,
      };
    }
    if ((before?.delegate ?? null) !== (after?.delegate ?? null) && after?.delegate) {
      return {
        ok: false,
        code: "AUTHORITY_CHANGED",
        detail: `the maker's token account ${address} gets delegate ${after.delegate}`,
      };
    }
    const mint = (after ?? before)!.mint;
    const change = (mine(after) ? after!.amount : 0n) - (mine(before) ? before!.amount : 0n);
    deltas.set(mint, (deltas.get(mint) ?? 0n) + change);
  }
  const lamportsDelta = (sim.post[0]?.lamports ?? 0n) - (pre[0]?.lamports ?? 0n);

  const native = NATIVE_MINT.toBase58();
  for (const [mint, delta] of deltas) {
    if (mint === native) continue;
    if (mint === order.inputMint) {
      if (-delta > order.inAmount)
        return {
          ok: false,
          code: "INPUT_EXCEEDED",
          detail: `${mint} leaves the maker by ${-delta}, more than the order's inAmount ${order.inAmount}`,
        };
    } else if (mint === order.outputMint) {
      // checked below, also when it does not move at all
    } else if (delta !== 0n) {
      return {
        ok: false,
        code: "OTHER_TOKEN_MOVED",
        detail: `${mint}, not in the order, moves the maker's balance by ${delta}`,
      };
    }
  }
  if (order.outputMint !== native && (deltas.get(order.outputMint) ?? 0n) < order.outAmount) {
    return {
      ok: false,
      code: "OUTPUT_BELOW_ORDER",
      detail: `${order.outputMint} reaches the maker by ${deltas.get(order.outputMint) ?? 0n}, less than the order's outAmount ${order.outAmount}`,
    };
  }
  // Native SOL and wrapped SOL as one asset: what the order moves of it, plus at most the fee cap.
  const sol = lamportsDelta + (deltas.get(native) ?? 0n);
  const solIn = order.inputMint === native ? order.inAmount : 0n;
  const solOut = order.outputMint === native ? order.outAmount : 0n;
  if (sol < solOut - solIn - args.maxFeeLamports) {
    const spent = solOut - solIn - sol;
    return {
      ok: false,
      code: solIn > 0n && -sol > solIn + args.maxFeeLamports ? "INPUT_EXCEEDED" : "LAMPORTS_EXCEEDED",
      detail:
        `the maker's SOL (wallet and wrapped) changes by ${sol} lamports: ${spent} beyond what the order moves, ` +
        `over the fee cap of ${args.maxFeeLamports}`,
    };
  }
  return { ok: true, deltas, lamportsDelta };
}
