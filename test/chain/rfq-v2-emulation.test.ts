/**
 * The local chain's stand-in for the aggregator's route_v2 with one RFQ v2 leg: an honest swap moves
 * exactly the walked amounts, also with its accounts loaded from a lookup table; each of the RFQ v2
 * program's published errors fails the transaction (fee charged, nothing moved), as on mainnet.
 */
import { createTransferCheckedInstruction } from "@solana/spl-token";
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import { buildV2SwapTransaction, type V2SwapParams } from "../../sandbox/rfq-v2/build.ts";
import { createLookupTable } from "../../sandbox/rfq-v2/tables.ts";
import { STAND_IN_AMM_PROGRAM, STAND_IN_POOL_AUTHORITY } from "../../src/chain/local/rfq-v2-emulation.ts";
import { ata, creditSol, creditToken, tokenBalance } from "../../src/chain/local/seed.ts";
import { INSTRUCTIONS_SYSVAR } from "../../src/program/rfq-v2.ts";
import { makeWorld } from "../inventory/support.ts";
import { MINT } from "../support/config.ts";

const SOL = new PublicKey(MINT.SOL);
const USDC = new PublicKey(MINT.USDC);

async function setup() {
  const w = makeWorld();
  const taker = Keypair.generate();
  creditSol(w.chain, taker.publicKey, 1_000_000_000n);
  creditToken(w.chain, taker.publicKey, USDC, 100_000_000n);
  const { blockhash } = await w.chain.getLatestBlockhash();
  const now = await w.chain.getUnixTimestamp();
  const params = (over: Partial<V2SwapParams> = {}): V2SwapParams => ({
    taker: taker.publicKey,
    maker: w.maker.publicKey,
    baseMint: SOL,
    quoteMint: USDC,
    baseTokenProgram: new PublicKey(TOKEN_PROGRAM),
    quoteTokenProgram: new PublicKey(TOKEN_PROGRAM),
    takerSide: "bid",
    inAmount: 10_000_000n,
    quotedOutAmount: 0n,
    expireAt: now + 30n,
    tickSizeQpb: 1n,
    lotSizeBase: 100_000n,
    levels: [
      { pxTicks: 18_035n, qtyLots: 300n },
      { pxTicks: 18_044n, qtyLots: 1_000n },
    ],
    recentBlockhash: blockhash,
    ...over,
  });
  const send = async (tx: VersionedTransaction) => {
    tx.sign([taker, w.maker]);
    const r = await w.chain.send(tx);
    if (!r.ok) return { state: "dropped", error: r.error };
    return w.chain.getSignatureStatus(r.signature);
  };
  return { w, taker, params, send };
}

/** A table on the chain holding the mints, the maker's accounts, the sysvar and the leg's extra account. */
async function tableOf(w: ReturnType<typeof makeWorld>, legExtra: PublicKey) {
  const payer = Keypair.generate();
  creditSol(w.chain, payer.publicKey, 1_000_000_000n);
  return createLookupTable(w.chain, payer, [
    SOL,
    USDC,
    ata(w.chain, w.maker.publicKey, SOL),
    ata(w.chain, w.maker.publicKey, USDC),
    new PublicKey(INSTRUCTIONS_SYSVAR),
    legExtra,
  ]);
}

