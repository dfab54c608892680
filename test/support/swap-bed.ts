/**
 * The bed the end-to-end /swap security suites share: the composed service on a real socket over a
 * local chain, its signer wrapped to count maker signatures and its chain wrapped to count sends and
 * simulations (observed, never faked), and one funded taker. `balances()` is every balance of maker
 * and taker (SOL and each configured mint): what a refused fill must leave exactly where it was.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { fundTaker, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "./config.ts";
import {
  type CountingSigner,
  type Fetcher,
  type Harness,
  type HarnessOptions,
  listen,
  ObservedChain,
  observedHarness,
} from "./harness.ts";

const MINTS = Object.values(MINT).map((m) => new PublicKey(m));

export interface SwapBed {
  h: Harness;
  signer: CountingSigner;
  chain: ObservedChain;
  http: Fetcher;
  taker: Keypair;
  balances(): Record<string, bigint>;
  close(): Promise<void>;
}

export interface SwapBedOptions {
  harness?: Omit<HarnessOptions, "wrapChain" | "wrapSigner">;
  /** Default: a fresh key. */
  taker?: Keypair;
  /** Default: 5 SOL, 100,000 JUP and 100,000 USDC. */
  takerFunds?: Parameters<typeof fundTaker>[2];
}

export async function swapBed(opts: SwapBedOptions = {}): Promise<SwapBed> {
  const { h, signer, chain } = await observedHarness(opts.harness ?? {}, (c) => new ObservedChain(c));
  const server = await listen(h.app);
  const taker = opts.taker ?? Keypair.generate();
  fundTaker(
    h.chain,
    taker.publicKey,
    opts.takerFunds ?? {
      sol: 5_000_000_000n,
      tokens: { [MINT.JUP]: 100_000_000_000n, [MINT.USDC]: 100_000_000_000n },
    },
  );
  return {
    h,
    signer,
    chain,
    http: server.fetch,
    taker,
    balances() {
      const out: Record<string, bigint> = {};
      for (const who of [taker.publicKey, h.maker.publicKey]) {
        out[`${who.toBase58()}:lamports`] = lamports(h.chain, who);
        for (const m of MINTS) out[`${who.toBase58()}:${m.toBase58()}`] = tokenBalance(h.chain, who, m);
      }
      return out;
    },
    async close() {
      await server.close();
      await h.close();
    },
  };
}
