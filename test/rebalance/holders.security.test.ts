/**
 * The rebalancer holds an issued token's holder rules (src/policy/trade.ts) against the counterparty
 * of its own orders: the order's maker receives the permissioned token the rebalancer sells (TBILL,
 * test/support/permissioned.ts), so an order from a maker the holder rules refuse, or naming no maker,
 * is refused HOLDER_NOT_ALLOWED (the webhook's code) before anything is reserved or signed, and the
 * maker's accounts on the local chain (LiteSVM) stay as they were.
 *
 * The operator's order API is played by an object in this test: it answers the rebalancer's order as
 * the operator's GET /ultra/v1/order does (every field of the contract's swap order), with the
 * counterparty the test chooses, and fails the test if anything is executed. The refusal comes
 * before the order's transaction is read, so its bytes are a placeholder, and an order from an allowed
 * holder passes the rule and is refused next for those bytes (MALFORMED_TRANSACTION).
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { MemoryInventory } from "../../inventory/memory.ts";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import { createLogger } from "../../src/observability/logger.ts";
import type { OperatorSwapApi, OrderParams } from "../../src/operator-api/interface.ts";
import type { SwapOrder } from "../../src/operator-api/wire.ts";
import { RebalanceMetrics } from "../../src/rebalance/metrics.ts";
import { Rebalancer } from "../../src/rebalance/rebalancer.ts";
import { MemoryRebalanceState } from "../../src/rebalance/state.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import { makeWorld } from "../inventory/support.ts";
import { MINT } from "../support/config.ts";
import { CountingSigner } from "../support/harness.ts";
import { type PermissionedSetup, permissionedSetup } from "../support/permissioned.ts";

/** The maker holds 10 TBILL and aims at 5 (band 1): a pass sells up to 2 TBILL for USDC. */
async function rebalancerAgainst(counterpartyOf: (p: PermissionedSetup) => string | undefined) {
  const p = permissionedSetup(1);
  const counterparty = counterpartyOf(p);
  const w = makeWorld(
    (f) => {
      const v = p.vary(f);
      return {
        ...v,
        rebalance: {
          ...v.rebalance,
          targets: {
            TBILL: {
              target: "5000000",
              band: "1000000",
              maxTrade: "2000000",
              against: "USDC",
              maxSlippageBps: 100,
              cooldownMs: 0,
              dailyNotionalUsd: "1000000",
            },
          },
        },
      };
    },
    { inventory: { TBILL: 10_000_000n } },
  );
  const inventory = new MemoryInventory(w.options());
  await inventory.start();
  const signer = new CountingSigner(new KeypairSigner(w.maker));
  const asked: OrderParams[] = [];
  const api: OperatorSwapApi = {
    async order(params) {
      asked.push(params);
      const order: SwapOrder = {
        mode: "ultra",
        inputMint: params.inputMint,
        outputMint: params.outputMint,
        inAmount: params.amount.toString(),
        // Twice the maker's own value of what it sells: well within its price limit.
        outAmount: (params.amount * 2n).toString(),
        otherAmountThreshold: "0",
        swapMode: "ExactIn",
        slippageBps: 0,
        priceImpactPct: "0",
        routePlan: [],
        feeBps: 0,
        platformFee: { feeBps: 0 },
        signatureFeeLamports: 5_000,
        signatureFeePayer: params.taker ?? null,
        prioritizationFeeLamports: 0,
        prioritizationFeePayer: null,
        rentFeeLamports: 0,
        rentFeePayer: null,
        swapType: "rfq",
        router: "router_1",
        transaction: "AAAA",
        gasless: false,
        requestId: `req-${asked.length}`,
        totalTime: 1,
        taker: params.taker ?? null,
        ...(counterparty ? { maker: counterparty } : {}),
      };
      return { ok: true, order, attempts: 1 };
    },
    async execute() {
      throw new Error("the rebalancer executed an order it should have refused");
    },
  };
  const metrics = new RebalanceMetrics();
  const rebalancer = new Rebalancer({
    config: w.config,
    chain: w.chain,
    signer,
    inventory,
    usd: w.usd,
    api,
    state: new MemoryRebalanceState(),
    log: createLogger("silent"),
    metrics,
  });
  const balances = () => ({
    tbill: tokenBalance(w.chain, w.maker.publicKey, p.mint),
    usdc: tokenBalance(w.chain, w.maker.publicKey, new PublicKey(MINT.USDC)),
  });
  return { p, w, rebalancer, signer, inventory, asked, balances };
}

describe("the rebalancer's orders hold the issued token's holder rules on the counterparty", () => {
  for (const [name, who] of [
    ["a maker the holder rules refuse", () => Keypair.generate().publicKey.toBase58()],
    ["no maker named", () => undefined],
  ] as const) {
    it(`refuses selling TBILL to ${name} (HOLDER_NOT_ALLOWED): nothing reserved or signed, the maker's accounts unchanged`, async () => {
      const r = await rebalancerAgainst(who);
      const before = r.balances();
      const pass = await r.rebalancer.runPass();
      expect(r.asked).toHaveLength(1);
      expect(r.asked[0]).toMatchObject({ inputMint: r.p.mint.toBase58(), outputMint: MINT.USDC });
      expect(pass.trades).toEqual([
        expect.objectContaining({ outcome: "refused", refusal: "HOLDER_NOT_ALLOWED" }),
      ]);
      expect(r.signer.count).toBe(0);
      expect(await r.inventory.reservations()).toEqual([]);
      expect(r.balances()).toEqual(before);
    });
  }

  it("lets an allowed holder's order past the holder rule (refused next, for its placeholder bytes)", async () => {
    const r = await rebalancerAgainst((p) => p.holders[0]!.publicKey.toBase58());
    const pass = await r.rebalancer.runPass();
    expect(pass.trades).toEqual([
      expect.objectContaining({ outcome: "refused", refusal: "MALFORMED_TRANSACTION" }),
    ]);
    expect(r.signer.count).toBe(0);
  });
});