describe("route_v2 with an RFQ v2 leg on the local chain", () => {
  it("lands with its accounts loaded from a lookup table and moves what the walk gives (the maker's accounts loaded writable)", async () => {
    const { w, taker, params, send } = await setup();
    const legExtra = Keypair.generate().publicKey;
    const table = await tableOf(w, legExtra);
    const makerSol = tokenBalance(w.chain, w.maker.publicKey, SOL);
    const tx = buildV2SwapTransaction({ ...params(), legExtra }, { lookupTables: [table] });
    expect(tx.message.addressTableLookups[0]!.writableIndexes).toHaveLength(2);
    expect(await send(tx)).toMatchObject({ state: "confirmed" });
    const spent = 5_410_500n + 254n * 18_044n;
    expect(tokenBalance(w.chain, taker.publicKey, USDC)).toBe(100_000_000n - spent);
    expect(tokenBalance(w.chain, w.maker.publicKey, SOL)).toBe(makerSol - 554n * 100_000n);
  });

  it("fails 6005 when the maker's account loaded from a lookup table is named by another instruction, and moves nothing", async () => {
    const { w, taker, params, send } = await setup();
    const table = await tableOf(w, Keypair.generate().publicKey);
    creditToken(w.chain, taker.publicKey, SOL, 0n);
    const steal = createTransferCheckedInstruction(
      ata(w.chain, w.maker.publicKey, SOL),
      SOL,
      ata(w.chain, taker.publicKey, SOL),
      w.maker.publicKey,
      1n,
      9,
    );
    const makerSol = tokenBalance(w.chain, w.maker.publicKey, SOL);
    const status = await send(buildV2SwapTransaction(params(), { after: [steal], lookupTables: [table] }));
    expect(status).toMatchObject({ state: "failed" });
    expect("error" in status && status.error).toContain("6005");
    expect(tokenBalance(w.chain, w.maker.publicKey, SOL)).toBe(makerSol);
  });

  it("moves what the program's walk gives: 300 lots at 18,035 then 254 at 18,044 for 10 USDC", async () => {
    const { w, taker, params, send } = await setup();
    const makerUsdc = tokenBalance(w.chain, w.maker.publicKey, USDC);
    const makerSol = tokenBalance(w.chain, w.maker.publicKey, SOL);
    expect(await send(buildV2SwapTransaction(params()))).toMatchObject({ state: "confirmed" });
    // 300 x 18,035 = 5,410,500; the rest 4,589,500 buys 254 lots at 18,044 (4,583,176): 554 lots
    const spent = 5_410_500n + 254n * 18_044n;
    expect(tokenBalance(w.chain, taker.publicKey, USDC)).toBe(100_000_000n - spent);
    expect(tokenBalance(w.chain, taker.publicKey, SOL)).toBe(554n * 100_000n);
    expect(tokenBalance(w.chain, w.maker.publicKey, USDC)).toBe(makerUsdc + spent);
    expect(tokenBalance(w.chain, w.maker.publicKey, SOL)).toBe(makerSol - 554n * 100_000n);
  });

  it.each([
    [
      "6002 StaleOrderbook: expire_at past",
      (p: V2SwapParams) => ({ ...p, expireAt: p.expireAt - 60n }),
      "6002",
    ],
    [
      "6003 InvalidLevelOrdering: the worse level first",
      (p: V2SwapParams) => ({ ...p, levels: [...p.levels].reverse() }),
      "6003",
    ],
    ["6001 NoFill: the input buys no whole lot", (p: V2SwapParams) => ({ ...p, inAmount: 18_034n }), "6001"],
  ])("fails %s, and moves nothing", async (_name, change, code) => {
    const { w, taker, params, send } = await setup();
    const status = await send(buildV2SwapTransaction(change(params())));
    expect(status).toMatchObject({ state: "failed" });
    expect("error" in status && status.error).toContain(code);
    expect(tokenBalance(w.chain, taker.publicKey, USDC)).toBe(100_000_000n);
  });

  it("fails 6005 MakerAppearsInOtherInstruction when a maker account is named by another instruction", async () => {
    const { w, taker, params, send } = await setup();
    const makerSol = ata(w.chain, w.maker.publicKey, SOL);
    const steal = createTransferCheckedInstruction(
      makerSol,
      SOL,
      ata(w.chain, taker.publicKey, SOL),
      w.maker.publicKey,
      1n,
      9,
    );
    creditToken(w.chain, taker.publicKey, SOL, 0n);
    const status = await send(buildV2SwapTransaction(params(), { after: [steal] }));
    expect(status).toMatchObject({ state: "failed" });
    expect("error" in status && status.error).toContain("6005");
  });

  describe("beside the stand-in AMM leg (a two-leg split)", () => {
    /** The pool: 1,000 SOL and 180,000 USDC in its authority's vaults. */
    const pool = (w: ReturnType<typeof makeWorld>) => {
      creditToken(w.chain, STAND_IN_POOL_AUTHORITY, SOL, 1_000_000_000_000n);
      creditToken(w.chain, STAND_IN_POOL_AUTHORITY, USDC, 180_000_000_000n);
    };

    it("lands 60% through the maker's levels and 40% through the pool, each moving exactly its own amounts", async () => {
      const { w, taker, params, send } = await setup();
      pool(w);
      const makerUsdc = tokenBalance(w.chain, w.maker.publicKey, USDC);
      const makerSol = tokenBalance(w.chain, w.maker.publicKey, SOL);
      expect(await send(buildV2SwapTransaction(params({ amm: { bps: 4_000 } })))).toMatchObject({
        state: "confirmed",
      });
      // RFQ: 6,000,000 x 6,000 / 10,000 = 6,000,000 -> 300 lots at 18,035 (5,410,500), 32 at 18,044 (577,408).
      const rfqSpent = 5_410_500n + 32n * 18_044n;
      const rfqOut = 332n * 100_000n;
      // AMM: 4,000,000 in, out = floor(4e6 x 1e12 / (1.8e11 + 4e6)).
      const ammOut = (4_000_000n * 1_000_000_000_000n) / (180_000_000_000n + 4_000_000n);
      expect(tokenBalance(w.chain, taker.publicKey, USDC)).toBe(100_000_000n - rfqSpent - 4_000_000n);
      expect(tokenBalance(w.chain, taker.publicKey, SOL)).toBe(rfqOut + ammOut);
      expect(tokenBalance(w.chain, w.maker.publicKey, USDC)).toBe(makerUsdc + rfqSpent);
      expect(tokenBalance(w.chain, w.maker.publicKey, SOL)).toBe(makerSol - rfqOut);
      expect(tokenBalance(w.chain, STAND_IN_POOL_AUTHORITY, USDC)).toBe(180_000_000_000n + 4_000_000n);
      expect(tokenBalance(w.chain, STAND_IN_POOL_AUTHORITY, SOL)).toBe(1_000_000_000_000n - ammOut);
    });

    it("fails, moving nothing, a step it does not model and a pool authority not the program's", async () => {
      const { w, taker, params, send } = await setup();
      pool(w);
      const other = buildV2SwapTransaction(params({ amm: { bps: 4_000 } }));
      const keys = other.message.staticAccountKeys;
      const at = keys.findIndex((k) => k.equals(STAND_IN_AMM_PROGRAM));
      keys[at] = Keypair.generate().publicKey;
      const status = await send(other);
      expect(status).toMatchObject({ state: "failed" });
      expect("error" in status && status.error).toContain("step 1 (swap 3) is not modelled");
      const forged = buildV2SwapTransaction(params({ amm: { bps: 4_000 } }));
      const fk = forged.message.staticAccountKeys;
      fk[fk.findIndex((k) => k.equals(STAND_IN_POOL_AUTHORITY))] = Keypair.generate().publicKey;
      const forgedStatus = await send(forged);
      expect(forgedStatus).toMatchObject({ state: "failed" });
      expect("error" in forgedStatus && forgedStatus.error).toContain(
        "the pool authority is not the program's",
      );
      expect(tokenBalance(w.chain, taker.publicKey, USDC)).toBe(100_000_000n);
    });
  });
});
