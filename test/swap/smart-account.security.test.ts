/**
 * Smart-account (Squads) takers end to end, over a real socket on the local chain: the quote's fill,
 * wrapped exactly as the toolkit's SDK wraps it (sandbox/fill/smart-account.ts) and signed by the
 * smart account's members, is accepted, co-signed in the maker's own slot (not slot 0), answered with
 * the transaction's id (its first signature, the paying member's) as txSignature, lands through the
 * local chain's stand-in for the smart-account program, and moves the vault's and the maker's
 * balances exactly as quoted, the maker paying no network fee. Every envelope of the smart-account
 * attack table is refused with its code: no maker signature, nothing sent, no balance of the maker,
 * the vault or the members moved.
 */
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker, lamports, seedSmartAccount, tokenBalance } from "../../src/chain/local/seed.ts";
import { operatorFee } from "../../src/program/layout.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import {
  newSmartAccount,
  SMART_ACCOUNT_ATTACKS,
  type SmartAccountScenario,
  signAsMembers,
  smartAccountScenarioFromQuote,
  wrapped,
} from "../fill/smart-account-attacks.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Fetcher,
  type Harness,
  type ObservedChain,
  postSwap,
} from "../support/harness.ts";
import { type SwapBed, swapBed } from "../support/swap-bed.ts";

const JUP = new PublicKey(MINT.JUP);
const USDC = new PublicKey(MINT.USDC);

let bed: SwapBed;
let h: Harness;
let signer: CountingSigner;
let chain: ObservedChain;
let http: Fetcher;
let sa: ReturnType<typeof newSmartAccount>;

beforeAll(async () => {
  bed = await swapBed();
  ({ h, signer, chain, http } = bed);
  sa = newSmartAccount();
  seedSmartAccount(h.chain, { settings: sa.account.settings, members: sa.account.members });
  fundTaker(h.chain, sa.account.vault, { sol: 1_000_000_000n, tokens: { [MINT.JUP]: 100_000_000_000n } });
  for (const m of sa.members) fundTaker(h.chain, m.publicKey, { sol: 1_000_000_000n });
});
afterAll(() => bed.close());

/** Every balance the maker, the vault and the members hold. */
function balances(): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  const who = [h.maker.publicKey, sa.account.vault, ...sa.account.members];
  for (const w of who) {
    out[`${w.toBase58()}:lamports`] = lamports(h.chain, w);
    for (const m of [JUP, USDC]) out[`${w.toBase58()}:${m.toBase58()}`] = tokenBalance(h.chain, w, m);
  }
  return out;
}

async function scenario(amount: bigint): Promise<{ quote: StoredQuote; s: SmartAccountScenario }> {
  const { stored } = await askQuote(h, http, {
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount,
    feeBps: 10,
    taker: sa.account.vault,
  });
  const { blockhash } = await h.chain.getLatestBlockhash();
  const s = smartAccountScenarioFromQuote(stored, {
    ...sa,
    maker: h.maker.publicKey,
    tokens: h.config.tokensByMint,
    recentBlockhash: blockhash,
    nowUnix: BigInt(Math.floor(Date.now() / 1000)),
    maxFeeLamports: BigInt(h.config.file.limits.maxFeeLamports),
  });
  return { quote: stored, s };
}

const post = (quote: StoredQuote, tx: VersionedTransaction) =>
  postSwap(http, { requestId: quote.requestId, quoteId: quote.quoteId, transaction: tx });

