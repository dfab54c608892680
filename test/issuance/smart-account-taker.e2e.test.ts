/**
 * A smart-account (Squads) taker buying a permissioned token the maker issues, end to end on the local
 * chain (LiteSVM, with its stand-in for the smart-account program): the operator's fill for a
 * permissioned pair carries the 200,000 compute-unit limit, the toolkit's squads-sdk wraps it with
 * `WrapOptions::default()` (x 2: 400,000, sandbox/fill/smart-account.ts), the members sign, and POST
 * /swap accepts it, co-signs it in the maker's slot and lands it in one bundle with the mint. The maker
 * pays no network fee (a member does): what the maker's lamports lose is the issuer's bundle tip,
 * within `limits.maxFeeLamports`. The same envelope with a limit above 2 x 200,000 is refused
 * COMPUTE_UNIT_LIMIT_EXCEEDED, nothing signed, sent or minted.
 */
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wrapFillForSmartAccount } from "../../sandbox/fill/smart-account.ts";
import { fundTaker, lamports, seedSmartAccount, tokenBalance } from "../../src/chain/local/seed.ts";
import { PERMISSIONED_COMPUTE_UNIT_LIMIT } from "../../src/fill/rules/compute-unit-limit.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { newSmartAccount, signAsMembers } from "../fill/smart-account-attacks.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { ObservedBundles } from "../support/local-bundles.ts";
import { permissionedSetup, supplyOf, TBILL_LIMITS } from "../support/permissioned.ts";

const USDC = new PublicKey(MINT.USDC);
const sa = newSmartAccount();
// The smart account's vault is the allowed holder (it is the quote's taker and receives the TBILL).
const setup = permissionedSetup(0, { holders: { allowlist: [sa.account.vault.toBase58()] } });
const TBILL = setup.mint;
let h: Harness;
let engine: ObservedBundles;

beforeAll(async () => {
  h = await createHarness({
    vary: setup.vary,
    issuer: setup.issuer,
    bundles: (chain) => {
      engine = new ObservedBundles(chain);
      return engine;
    },
  });
  seedSmartAccount(h.chain, { settings: sa.account.settings, members: sa.account.members });
  fundTaker(h.chain, sa.account.vault, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 10_000_000_000n } });
  for (const m of sa.members) fundTaker(h.chain, m.publicKey, { sol: 1_000_000_000n });
});
afterAll(async () => {
  await h?.close();
});

const http = () => inProcess(h.app);

/** A quote for the vault buying 100 USDC of TBILL, and the operator's fill for it wrapped by the SDK. */
async function wrappedBuy(outerLimit?: number): Promise<{ quote: StoredQuote; tx: VersionedTransaction }> {
  const { stored } = await askQuote(h, http(), {
    tokenIn: MINT.USDC,
    tokenOut: TBILL.toBase58(),
    amount: 100_000_000n,
    feeBps: 0,
    taker: sa.account.vault,
  });
  // The operator's fill of a permissioned pair: no simulation, the 200,000 default maximum.
  const inner = await operatorFill(h, stored, sa.account.vault, {
    computeUnitLimit: PERMISSIONED_COMPUTE_UNIT_LIMIT,
  });
  const wrapped = wrapFillForSmartAccount(
    inner,
    sa.account,
    outerLimit === undefined ? {} : { computeUnitLimit: outerLimit },
  );
  return { quote: stored, tx: signAsMembers(wrapped, sa.members) };
}

const limitOf = (tx: VersionedTransaction) =>
  Buffer.from(tx.message.compiledInstructions[0]!.data).readUInt32LE(1);

describe("a squads-wrapped permissioned fill", () => {
  it("lands with the mint in one bundle, the maker's fee within its cap, the member paying the network fee", async () => {
    const { quote, tx } = await wrappedBuy();
    expect(limitOf(tx)).toBe(2 * PERMISSIONED_COMPUTE_UNIT_LIMIT);
    const maker = h.maker.publicKey;
    const payer = sa.account.members[0]!;
    const before = {
      maker: lamports(h.chain, maker),
      payer: lamports(h.chain, payer),
      vaultTbill: tokenBalance(h.chain, sa.account.vault, TBILL),
      makerUsdc: tokenBalance(h.chain, maker, USDC),
      supply: supplyOf(h.chain, TBILL),
      bundles: engine.sent.length,
    };
    const swap = await postSwap(http(), {
      requestId: quote.requestId,
      quoteId: quote.quoteId,
      transaction: tx,
    });
    expect(swap.body.rejectionReason ?? swap.body.state).toBe("accepted");
    expect(await h.confirmations.settled(quote.quoteId)).toBe("landed");
    expect(engine.sent.length).toBe(before.bundles + 1);

    const out = BigInt(quote.response.amountOut);
    expect(tokenBalance(h.chain, sa.account.vault, TBILL) - before.vaultTbill).toBe(out);
    expect(supplyOf(h.chain, TBILL) - before.supply).toBe(out);
    expect(tokenBalance(h.chain, maker, USDC) - before.makerUsdc).toBe(BigInt(quote.response.amountIn));
    // The maker pays no network fee on a wrapped fill; what it spends is the issuer bundle's tip.
    const makerSpent = before.maker - lamports(h.chain, maker);
    expect(makerSpent).toBeLessThanOrEqual(TBILL_LIMITS.tipLamports);
    expect(makerSpent).toBeLessThanOrEqual(BigInt(h.config.file.limits.maxFeeLamports));
    // The paying member pays the transaction's fee: signatures, and 400,000 units at the quote's price.
    expect(before.payer - lamports(h.chain, payer)).toBeGreaterThanOrEqual(5_000n * 3n);
  });

  it("is refused COMPUTE_UNIT_LIMIT_EXCEEDED above 2 x 200,000, nothing signed, sent or minted", async () => {
    const { quote, tx } = await wrappedBuy(2 * PERMISSIONED_COMPUTE_UNIT_LIMIT + 1);
    const supply = supplyOf(h.chain, TBILL);
    const bundles = engine.sent.length;
    const makerLamports = lamports(h.chain, h.maker.publicKey);
    const swap = await postSwap(http(), {
      requestId: quote.requestId,
      quoteId: quote.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toBe("rejected");
    expect(swap.body.rejectionReason).toMatch(
      /^COMPUTE_UNIT_LIMIT_EXCEEDED: the compute-unit limit 400001 is above the 400000 allowed for a permissioned pair wrapped for a smart account/,
    );
    expect(engine.sent.length).toBe(bundles);
    expect(supplyOf(h.chain, TBILL)).toBe(supply);
    expect(lamports(h.chain, h.maker.publicKey)).toBe(makerLamports);
  });
});
