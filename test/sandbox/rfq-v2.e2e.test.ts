/**
 * The sandbox with the RFQ v2 channel (`npm run sandbox`, `npm run demo`, through startStack): the
 * webhook process streams every enabled pair's levels to the stand-in of the operator's RFQ v2 service;
 * a taker's v2 swap (loading accounts from lookup tables the stand-in made on the chain) is offered,
 * co-signed, lands on the local chain server and moves the taker's balances exactly as the levels say,
 * and is found once in the webhook's fill ledger (channel rfq-v2, asked through its admin API: the
 * embedded ledger is open in that process); the manifest names the stand-in. A two-leg swap (the RFQ
 * leg split beside the local chain's stand-in AMM pool) lands with the maker's, the pool's and the
 * taker's balances exactly as the levels and the pool say.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Stack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { STAND_IN_POOL_AUTHORITY } from "../../src/chain/local/rfq-v2-emulation.ts";
import type { LedgerReport } from "../../src/ledger/report.ts";
import { MINT } from "../support/config.ts";
import {
  BID_IN,
  bidWalk,
  liveLevels,
  offerSolUsdcBid,
  solUsdcBid,
  startRfqV2Stack,
} from "../support/rfq-v2.ts";

const dir = mkdtempSync(join(tmpdir(), "rfq-v2-sandbox-"));
const ADMIN_API_KEY = "admin-key-for-the-rfq-v2-sandbox";
let stack: Stack;

beforeAll(async () => {
  stack = await startRfqV2Stack(dir, { webhookAdminApiKey: ADMIN_API_KEY });
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

describe("the sandbox's RFQ v2 channel", () => {
  it("streams every enabled pair, and names the stand-in in the manifest", async () => {
    const bySymbol = new Map(stack.config.tokens.map((t) => [t.symbol, t.mint]));
    for (const p of stack.config.pairs.filter((x) => x.enabled))
      await liveLevels(stack, bySymbol.get(p.base)!, bySymbol.get(p.quote)!);
    const manifest = JSON.parse(readFileSync(join(dir, "stack.json"), "utf8"));
    expect(manifest.rfqV2).toEqual({ url: stack.rfqV2!.url, makerId: "sandbox-maker" });
  });

  it("lands a taker's v2 swap loading accounts from lookup tables, co-signed by the webhook, moving its balances exactly as the levels say; the swap is once in the ledger", async () => {
    const walk = bidWalk(await liveLevels(stack, MINT.SOL, MINT.USDC), BID_IN);
    const taker = stack.takers[0]!.keypair;
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const before = await client.balances(taker.publicKey, [MINT.SOL, MINT.USDC]);
    const r = await offerSolUsdcBid(stack, { timeoutMs: 30_000 });
    expect(r).toMatchObject({ ok: true });
    // Built as the operator builds it: accounts loaded from lookup tables the webhook resolved over RPC.
    expect(r.offered.message.addressTableLookups.length).toBeGreaterThan(0);
    const after = await client.balances(taker.publicKey, [MINT.SOL, MINT.USDC]);
    expect(after[MINT.USDC]! - before[MINT.USDC]!).toBe(-walk.spent);
    expect(after[MINT.SOL]! - before[MINT.SOL]!).toBe(walk.out);

    // The ledger writer drains the outbox every 500 ms: the fill appears within a few passes.
    const quoteId = `v2:${r.swapUuid}`;
    const report = async () => {
      const res = await fetch(`${stack.webhookAdminUrl}/admin/report?format=json`, {
        headers: { "x-admin-api-key": ADMIN_API_KEY },
      });
      expect(res.status).toBe(200);
      return (await res.json()) as LedgerReport;
    };
    let seen = await report();
    for (const until = Date.now() + 15_000; Date.now() < until; ) {
      if (seen.fills.some((f) => f.quoteId === quoteId)) break;
      await new Promise((res) => setTimeout(res, 250));
      seen = await report();
    }
    const fills = seen.fills.filter((f) => f.quoteId === quoteId);
    expect(fills).toEqual([
      expect.objectContaining({
        channel: "rfq-v2",
        txSignature: (r as { signature: string }).signature,
        taker: taker.publicKey.toBase58(),
        pair: "SOL/USDC",
        side: "sell",
        amountIn: walk.spent.toString(),
        amountOut: walk.out.toString(),
        feeOwed: "0",
      }),
    ]);
    expect(seen.fillRateByChannel.find((c) => c.channel === "rfq-v2")).toMatchObject({
      accepted: 1,
      landed: 1,
    });
  }, 60_000);

  it("lands a two-leg swap: 60% on the maker's levels, 40% through the stand-in AMM pool, every balance as the levels and the pool say", async () => {
    const live = await liveLevels(stack, MINT.SOL, MINT.USDC);
    const rfqIn = (BID_IN * 6_000n) / 10_000n;
    const walk = bidWalk(live, rfqIn);
    const taker = stack.takers[0]!.keypair;
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const tokens = [MINT.SOL, MINT.USDC];
    const pool = STAND_IN_POOL_AUTHORITY;
    const maker = new PublicKey(stack.maker);
    const [takerBefore, makerBefore, poolBefore] = await Promise.all(
      [taker.publicKey, maker, pool].map((k) => client.balances(k, tokens)),
    );
    const r = await stack.rfqV2!.standIn.offerSwap({
      ...solUsdcBid({ makerId: stack.rfqV2!.makerId, taker, inAmount: BID_IN, timeoutMs: 30_000 }),
      amm: { bps: 4_000 },
    });
    expect(r).toMatchObject({ ok: true });
    expect(r.offered.message.compiledInstructions.some((ix) => ix.data.length > 100)).toBe(true);
    const ammIn = BID_IN - rfqIn;
    const ammOut = (ammIn * poolBefore![MINT.SOL]!) / (poolBefore![MINT.USDC]! + ammIn);
    const [takerAfter, makerAfter, poolAfter] = await Promise.all(
      [taker.publicKey, maker, pool].map((k) => client.balances(k, tokens)),
    );
    const moved = (a: Record<string, bigint>, b: Record<string, bigint>) => [
      a[MINT.USDC]! - b[MINT.USDC]!,
      a[MINT.SOL]! - b[MINT.SOL]!,
    ];
    // The maker's leg: exactly the program's walk of its levels for its 6,000 bps of the input.
    expect(moved(makerAfter!, makerBefore!)).toEqual([walk.spent, -walk.out]);
    expect(moved(poolAfter!, poolBefore!)).toEqual([ammIn, -ammOut]);
    expect(moved(takerAfter!, takerBefore!)).toEqual([-(walk.spent + ammIn), walk.out + ammOut]);
  }, 60_000);
});
