/**
 * The shared rule book on its own (src/policy/trade.ts, src/policy/messages.ts and the issuance
 * policies they ask, src/issuance/policy.ts): every rule as an attack refused with its code and
 * detail, every cap at its edge. The channels' own tests (/swap, the RFQ v2 stream, the signer
 * service, the rebalancer) show the same functions answering there.
 */
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { Config } from "../../config/load.ts";
import { utcDay } from "../../inventory/issuance/interface.ts";
import { IssuancePolicies } from "../../src/issuance/policy.ts";
import { bindMessageOnce } from "../../src/policy/messages.ts";
import { blindFillStanding, holderRule, issuedTrade, judgeBlindTrade } from "../../src/policy/trade.ts";
import { SwapRefusalCode as S } from "../../src/refusal/codes.ts";
import type { Standing, TakerEntry } from "../../src/toxicity/interface.ts";
import { MINT, testConfig } from "../support/config.ts";
import { permissionedSetup, TBILL_LIMITS } from "../support/permissioned.ts";

const NOW = Date.parse("2030-03-04T05:06:07Z");
const DAY = utcDay(NOW);

function setup(over: Record<string, unknown> = {}) {
  const p = permissionedSetup(1, over);
  const policies = new IssuancePolicies(testConfig({}, p.vary));
  return { policies, tbill: p.mint.toBase58(), holder: p.holders[0]!.publicKey.toBase58() };
}
const stranger = Keypair.generate().publicKey.toBase58();

/** A usage book that has seen `used` of every mint and direction today, and nothing another day. */
const usage = (used: bigint) => ({
  used: (_mint: string, _direction: "mint" | "burn", day: string) => (day === DAY ? used : 999_999_999_999n),
});

