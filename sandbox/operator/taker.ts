/**
 * A taker's side of the operator's API, for the demo and the load test's swap phase: ask for an
 * order, sign its transaction, execute it, and read the taker's balances from the chain.
 */
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Connection, type Keypair, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { NATIVE_MINT } from "../../src/program/layout.ts";
import type { ExecuteResult, SwapOrder } from "./wire.ts";

export interface OrderAsk {
  inputMint: string;
  outputMint: string;
  amount: bigint;
  swapMode?: "ExactIn" | "ExactOut";
}

export type Answer<T> = { ok: true; body: T } | { ok: false; status: number; error: string };

export class TakerClient {
  readonly connection: Connection;

  constructor(
    readonly operatorUrl: string,
    chainUrl: string,
    readonly apiKey?: string,
  ) {
    this.connection = new Connection(chainUrl, "confirmed");
  }

  #headers(): Record<string, string> {
    return { "content-type": "application/json", ...(this.apiKey ? { "x-api-key": this.apiKey } : {}) };
  }

  async order(ask: OrderAsk, taker: PublicKey): Promise<Answer<SwapOrder>> {
    const q = new URLSearchParams({
      inputMint: ask.inputMint,
      outputMint: ask.outputMint,
      amount: ask.amount.toString(),
      swapMode: ask.swapMode ?? "ExactIn",
      taker: taker.toBase58(),
    });
    const res = await fetch(`${this.operatorUrl}/ultra/v1/order?${q}`, { headers: this.#headers() });
    const body = (await res.json()) as SwapOrder & { error?: string };
    if (res.status !== 200)
      return { ok: false, status: res.status, error: body.error ?? JSON.stringify(body) };
    return { ok: true, body };
  }

  /** Signs the order's transaction as the taker and executes it; waits for the operator's result. */
  /** `taker`: the taker's key, or a smart-account taker's members (who sign instead of its vault). */
  async execute(
    order: SwapOrder,
    taker: Keypair | readonly Keypair[],
    path = "/swap/v2/execute",
  ): Promise<Answer<ExecuteResult>> {
    if (!order.transaction)
      return {
        ok: false,
        status: 0,
        error: `order has no transaction (${order.errorMessage ?? "no taker"})`,
      };
    const tx = VersionedTransaction.deserialize(Buffer.from(order.transaction, "base64"));
    tx.sign(Array.isArray(taker) ? [...taker] : [taker as Keypair]);
    const res = await fetch(`${this.operatorUrl}${path}`, {
      method: "POST",
      headers: this.#headers(),
      body: JSON.stringify({
        signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
        requestId: order.requestId,
      }),
    });
    const body = (await res.json()) as ExecuteResult & { error?: string };
    if (res.status !== 200)
      return { ok: false, status: res.status, error: `${body.error} (code ${body.code})` };
    return { ok: true, body };
  }

  /** A mint's supply, read from its account (the u64 at offset 36 of the base mint layout). */
  async supply(mint: string): Promise<bigint> {
    const info = await this.connection.getAccountInfo(new PublicKey(mint), "confirmed");
    if (!info) throw new Error(`mint ${mint} does not exist on the chain`);
    return Buffer.from(info.data).readBigUInt64LE(36);
  }

  /** Lamports, and the balance of the taker's ATA for each mint (0 when the ATA does not exist). */
  async balances(owner: PublicKey, mints: string[]): Promise<Record<string, bigint>> {
    const out: Record<string, bigint> = {
      lamports: BigInt(await this.connection.getBalance(owner, "confirmed")),
    };
    for (const m of mints) {
      const mint = new PublicKey(m);
      const info = await this.connection.getAccountInfo(mint, "confirmed");
      if (!info) throw new Error(`mint ${m} does not exist on the chain`);
      const ata = getAssociatedTokenAddressSync(mint, owner, true, info.owner);
      const acc = await this.connection.getAccountInfo(ata, "confirmed");
      out[m] = acc
        ? BigInt((await this.connection.getTokenAccountBalance(ata, "confirmed")).value.amount)
        : 0n;
    }
    return out;
  }
}

/**
 * What a landed order must have done to the taker: the input leg down by inAmount, the output leg up
 * by outAmount (lamports for native SOL legs), and lamports down by the ATA rent the taker paid;
 * nothing else (the maker pays every fee). Keys as `balances` returns them.
 */
export function expectedDeltas(order: SwapOrder, taker: PublicKey): Record<string, bigint> {
  const d: Record<string, bigint> = { lamports: 0n };
  const add = (k: string, v: bigint) => {
    d[k] = (d[k] ?? 0n) + v;
  };
  const native = NATIVE_MINT.toBase58();
  // The simulator takes native SOL legs for the SOL side (wrapAndUnwrapSol defaults to true).
  add(order.inputMint === native ? "lamports" : order.inputMint, -BigInt(order.inAmount));
  add(order.outputMint === native ? "lamports" : order.outputMint, BigInt(order.outAmount));
  if (order.rentFeePayer === taker.toBase58()) add("lamports", -BigInt(order.rentFeeLamports));
  if (order.inputMint !== native) d[order.inputMint] ??= 0n;
  return d;
}
