/**
 * The RFQ v2 stream in shapes production has, through the real gRPC client (src/rfq-v2/client.ts) and
 * the service against the operator's stand-in, with the default level settings: a price move
 * re-streamed on its own (not at the next refresh), a pair whose base is a Token-2022 mint streamed
 * and a swap on it landed on the local chain exactly as its levels say, and TLS refused to a server
 * whose certificate no trusted authority issued (a man in the middle gets no connection, so never the
 * maker's token). The accepted TLS path and WORKERS=2 run as processes: workers-tls.e2e.test.ts.
 */
import { readFileSync } from "node:fs";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../config/schema.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { RfqV2StandIn, type StandInOptions } from "../../sandbox/rfq-v2/server.ts";
import { creditSol, creditToken, tokenBalance, tokenProgramOf } from "../../src/chain/local/seed.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { makeWorld, withToken } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { landOn, startV2Channel, until } from "../support/rfq-v2.ts";
import { makeTestPki } from "../support/tls.ts";
import { fileTempDir } from "../support/tmp.ts";

const MAKER_ID = "maker-shape";
const TOKEN = "jwt-for-the-shape-tests-0123456789";
const dir = fileTempDir("rfq-v2-shape");
const closers = cleanupsAfterEach();

/** A service streaming `pairs` (default rfqV2 settings otherwise) to a stand-in built with `standIn`. */
async function stream(o: {
  pairs: string[];
  vary?: (f: FileConfig) => FileConfig;
  sources?: ReadonlyMap<string, PriceSource>;
  standIn?: (w: ReturnType<typeof makeWorld>) => Partial<StandInOptions>;
  connect?: boolean;
}) {
  const w = makeWorld((f) => {
    const g = o.vary ? o.vary(f) : f;
    return { ...g, rfqV2: { ...g.rfqV2, pairs: o.pairs } };
  });
  const standIn = new RfqV2StandIn({
    makers: [{ makerId: MAKER_ID, token: TOKEN }],
    heartbeatMs: 60_000,
    ...o.standIn?.(w),
  });
  const url = await standIn.listen();
  closers.push(() => standIn.close());
  const c = await startV2Channel({
    w,
    url,
    makerId: MAKER_ID,
    token: TOKEN,
    closers,
    ...(o.sources ? { sources: o.sources } : {}),
    ...(o.connect === false ? { connect: false } : {}),
  });
  return { w, url, standIn, inventory: c.inventory, service: c.service, registry: c.registry };
}

