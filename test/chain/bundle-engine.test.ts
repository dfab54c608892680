/**
 * The local bundle engine over a real LiteSVM chain: bundles run in order and all or nothing, are
 * refused without a tip, with more than 5 transactions or a bad signature, and their status follows
 * the chain's blockhashes. Also the bundle port factory's choice.
 */
import { createMintToInstruction, createTransferInstruction } from "@solana/spl-token";
import { Keypair, type PublicKey, SystemProgram, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { beforeEach, describe, expect, it } from "vitest";
import { bundleIdOf } from "../../src/chain/bundle.ts";
import { JitoBundleClient } from "../../src/chain/bundle-jito.ts";
import { LocalBundleEngine, localTipAccounts } from "../../src/chain/local/bundle-engine.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { tokenAccountBalance } from "../../src/chain/local/seed.ts";
import { makeBundlePort } from "../../src/chain/make.ts";
import { TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { type BundleBed, bundleBed } from "../support/bundle-bed.ts";
import { testService } from "../support/service.ts";

let chain: LocalChain;
let engine: LocalBundleEngine;
let maker: Keypair;
let taker: Keypair;
let issuer: Keypair;
let mint: PublicKey;
let makerAta: PublicKey;
let takerAta: PublicKey;
let tip: PublicKey;

let bed: BundleBed;
let signed: BundleBed["signed"];
let mintAndTip: BundleBed["mintAndTip"];
let fill: BundleBed["fill"];
let supply: BundleBed["supply"];

beforeEach(() => {
  // Hour-long blocks: heights (and blockhash expiry) move only when a test advances them.
  chain = LocalChain.create({ slotMs: 3_600_000 });
  engine = new LocalBundleEngine(chain);
  bed = bundleBed(chain, engine.tipAccounts[3] as PublicKey);
  ({ maker, taker, issuer, mint, makerAta, takerAta, tip, signed, mintAndTip, fill, supply } = bed);
});

const sig = (tx: VersionedTransaction) => bs58.encode(tx.signatures[0] as Uint8Array);

/** Every account the bundle names, exactly as stored (lamports, owner, data, executable, rent epoch). */
function snapshot(keys: PublicKey[]) {
  return keys.map((k) => {
    const a = chain.svm.getAccount(k);
    return a && { ...a, owner: a.owner.toBase58(), data: Buffer.from(a.data).toString("hex") };
  });
}

describe("local bundle engine", () => {
  it("lands [maker mint + tip, taker fill] in order: the fill spends what the mint created", async () => {
    const tipBefore = chain.svm.getBalance(tip) as bigint;
    const a = mintAndTip(100n);
    const b = fill(100n);
    const sent = await engine.sendBundle([a, b]);
    expect(sent).toEqual({ ok: true, bundleId: bundleIdOf([a, b]) });
    if (!sent.ok) return;
    expect(await engine.getBundleStatus(sent.bundleId)).toEqual({
      state: "landed",
      slot: chain.blockHeight(),
    });
    expect(supply()).toBe(100n);
    expect(tokenAccountBalance(chain, takerAta)).toBe(100n);
    expect(tokenAccountBalance(chain, makerAta)).toBe(0n);
    expect(chain.svm.getBalance(tip)).toBe(tipBefore + 10_000n);
    for (const tx of [a, b]) {
      expect((await chain.getSignatureStatus(sig(tx))).state).toBe("confirmed");
    }
  });

  it("the same bundle in the other order fails: the fill runs first, with nothing to deliver", async () => {
    const sent = await engine.sendBundle([fill(100n), mintAndTip(100n)]);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    const status = await engine.getBundleStatus(sent.bundleId);
    expect(status.state).toBe("failed");
    expect(status.state === "failed" && status.error).toMatch(/^transaction 0 failed/);
    expect(supply()).toBe(0n);
  });

  it("a bundle whose fill fails leaves every account it named byte-for-byte unchanged: supply, balances and fees", async () => {
    const a = mintAndTip(100n);
    const b = fill(150n); // more than the mint created: the token program refuses
    const keys = [
      ...new Map(
        [a, b].flatMap((tx) => tx.message.staticAccountKeys).map((k) => [k.toBase58(), k] as const),
      ).values(),
    ];
    const programs = new Set([TOKEN_PROGRAM_ID.toBase58(), SystemProgram.programId.toBase58()]);
    const watched = keys.filter((k) => !programs.has(k.toBase58()));
    expect(watched.map((k) => k.toBase58())).toEqual(
      expect.arrayContaining([maker, taker, issuer].map((k) => k.publicKey.toBase58())),
    );
    const before = snapshot(watched);

    const sent = await engine.sendBundle([a, b]);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    const status = await engine.getBundleStatus(sent.bundleId);
    expect(status.state).toBe("failed");
    expect(status.state === "failed" && status.error).toMatch(/^transaction 1 failed/);

    expect(snapshot(watched)).toEqual(before);
    expect(supply()).toBe(0n);
    // Neither transaction landed: the first's signature is not confirmed, and its blockhash decides.
    expect(chain.landed(sig(a))).toBeUndefined();
    expect(chain.landed(sig(b))).toBeUndefined();
    expect((await chain.getSignatureStatus(sig(a))).state).toBe("pending");
  });

  it("an account the failed bundle's first transaction created is absent again", async () => {
    const other = Keypair.generate();
    const created = signed(
      maker,
      [
        SystemProgram.createAccount({
          fromPubkey: maker.publicKey,
          newAccountPubkey: other.publicKey,
          lamports: 1_000_000,
          space: 0,
          programId: SystemProgram.programId,
        }),
        SystemProgram.transfer({ fromPubkey: maker.publicKey, toPubkey: tip, lamports: 5_000 }),
      ],
      [other],
    );
    const sent = await engine.sendBundle([created, fill(1n)]);
    expect(sent.ok).toBe(true);
    if (sent.ok) expect((await engine.getBundleStatus(sent.bundleId)).state).toBe("failed");
    expect(chain.svm.getAccount(other.publicKey)).toBeNull();
  });

  it("refuses a bundle that tips none of the tip accounts, or less than 1,000 lamports: nothing runs", async () => {
    const noTip = signed(maker, [createMintToInstruction(mint, makerAta, issuer.publicKey, 100n)], [issuer]);
    const out = await engine.sendBundle([noTip, fill(100n)]);
    expect(out).toMatchObject({ ok: false, reached: "refused" });
    expect(!out.ok && out.error).toMatch(/tip/);
    const small = await engine.sendBundle([mintAndTip(100n, 999n), fill(100n)]);
    expect(small).toMatchObject({ ok: false, reached: "refused" });
    // A transfer of the same size to a non-tip account is no tip either.
    const elsewhere = signed(
      maker,
      [
        createMintToInstruction(mint, makerAta, issuer.publicKey, 100n),
        SystemProgram.transfer({ fromPubkey: maker.publicKey, toPubkey: taker.publicKey, lamports: 10_000 }),
      ],
      [issuer],
    );
    expect((await engine.sendBundle([elsewhere, fill(100n)])).ok).toBe(false);
    expect(supply()).toBe(0n);
    expect(chain.landed(sig(noTip))).toBeUndefined();
  });

  it("takes the tip in any transaction of the bundle, the last one included", async () => {
    const b = signed(
      taker,
      [
        createTransferInstruction(makerAta, takerAta, maker.publicKey, 100n),
        SystemProgram.transfer({ fromPubkey: taker.publicKey, toPubkey: tip, lamports: 1_000 }),
      ],
      [maker],
    );
    const a = signed(maker, [createMintToInstruction(mint, makerAta, issuer.publicKey, 100n)], [issuer]);
    const sent = await engine.sendBundle([a, b]);
    expect(sent.ok).toBe(true);
    if (sent.ok) expect((await engine.getBundleStatus(sent.bundleId)).state).toBe("landed");
  });

  it("refuses more than 5 transactions and an empty bundle", async () => {
    const six = Array.from({ length: 6 }, (_, i) => mintAndTip(BigInt(i + 1)));
    const out = await engine.sendBundle(six);
    expect(out).toMatchObject({ ok: false, reached: "refused" });
    expect(!out.ok && out.error).toMatch(/6 transactions, at most 5/);
    expect((await engine.sendBundle([])).ok).toBe(false);
    expect(supply()).toBe(0n);
    const five = await engine.sendBundle(Array.from({ length: 5 }, (_, i) => mintAndTip(BigInt(i + 1))));
    expect(five.ok).toBe(true);
    expect(supply()).toBe(15n);
  });

  it("refuses a bundle with a transaction whose signature does not verify, before running any", async () => {
    const a = mintAndTip(100n);
    const b = fill(100n);
    const forged = new VersionedTransaction(b.message, [...b.signatures]);
    forged.signatures[1] = Keypair.generate().secretKey.slice(0, 64); // the maker's slot, wrong bytes
    const out = await engine.sendBundle([a, forged]);
    expect(out).toMatchObject({ ok: false, reached: "refused" });
    expect(!out.ok && out.error).toMatch(/^transaction 1: invalid signature for /);
    expect(supply()).toBe(0n);
    expect(chain.landed(sig(a))).toBeUndefined();
  });

  it("refuses a transaction that already landed, and answers a landed bundle sent again with its first outcome", async () => {
    const a = mintAndTip(100n);
    const b = fill(100n);
    const first = await engine.sendBundle([a, b]);
    const again = await engine.sendBundle([a, b]);
    expect(again).toEqual(first);
    expect(supply()).toBe(100n);
    const reuse = await engine.sendBundle([a, mintAndTip(7n)]);
    expect(!reuse.ok && reuse.error).toMatch(/transaction 0: already processed/);
  });

  it("a bundle it never ran is pending while its blockhash is valid, then expired", async () => {
    const a = mintAndTip(100n);
    const id = bundleIdOf([a]);
    const hint = { blockhash: a.message.recentBlockhash };
    expect(await engine.getBundleStatus(id, hint)).toEqual({ state: "pending" });
    chain.advanceBlocks(151);
    expect(await engine.getBundleStatus(id, hint)).toEqual({ state: "expired" });
    // And one whose blockhash expired before it was sent is refused.
    const out = await engine.sendBundle([a]);
    expect(!out.ok && out.error).toMatch(/blockhash not found or expired/);
  });

  it("lists 8 fixed tip accounts, each funded rent-exempt on the chain", async () => {
    const tips = await engine.getTipAccounts();
    expect(tips.map((k) => k.toBase58())).toEqual(localTipAccounts().map((k) => k.toBase58()));
    expect(new Set(tips.map((k) => k.toBase58())).size).toBe(8);
    const rent = chain.svm.minimumBalanceForRentExemption(0n);
    for (const k of tips) expect(chain.svm.getBalance(k)).toBe(rent);
    // A second engine over the same chain lists the same accounts and leaves their balances alone.
    await engine.sendBundle([mintAndTip(1n)]);
    const again = new LocalBundleEngine(chain);
    expect(again.tipAccounts.map((k) => k.toBase58())).toEqual(tips.map((k) => k.toBase58()));
    expect(chain.svm.getBalance(tip)).toBe(rent + 10_000n);
  });
});

describe("makeBundlePort", () => {
  it("is the Jito client with BUNDLE_URL, the local engine over the paper chain, and none with only RPC_URL", async () => {
    const jito = await makeBundlePort(
      { BUNDLE_URL: "https://a.example,https://b.example/api/v1/bundles" },
      chain,
    );
    expect(jito.port).toBeInstanceOf(JitoBundleClient);
    expect(jito.port?.description).toBe("jito https://a.example (+1 engines)");
    const local = await makeBundlePort({}, chain);
    expect(local.port).toBeInstanceOf(LocalBundleEngine);
    const none = await makeBundlePort({ RPC_URL: "https://rpc.example" }, chain);
    expect(none.port).toBeNull();
    expect(!none.port && none.reason).toMatch(/^BUNDLE_URL: unset/);
  });

  it("the paper service composes the local engine over its own embedded chain, in process", async () => {
    const service = await testService();
    try {
      expect(service.bundles.port).toBeInstanceOf(LocalBundleEngine);
      expect((service.bundles.port as LocalBundleEngine).chain).toBe(service.chain);
    } finally {
      await service.close();
    }
  });
});
