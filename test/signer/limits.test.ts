/**
 * The signer's policy file and its own record (src/signer/service/limits.ts) on their own: what the
 * file says in smallest units (rounded down, bounded at 2^52), every way it is refused (naming the file
 * and the entry), and the record's keys, windows and lifetimes in a throwaway Redis. The service tests
 * show the same rules through the socket.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import {
  loadLimits,
  parseLimits,
  SIGNED_RECORD_TTL_MS,
  SignerIssuanceLedger,
  SignerLedger,
  signerKeys,
} from "../../src/signer/service/limits.ts";
import { MINT, testConfig } from "../support/config.ts";
import { fileRedis, redisUrl } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const tokens = testConfig().file.tokens;
const bySymbol = (s: string) => {
  const t = tokens.find((x) => x.symbol === s);
  if (!t) throw new Error(`no ${s}`);
  return t;
};
const entry = (v: string) => ({ perFill: v, perMinute: v, perDay: v, lossPerDay: v });
const parse = (raw: unknown) => parseLimits(raw, tokens, "f.json");
const FEED = "ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d";

describe("parseLimits: amounts", () => {
  it("reads each limit in whole tokens as smallest units, rounded down, a token's own entry before '*'", () => {
    const { limits } = parse({
      tokens: {
        USDC: { perFill: "1.5", perMinute: "2", perDay: "0.0000019", lossPerDay: "0" },
        "*": entry("3"),
      },
    });
    expect(limits.get(MINT.USDC)).toEqual({
      perFill: 1_500_000n,
      perMinute: 2_000_000n,
      perDay: 1n,
      lossPerDay: 0n,
    });
    expect(limits.get(MINT.SOL)).toEqual({
      perFill: 3_000_000_000n,
      perMinute: 3_000_000_000n,
      perDay: 3_000_000_000n,
      lossPerDay: 3_000_000_000n,
    });
    expect(limits.size).toBe(tokens.length);
  });

  it("gives a token without an entry (and no '*') no limits at all", () => {
    const { limits, bands, priceSources } = parse({ tokens: { USDC: entry("1") } });
    expect([...limits.keys()]).toEqual([MINT.USDC]);
    expect(bands.size).toBe(0);
    expect(priceSources).toEqual({});
  });

  it("takes a limit of exactly 2^52 smallest units, refuses one unit more (Lua compares in doubles)", () => {
    // USDC has 6 decimals: 2^52 units are 4,503,599,627.370496 USDC.
    expect(parse({ tokens: { USDC: entry("4503599627.370496") } }).limits.get(MINT.USDC)?.perFill).toBe(
      2n ** 52n,
    );
    expect(() => parse({ tokens: { USDC: { ...entry("1"), perDay: "4503599627.370497" } } })).toThrow(
      new Error("SIGNER_LIMITS: f.json: tokens.USDC.perDay: at most 2^52 smallest units"),
    );
  });

  it("refuses what is not a whole-token decimal, and a symbol that is not configured, naming each entry", () => {
    expect(() => parse({ tokens: { USDC: { ...entry("1"), perFill: "-1", perMinute: "1e3" } } })).toThrow(
      new Error(
        "SIGNER_LIMITS: f.json: tokens.USDC.perFill: a non-negative decimal amount in whole tokens; " +
          "tokens.USDC.perMinute: a non-negative decimal amount in whole tokens",
      ),
    );
    expect(() => parse({ tokens: { DOGE: entry("1") } })).toThrow(
      new Error("SIGNER_LIMITS: f.json: tokens.DOGE: not a configured token symbol"),
    );
  });
});

describe("parseLimits: bands", () => {
  const sources = {
    own: { kind: "static", prices: { "SOL/USDC": "150" } },
    hermes: { kind: "pyth", feeds: { "SOL/USDC": { base: FEED } } },
  };

  it("resolves each pair's tokens and keeps its source and band", () => {
    const { bands, priceSources } = parse({
      tokens: {},
      priceSources: sources,
      pairs: { "SOL/USDC": { priceSource: "hermes", bandBps: 25 } },
    });
    expect([...bands.entries()]).toEqual([
      [
        "SOL/USDC",
        {
          pair: "SOL/USDC",
          base: bySymbol("SOL"),
          quote: bySymbol("USDC"),
          priceSource: "hermes",
          bandBps: 25,
        },
      ],
    ]);
    expect(Object.keys(priceSources).sort()).toEqual(["hermes", "own"]);
  });

  it("refuses a pair of symbols not configured, either side", () => {
    for (const pair of ["DOGE/USDC", "SOL/DOGE"])
      expect(() =>
        parse({ tokens: {}, priceSources: sources, pairs: { [pair]: { priceSource: "own", bandBps: 1 } } }),
      ).toThrow(new Error(`SIGNER_LIMITS: f.json: pairs.${pair}: not a pair of configured token symbols`));
  });

  it("refuses a pair naming a price source the file does not hold", () => {
    expect(() =>
      parse({
        tokens: {},
        priceSources: sources,
        pairs: { "SOL/USDC": { priceSource: "own2", bandBps: 1 } },
      }),
    ).toThrow(
      new Error("SIGNER_LIMITS: f.json: pairs.SOL/USDC.priceSource: own2 is not in the file's priceSources"),
    );
  });

  it("refuses a source without the pair's feed (pyth) or price (static)", () => {
    expect(() =>
      parse({
        tokens: {},
        priceSources: sources,
        pairs: { "JUP/USDC": { priceSource: "hermes", bandBps: 1 } },
      }),
    ).toThrow(new Error("SIGNER_LIMITS: f.json: priceSources.hermes.feeds: no feed for JUP/USDC"));
    expect(() =>
      parse({ tokens: {}, priceSources: sources, pairs: { "JUP/USDC": { priceSource: "own", bandBps: 1 } } }),
    ).toThrow(new Error("SIGNER_LIMITS: f.json: priceSources.own.prices: no price for JUP/USDC"));
  });
});

describe("loadLimits", () => {
  const dir = fileTempDir("signer-limits");
  it("reads the file it names, and names it when it cannot", () => {
    const path = join(dir, "limits.json");
    writeFileSync(path, JSON.stringify({ tokens: { USDC: entry("1") } }));
    expect(loadLimits(path, tokens).limits.get(MINT.USDC)?.perFill).toBe(1_000_000n);
    writeFileSync(path, "{");
    expect(() => loadLimits(path, tokens)).toThrow(`SIGNER_LIMITS: cannot read ${path}: `);
    expect(() => loadLimits(join(dir, "absent.json"), tokens)).toThrow(
      `SIGNER_LIMITS: cannot read ${join(dir, "absent.json")}: ENOENT`,
    );
  });
});

describe("the signer's record", () => {
  const { redis, prefix } = fileRedis();
  const ledger = new SignerLedger(redis, prefix);
  const issuance = new SignerIssuanceLedger(redis, prefix);
  const limits = { perFill: 100n, perMinute: 10n, perDay: 15n, lossPerDay: 3n };
  const now = Date.parse("2030-01-01T00:00:30Z");

  it("names its keys by message, quote, minute and UTC day, under one {signer} tag", () => {
    expect(signerKeys("p:", "h", "m", 86_400_000 * 3 + 60_000 * 7 + 59_999, "q")).toEqual({
      record: "p:{signer}:signed:h",
      quote: "p:{signer}:quote:q",
      minute: `p:{signer}:spent:m:m:${3 * 1440 + 7}`,
      day: "p:{signer}:spent:m:d:3",
      loss: "p:{signer}:lost:m:d:3",
    });
    expect(signerKeys("p:", "h", "m", 0).quote).toBe("p:{signer}:quote:");
  });

  it("records a signature with its lifetimes: the records a day, the minute's count 2 minutes, the day's 2 days", async () => {
    const spend = (messageHash: string, amount: bigint, loss = 0n, quoteId = messageHash) =>
      ledger.recordAndSpend({
        messageHash,
        quoteId,
        blockhash: "bh",
        mint: "M",
        amount,
        loss,
        limits,
        nowMs: now,
      });
    expect(await spend("a", 4n, 2n)).toBe("recorded");
    const keys = signerKeys(prefix, "a", "M", now, "a");
    const ttl = async (k: string) => redis.pttl(k);
    expect(await ttl(keys.record)).toBeGreaterThan(SIGNED_RECORD_TTL_MS - 60_000);
    expect(await ttl(keys.record)).toBeLessThanOrEqual(SIGNED_RECORD_TTL_MS);
    expect(await ttl(keys.quote)).toBeGreaterThan(SIGNED_RECORD_TTL_MS - 60_000);
    expect(await ttl(keys.minute)).toBeGreaterThan(60_000);
    expect(await ttl(keys.minute)).toBeLessThanOrEqual(120_000);
    expect(await ttl(keys.day)).toBeGreaterThan(2 * 86_400_000 - 60_000);
    expect(await ttl(keys.day)).toBeLessThanOrEqual(2 * 86_400_000);
    expect(await ttl(keys.loss)).toBeGreaterThan(2 * 86_400_000 - 60_000);
    expect(await redis.get(keys.record)).toBe("a");
    expect(await ledger.quoteRecord("a")).toEqual({ messageHash: "a", blockhash: "bh" });
    expect(await ledger.quoteRecord("never")).toBeUndefined();

    expect(await spend("a", 1n)).toBe("alreadySigned");
    expect(await spend("b", 1n, 0n, "a")).toBe("quoteSignedForAnother");
    expect(await spend("c", 7n)).toBe("perMinute");
    expect(await spend("d", 2n, 2n)).toBe("lossPerDay");
    expect(await spend("e", 6n)).toBe("recorded");
    expect(await redis.get(keys.minute)).toBe("10");
    expect(await redis.get(keys.loss)).toBe("2");
  });

  it("replaces a quote's record only for the message it names", async () => {
    const base = { quoteId: "r", blockhash: "bh1", mint: "N", amount: 1n, loss: 0n, limits, nowMs: now };
    expect(await ledger.recordAndSpend({ ...base, messageHash: "r1" })).toBe("recorded");
    expect(
      await ledger.recordAndSpend({
        ...base,
        messageHash: "r2",
        replaces: { messageHash: "r1", blockhash: "other" },
      }),
    ).toBe("quoteSignedForAnother");
    expect(
      await ledger.recordAndSpend({
        ...base,
        messageHash: "r2",
        replaces: { messageHash: "r1", blockhash: "bh1" },
      }),
    ).toBe("recorded");
    expect(await ledger.quoteRecord("r")).toEqual({ messageHash: "r2", blockhash: "bh1" });
  });

  it("reads a quote record written without its blockhash (not the script's) with an empty one", async () => {
    await redis.set(signerKeys(prefix, "", "", 0, "nb").quote, "h1");
    expect(await ledger.quoteRecord("nb")).toEqual({ messageHash: "h1", blockhash: "" });
  });

  it("counts an empty quote record (not the script's) as none: read as none, recorded over without a record to replace", async () => {
    const base = { quoteId: "e", blockhash: "bh", mint: "E", amount: 1n, loss: 0n, limits, nowMs: now };
    await redis.set(signerKeys(prefix, "", "", 0, "e").quote, "");
    expect(await ledger.quoteRecord("e")).toBeUndefined();
    expect(await ledger.recordAndSpend({ ...base, messageHash: "e1" })).toBe("recorded");
    expect(await ledger.quoteRecord("e")).toEqual({ messageHash: "e1", blockhash: "bh" });
  });

  it("defines its scripts on a client that has none yet, and runs them there", async () => {
    const fresh = new Redis(redisUrl());
    try {
      const base = { quoteId: "f", blockhash: "b", mint: "F", amount: 1n, loss: 0n, limits, nowMs: now };
      expect(await new SignerLedger(fresh, prefix).recordAndSpend({ ...base, messageHash: "f1" })).toBe(
        "recorded",
      );
      const issued = new SignerIssuanceLedger(fresh, prefix);
      expect(await issued.record({ quoteId: "f", mint: "F", amount: 1n, dailyCap: 1n, nowMs: now })).toBe(
        "recorded",
      );
    } finally {
      fresh.disconnect();
    }
  });

  it("counts the day across minutes, and refuses the day's limit", async () => {
    const at = (nowMs: number, messageHash: string, amount: bigint) =>
      ledger.recordAndSpend({
        messageHash,
        quoteId: messageHash,
        blockhash: "b",
        mint: "D",
        amount,
        loss: 0n,
        limits,
        nowMs,
      });
    expect(await at(now, "d1", 10n)).toBe("recorded");
    expect(await at(now + 60_000, "d2", 5n)).toBe("recorded");
    expect(await at(now + 120_000, "d3", 1n)).toBe("perDay");
  });

  it("records one companion per quote, and the day's issue against its cap, with their lifetimes", async () => {
    const record = (quoteId: string, amount: bigint) =>
      issuance.record({ quoteId, mint: "T", amount, dailyCap: 5n, nowMs: now });
    expect(await record("c1", 3n)).toBe("recorded");
    expect(await record("c1", 1n)).toBe("alreadyMade");
    expect(await record("c2", 3n)).toBe("dailyCap");
    expect(await record("c3", 2n)).toBe("recorded");
    const day = Math.floor(now / 86_400_000);
    expect(await redis.get(`${prefix}{signer}:issued:T:d:${day}`)).toBe("5");
    expect(await redis.get(`${prefix}{signer}:companion:c1`)).toBe("3");
    expect(await redis.pttl(`${prefix}{signer}:companion:c1`)).toBeGreaterThan(SIGNED_RECORD_TTL_MS - 60_000);
    expect(await redis.pttl(`${prefix}{signer}:issued:T:d:${day}`)).toBeGreaterThan(2 * 86_400_000 - 60_000);
    expect(await redis.pttl(`${prefix}{signer}:issued:T:d:${day}`)).toBeLessThanOrEqual(2 * 86_400_000);
  });
});