describe("the RFQ v2 stream in production's shapes", () => {
  it("re-streams a price move at once (within one refresh, 5 s): the new set carries the moved price", async () => {
    let mid = { num: 18_025n, den: 100n };
    const feed: PriceSource = {
      name: "static",
      maxAgeMs: 60_000,
      price: () => ({ mid, updatedAtMs: Date.now() }),
      start: async () => {},
      close: async () => {},
    };
    const s = await stream({ pairs: ["SOL/USDC"], sources: new Map([["static", feed]]) });
    const held = () => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC);
    await until(() => held() !== undefined, "SOL/USDC levels");
    // Move right after a set arrived, so the refresh (5 s after it) cannot be what sends the next.
    const first = held()!.quote.sequence_number;
    await until(() => held()!.quote.sequence_number !== first, "a refreshed set", 7_000);
    const before = held()!;
    mid = { num: 18_125n, den: 100n }; // 180.25 -> 181.25 USDC per SOL
    const movedAt = Date.now();
    await until(() => held()!.quote.sequence_number !== before.quote.sequence_number, "the moved set", 5_000);
    const after = held()!;
    expect(after.receivedAtMs - movedAt).toBeLessThan(5_000);
    expect(after.receivedAtMs).toBeLessThan(before.receivedAtMs + 5_000);
    // Every level moved up by about the mid's move (1 USDC in 180.25: 55 bps), none stayed.
    const price = (q: typeof before, side: "ask_levels" | "bid_levels") =>
      q.quote[side].map((l) => BigInt(l.price));
    for (const side of ["ask_levels", "bid_levels"] as const) {
      const [old, moved] = [price(before, side), price(after, side)];
      expect(moved).toHaveLength(old.length);
      moved.forEach((p, i) => {
        // new/old within 1 bps of 181.25/180.25
        const ratioBps = (p * 18_025n * 10_000n) / (old[i]! * 18_125n);
        expect(ratioBps).toBeGreaterThanOrEqual(9_999n);
        expect(ratioBps).toBeLessThanOrEqual(10_001n);
      });
    }
  });

  it("streams a pair whose base is a Token-2022 mint (named as its token's owner on the wire) and co-signs a swap on it that lands exactly as the levels say", async () => {
    const s = await stream({
      pairs: ["JUP/USDC"],
      vary: withToken("JUP", { tokenProgram: TOKEN_2022_PROGRAM }),
      standIn: (w) => {
        const payer = Keypair.generate();
        creditSol(w.chain, payer.publicKey, 1_000_000_000n);
        return {
          recentBlockhash: async () => (await w.chain.getLatestBlockhash()).blockhash,
          tables: { chain: w.chain, payer },
          land: landOn(w.chain, { confirmed: true }),
        };
      },
    });
    const jup = new PublicKey(MINT.JUP);
    const usdc = new PublicKey(MINT.USDC);
    expect(tokenProgramOf(s.w.chain, jup).toBase58()).toBe(TOKEN_2022_PROGRAM);
    await until(() => s.standIn.liveSet(MAKER_ID, MINT.JUP, MINT.USDC) !== undefined, "JUP/USDC levels");
    const live = s.standIn.liveSet(MAKER_ID, MINT.JUP, MINT.USDC)!;
    expect(live.quote.token_pair.base_token.owner).toBe(TOKEN_2022_PROGRAM);
    expect(live.quote.token_pair.quote_token.owner).toBe(TOKEN_PROGRAM);
    const lot = BigInt(live.quote.lot_size_base);
    const walk = (side: "bid" | "ask", inAmount: bigint) => {
      const levels = (side === "bid" ? live.quote.ask_levels : live.quote.bid_levels).map((l) => ({
        perLot: (BigInt(l.price) * lot) / 10n ** 6n,
        lots: BigInt(l.volume) / lot,
      }));
      return sweep(side, inAmount, levels, lot);
    };
    const taker = Keypair.generate();
    creditSol(s.w.chain, taker.publicKey, 1_000_000_000n);
    creditToken(s.w.chain, taker.publicKey, usdc, 100_000_000n);
    const balances = () =>
      [
        [taker.publicKey, jup],
        [taker.publicKey, usdc],
        [s.w.maker.publicKey, jup],
        [s.w.maker.publicKey, usdc],
      ].map(([o, m]) => tokenBalance(s.w.chain, o!, m!));
    const offer = (takerSide: "bid" | "ask", inAmount: bigint) =>
      s.standIn.offerSwap({
        makerId: MAKER_ID,
        taker,
        baseMint: MINT.JUP,
        quoteMint: MINT.USDC,
        baseTokenProgram: TOKEN_2022_PROGRAM,
        quoteTokenProgram: TOKEN_PROGRAM,
        baseDecimals: 6,
        takerSide,
        inAmount,
      });
    // The taker buys JUP with 50 USDC (its JUP account made by the swap, under Token-2022) ...
    const before = balances();
    const bought = walk("bid", 50_000_000n);
    expect(bought.out).toBeGreaterThan(0n);
    expect(await offer("bid", 50_000_000n)).toMatchObject({ ok: true });
    const [tJup, tUsdc, mJup, mUsdc] = before as [bigint, bigint, bigint, bigint];
    expect(balances()).toEqual([
      tJup + bought.out,
      tUsdc - bought.spent,
      mJup - bought.out,
      mUsdc + bought.spent,
    ]);
    // ... and sells 20 JUP of it back.
    const mid = balances();
    const sold = walk("ask", 20_000_000n);
    expect(sold.out).toBeGreaterThan(0n);
    expect(await offer("ask", 20_000_000n)).toMatchObject({ ok: true });
    const [tJup2, tUsdc2, mJup2, mUsdc2] = mid as [bigint, bigint, bigint, bigint];
    expect(balances()).toEqual([
      tJup2 - sold.spent,
      tUsdc2 + sold.out,
      mJup2 + sold.spent,
      mUsdc2 - sold.out,
    ]);
    const signed = (await s.registry.getSingleMetric("rfq_v2_swaps_total")!.get()).values;
    expect(signed).toContainEqual(expect.objectContaining({ labels: { outcome: "signed" }, value: 2 }));
  });

  it("over TLS, never connects to a server whose certificate no trusted authority issued: no level, no stream, and the token never sent", async () => {
    const pki = makeTestPki(dir, "untrusted");
    const s = await stream({
      pairs: ["SOL/USDC"],
      standIn: () => ({ tls: { cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) } }),
      connect: false,
    });
    expect(s.url).toMatch(/^https:\/\//);
    // Several attempts (backoff 50-200 ms), each refused at the handshake.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(s.service.connected()).toBe(false);
    expect(s.standIn.openQuoteStreams(MAKER_ID)).toBe(0);
    expect(s.standIn.updates).toEqual([]);
    expect(s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC)).toBeUndefined();
  });
});