describe("a smart-account fill built as the toolkit's SDK builds it", () => {
  it("is accepted, co-signed in the maker's slot, lands and moves balances exactly as quoted", async () => {
    const { quote, s } = await scenario(2_000_000_000n);
    const tx = signAsMembers(wrapped(s), sa.members);
    const keys = tx.message.staticAccountKeys;
    const makerSlot = keys.findIndex((k) => k.equals(h.maker.publicKey));
    expect(keys[0]!.equals(sa.account.members[0]!)).toBe(true);
    expect(makerSlot).toBeGreaterThan(0);
    expect(makerSlot).toBeLessThan(tx.message.header.numRequiredSignatures);

    const before = balances();
    const signs = signer.count;
    const res = await post(quote, tx);
    expect(res.body.rejectionReason ?? res.body.state).toBe("accepted");
    expect(signer.count).toBe(signs + 1);
    // The transaction's id: its first signature, the paying member's (the toolkit's server example).
    expect(res.body.txSignature).toBe(bs58.encode(tx.signatures[0]!));
    expect(await h.confirmations.settled(quote.quoteId)).toBe("landed");
    const status = await h.chain.getSignatureStatus(res.body.txSignature!);
    expect(status.state).toBe("confirmed");

    const after = balances();
    const quotedIn = BigInt(quote.response.amountIn);
    const quotedOut = BigInt(quote.response.amountOut);
    const net = quotedOut - operatorFee(quotedOut, 10);
    const d = (who: PublicKey, what: string) =>
      after[`${who.toBase58()}:${what}`]! - before[`${who.toBase58()}:${what}`]!;
    const maker = h.maker.publicKey;
    const vault = sa.account.vault;
    expect(d(vault, JUP.toBase58())).toBe(-quotedIn);
    expect(d(maker, JUP.toBase58())).toBe(quotedIn);
    expect(d(vault, USDC.toBase58())).toBe(net);
    expect(d(maker, USDC.toBase58())).toBe(-net);
    // The maker pays no network fee on such a fill; the paying member pays it all.
    expect(d(maker, "lamports")).toBe(0n);
    expect(d(sa.account.members[1]!, "lamports")).toBe(0n);
    expect(d(sa.account.members[0]!, "lamports")).toBeLessThan(-15_000n);
  });
});

describe("POST /swap refuses every smart-account attack, the maker's accounts unchanged", () => {
  it.each(SMART_ACCOUNT_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", async (_name, attack) => {
    const { quote, s } = await scenario(1_000_000_000n);
    const tx = signAsMembers(attack.tamper(s), [...sa.members]);
    const signs = signer.count;
    const sends = chain.sends;
    const before = balances();
    const res = await post(quote, tx);
    expect(res.status).toBe(200);
    expect(res.body.state).toBe("rejected");
    expect(res.body.rejectionReason).toMatch(new RegExp(`^${attack.code}: `));
    expect(signer.count).toBe(signs);
    expect(chain.sends).toBe(sends);
    expect(balances()).toEqual(before);
  });

  it("refuses a smart-account fill whose maker slot is already filled", async () => {
    const { quote, s } = await scenario(1_000_000_000n);
    const tx = signAsMembers(wrapped(s), sa.members);
    const slot = tx.message.staticAccountKeys.findIndex((k) => k.equals(h.maker.publicKey));
    tx.signatures[slot] = new Uint8Array(64).fill(7);
    const before = balances();
    const res = await post(quote, tx);
    expect(res.body.rejectionReason).toMatch(new RegExp(`maker's signature slot \\(${slot}\\)`));
    expect(balances()).toEqual(before);
  });

  it("refuses a smart-account fill a member did not sign", async () => {
    const { quote, s } = await scenario(1_000_000_000n);
    const tx = signAsMembers(wrapped(s), [sa.members[0]!]);
    const before = balances();
    const res = await post(quote, tx);
    expect(res.body.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
    expect(balances()).toEqual(before);
  });
});

describe("the local chain's stand-in for the smart-account program", () => {
  it("fails, charging the paying member only, an execute by members the settings do not list", async () => {
    const strangers = newSmartAccount([Keypair.generate(), Keypair.generate()]);
    // Settings listing other members than the ones signing: the program would refuse the execute.
    seedSmartAccount(h.chain, {
      settings: strangers.account.settings,
      members: [Keypair.generate().publicKey],
    });
    fundTaker(h.chain, strangers.account.vault, {
      sol: 1_000_000_000n,
      tokens: { [MINT.JUP]: 10_000_000_000n },
    });
    for (const m of strangers.members) fundTaker(h.chain, m.publicKey, { sol: 1_000_000_000n });
    const { stored } = await askQuote(h, http, {
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000_000_000n,
      taker: strangers.account.vault,
    });
    const { blockhash } = await h.chain.getLatestBlockhash();
    const s = smartAccountScenarioFromQuote(stored, {
      ...strangers,
      maker: h.maker.publicKey,
      tokens: h.config.tokensByMint,
      recentBlockhash: blockhash,
      nowUnix: BigInt(Math.floor(Date.now() / 1000)),
    });
    const tx = signAsMembers(wrapped(s), strangers.members);
    tx.sign([h.maker]);
    const makerBefore = lamports(h.chain, h.maker.publicKey);
    const sent = await h.chain.send(tx);
    expect(sent.ok).toBe(true);
    const status = await h.chain.getSignatureStatus(bs58.encode(tx.signatures[0]!));
    expect(status.state).toBe("failed");
    expect(lamports(h.chain, h.maker.publicKey)).toBe(makerBefore);
    expect(tokenBalance(h.chain, strangers.account.vault, JUP)).toBe(10_000_000_000n);
  });
});