describe("IssuancePolicies", () => {
  it("holds the configured tokens with their caps, tip and allowlist", () => {
    const { policies, tbill, holder } = setup();
    expect(policies.size).toBe(1);
    expect(policies.of(MINT.USDC)).toBeUndefined();
    const t = policies.of(tbill);
    expect(t).toMatchObject({
      maxPerFill: TBILL_LIMITS.maxPerFill,
      maxPerDay: TBILL_LIMITS.maxPerDay,
      tipLamports: TBILL_LIMITS.tipLamports,
      allowlist: new Set([holder]),
    });
    expect(t?.token.symbol).toBe("TBILL");
    expect(policies.tokens()).toEqual([t]);
    expect(new IssuancePolicies(testConfig()).size).toBe(0);
  });

  it("skips an issuance entry for a symbol the configuration carries no token for", () => {
    const config = testConfig();
    const bare = { ...config, file: { ...config.file, issuance: { NOPE: {} } } } as unknown as Config;
    expect(new IssuancePolicies(bare).size).toBe(0);
  });

  it("an entry without an allowlist refuses no holder", () => {
    const { policies, tbill } = setup({ holders: {} });
    expect(policies.of(tbill)?.allowlist).toBeUndefined();
    expect(policies.holderRefusal(MINT.USDC, tbill, stranger)).toBeUndefined();
  });

  it("refuses a stranger buying or selling the issued token, names it; an allowed holder either way", () => {
    const { policies, tbill, holder } = setup();
    const refusal = {
      ok: false,
      code: "HOLDER_NOT_ALLOWED",
      context: `${stranger} is not an allowed holder of TBILL (holder rules of its issuance policy)`,
    };
    expect(policies.holderRefusal(MINT.USDC, tbill, stranger)).toEqual(refusal);
    expect(policies.holderRefusal(tbill, MINT.USDC, stranger)).toEqual(refusal);
    expect(policies.holderRefusal(MINT.USDC, tbill, holder)).toBeUndefined();
    expect(policies.holderRefusal(tbill, MINT.USDC, holder)).toBeUndefined();
    expect(policies.holderRefusal(MINT.USDC, MINT.SOL, stranger)).toBeUndefined();
  });

  it("needs nothing of a trade with no issued token", () => {
    const { policies } = setup();
    const trade = { tokenIn: MINT.USDC, tokenOut: MINT.SOL, amountIn: 1n, amountOut: 1n };
    expect(policies.check(trade, usage(0n), NOW)).toEqual({ ok: true, need: undefined });
  });

  it("mints the output of a buy and burns the input of a sell, each up to the per-fill cap and not a unit more", () => {
    const { policies, tbill } = setup();
    const issued = policies.of(tbill);
    const cap = TBILL_LIMITS.maxPerFill;
    const buy = (amountOut: bigint) => ({ tokenIn: MINT.USDC, tokenOut: tbill, amountIn: 7n, amountOut });
    const sell = (amountIn: bigint) => ({ tokenIn: tbill, tokenOut: MINT.USDC, amountIn, amountOut: 7n });
    expect(policies.check(buy(cap), undefined, NOW)).toEqual({
      ok: true,
      need: { issued, direction: "mint", amount: cap },
    });
    expect(policies.check(sell(cap), undefined, NOW)).toEqual({
      ok: true,
      need: { issued, direction: "burn", amount: cap },
    });
    expect(policies.check(buy(cap + 1n), undefined, NOW)).toEqual({
      ok: false,
      code: "ISSUANCE_CAP_EXCEEDED",
      context: `mint of ${cap + 1n} TBILL is above the per-fill cap of ${cap}`,
    });
    expect(policies.check(sell(cap + 1n), undefined, NOW)).toEqual({
      ok: false,
      code: "ISSUANCE_CAP_EXCEEDED",
      context: `burn of ${cap + 1n} TBILL is above the per-fill cap of ${cap}`,
    });
  });

  it("refuses a direction switched off, naming its switch", () => {
    const noMint = setup({ mintOnBuy: false });
    expect(
      noMint.policies.check(
        { tokenIn: MINT.USDC, tokenOut: noMint.tbill, amountIn: 1n, amountOut: 1n },
        undefined,
        NOW,
      ),
    ).toEqual({
      ok: false,
      code: "ISSUANCE_DISABLED",
      context: "TBILL is not minted for a buy (issuance.TBILL.mintOnBuy)",
    });
    expect(
      noMint.policies.check(
        { tokenIn: noMint.tbill, tokenOut: MINT.USDC, amountIn: 1n, amountOut: 1n },
        undefined,
        NOW,
      ),
    ).toMatchObject({ ok: true });
    const noBurn = setup({ burnOnSell: false });
    expect(
      noBurn.policies.check(
        { tokenIn: noBurn.tbill, tokenOut: MINT.USDC, amountIn: 1n, amountOut: 1n },
        undefined,
        NOW,
      ),
    ).toEqual({
      ok: false,
      code: "ISSUANCE_DISABLED",
      context: "TBILL is not burned for a sell (issuance.TBILL.burnOnSell)",
    });
    expect(
      noBurn.policies.check(
        { tokenIn: MINT.USDC, tokenOut: noBurn.tbill, amountIn: 1n, amountOut: 1n },
        undefined,
        NOW,
      ),
    ).toMatchObject({ ok: true });
  });

  it("holds the daily cap as the book saw today: up to it exactly, one unit over refused with what is left", () => {
    const { policies, tbill } = setup();
    const day = TBILL_LIMITS.maxPerDay;
    const buy = { tokenIn: MINT.USDC, tokenOut: tbill, amountIn: 1n, amountOut: 1_000n };
    expect(policies.check(buy, usage(day - 1_000n), NOW)).toMatchObject({ ok: true });
    expect(policies.check(buy, usage(day - 999n), NOW)).toEqual({
      ok: false,
      code: "ISSUANCE_CAP_EXCEEDED",
      context: `mint of 1000 TBILL would cross the daily cap of ${day} (999 left on ${DAY} UTC)`,
    });
    // A book already at (or past) the cap leaves nothing, never a negative amount.
    expect(policies.check(buy, usage(day), NOW)).toMatchObject({
      context: expect.stringContaining("(0 left on"),
    });
    expect(policies.check(buy, usage(day + 5n), NOW)).toMatchObject({
      context: expect.stringContaining("(0 left on"),
    });
    // The book is asked for today's mints of this token.
    const asked: unknown[] = [];
    policies.check(
      buy,
      {
        used: (...a) => {
          asked.push(a);
          return 0n;
        },
      },
      NOW,
    );
    expect(asked).toEqual([[tbill, "mint", DAY]]);
  });
});

const entry: TakerEntry = { taker: stranger, reason: "test", source: "admin", atMs: NOW - 1 };
const standingOf = (kind: Standing["kind"]) => ({
  standing: (taker: string, nowMs: number): Standing => {
    expect([taker, nowMs]).toEqual([stranger, NOW]);
    return kind === "none" ? { kind } : { kind, entry };
  },
});

describe("blindFillStanding", () => {
  it("refuses a flagged taker and a denied one, each named for what it is", () => {
    expect(blindFillStanding(standingOf("flagged"), stranger, NOW)).toEqual({
      ok: false,
      code: S.BOT_ACTIVITY_DETECTED,
      context: `taker ${stranger} is flagged for toxic flow`,
      standing: { kind: "flagged", entry },
    });
    expect(blindFillStanding(standingOf("denied"), stranger, NOW)).toEqual({
      ok: false,
      code: S.BOT_ACTIVITY_DETECTED,
      context: `taker ${stranger} is on the deny list`,
      standing: { kind: "denied", entry },
    });
  });
  it("never refuses an allowed taker, nor one without a standing", () => {
    expect(blindFillStanding(standingOf("allowed"), stranger, NOW)).toBeUndefined();
    expect(blindFillStanding(standingOf("none"), stranger, NOW)).toBeUndefined();
  });
});

describe("holderRule and issuedTrade", () => {
  it("refuses a stranger with HOLDER_NOT_ALLOWED, before any switch or cap", () => {
    const { policies, tbill } = setup({ mintOnBuy: false });
    const trade = { taker: stranger, tokenIn: MINT.USDC, amountIn: 1n, tokenOut: tbill, amountOut: 1n };
    const refused = {
      ok: false,
      code: S.HOLDER_NOT_ALLOWED,
      context: `${stranger} is not an allowed holder of TBILL (holder rules of its issuance policy)`,
    };
    expect(holderRule(policies, trade)).toEqual(refused);
    expect(issuedTrade(policies, trade, undefined, NOW)).toEqual(refused);
  });

  it("passes a holder to the switches and caps, with their codes, and answers the need", () => {
    const { policies, tbill, holder } = setup();
    const trade = (amountOut: bigint) => ({
      taker: holder,
      tokenIn: MINT.USDC,
      amountIn: 1n,
      tokenOut: tbill,
      amountOut,
    });
    expect(holderRule(policies, trade(1n))).toBeUndefined();
    expect(issuedTrade(policies, trade(TBILL_LIMITS.maxPerFill + 1n), undefined, NOW)).toEqual({
      ok: false,
      code: S.ISSUANCE_CAP_EXCEEDED,
      context: `mint of ${TBILL_LIMITS.maxPerFill + 1n} TBILL is above the per-fill cap of ${TBILL_LIMITS.maxPerFill}`,
    });
    expect(issuedTrade(policies, trade(2n), usage(TBILL_LIMITS.maxPerDay - 1n), NOW)).toMatchObject({
      ok: false,
      code: S.ISSUANCE_CAP_EXCEEDED,
    });
    expect(issuedTrade(policies, trade(2n), undefined, NOW)).toEqual({
      ok: true,
      need: { issued: policies.of(tbill), direction: "mint", amount: 2n },
    });
  });
});

describe("judgeBlindTrade", () => {
  const { policies, tbill, holder } = setup();
  const trade = (taker: string) => ({
    taker,
    tokenIn: MINT.USDC,
    amountIn: 1n,
    tokenOut: tbill,
    amountOut: 2n,
  });
  const takersOf = (kind: Standing["kind"]) => ({
    standing: (): Standing => (kind === "none" ? { kind } : { kind, entry }),
  });

  it("refuses a flagged taker first, with the standing's code and detail only", () => {
    expect(
      judgeBlindTrade(trade(stranger), { takers: takersOf("flagged"), issuance: { policies } }, NOW),
    ).toEqual({
      ok: false,
      code: S.BOT_ACTIVITY_DETECTED,
      context: `taker ${stranger} is flagged for toxic flow`,
    });
  });

  it("then the issued token's rules: a stranger refused, a holder's need answered, with today's usage", () => {
    const rules = {
      takers: takersOf("none"),
      issuance: { policies, usage: usage(TBILL_LIMITS.maxPerDay - 2n) },
    };
    expect(judgeBlindTrade(trade(stranger), rules, NOW)).toMatchObject({
      ok: false,
      code: S.HOLDER_NOT_ALLOWED,
    });
    expect(judgeBlindTrade(trade(holder), rules, NOW)).toEqual({
      ok: true,
      need: { issued: policies.of(tbill), direction: "mint", amount: 2n },
    });
    const full = { issuance: { policies, usage: usage(TBILL_LIMITS.maxPerDay - 1n) } };
    expect(judgeBlindTrade(trade(holder), full, NOW)).toMatchObject({
      ok: false,
      code: S.ISSUANCE_CAP_EXCEEDED,
    });
  });

  it("without the features configured, signs anyone and needs nothing", () => {
    expect(judgeBlindTrade(trade(stranger), {}, NOW)).toEqual({ ok: true, need: undefined });
  });
});

describe("bindMessageOnce", () => {
  it("binds a message to the first id it comes with; under another id it is refused, naming the first", async () => {
    const bound = new Map<string, string>();
    const store = {
      bindMessage: async (hash: string, id: string) => {
        if (!bound.has(hash)) bound.set(hash, id);
        return bound.get(hash) as string;
      },
    };
    expect(await bindMessageOnce(store, "h", "q1")).toBeUndefined();
    expect(await bindMessageOnce(store, "h", "q1")).toBeUndefined();
    expect(await bindMessageOnce(store, "h", "v2:s")).toEqual({
      ok: false,
      code: S.MESSAGE_BOUND_TO_OTHER_QUOTE,
      context: "the transaction was already submitted for another quote or swap (q1)",
      boundTo: "q1",
    });
  });
});
