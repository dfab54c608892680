/**
 * Issue 61, finding 11: configuration sizes were smallest units only (`pairs.0.minBase: must be a
 * non-negative integer in smallest units`) while every output speaks tokens. A size may now be written
 * in tokens ("500 SOL", "0.001 SOL"), converted exactly to smallest units (bigint) before the schema
 * reads it; the wrong token, more decimals than the token has, or a decimal without its symbol is
 * refused naming the key. Through parseFileConfig (what every entry point loads the file with) and
 * through the service's start with such a file (its banner, its refusal).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseFileConfig } from "../../config/load.ts";
import { sizeInUnits } from "../../config/token-amounts.ts";
import { freePort, REPO_ROOT } from "../../tooling/processes.ts";
import { startWebhook } from "../support/process.ts";
import { fileTempDir } from "../support/tmp.ts";

const DEFAULT = JSON.parse(readFileSync(join(REPO_ROOT, "config", "default.json"), "utf8"));
const dir = fileTempDir("token-sizes");

/** config/default.json with `edit` applied to a copy. */
function withEdit(edit: (c: typeof DEFAULT) => void) {
  const c = structuredClone(DEFAULT);
  edit(c);
  return c;
}
const solUsdc = (c: typeof DEFAULT) =>
  c.pairs.findIndex((p: { base: string; quote: string }) => p.base === "SOL" && p.quote === "USDC");

describe("finding 11: sizes in tokens, converted exactly", () => {
  it("converts whole and decimal token amounts to smallest units with bigint arithmetic (no float)", () => {
    expect(sizeInUnits("500 SOL", "SOL", 9)).toEqual({ units: "500000000000" });
    expect(sizeInUnits("0.001 SOL", "SOL", 9)).toEqual({ units: "1000000" });
    expect(sizeInUnits("0.000000001 SOL", "SOL", 9)).toEqual({ units: "1" });
    // Past a float's 2^53: every digit kept.
    expect(sizeInUnits("18446744073.709551615 SOL", "SOL", 9)).toEqual({ units: "18446744073709551615" });
    expect(sizeInUnits("0.1 USDC", "USDC", 6)).toEqual({ units: "100000" });
    expect(sizeInUnits("7", "SOL", 9)).toEqual({ units: "7" });
  });

  it("a config with every pair size in tokens parses to the same smallest units as the shipped one", () => {
    const i = solUsdc(DEFAULT);
    const p = DEFAULT.pairs[i];
    const inTokens = withEdit((c) => {
      const q = c.pairs[i];
      q.minBase = `${Number(p.minBase) / 1e9} SOL`;
      q.maxBase = `${BigInt(p.maxBase) / 10n ** 9n} SOL`;
      q.levels = q.levels.map((l: { upToBase: string; spreadBps: number }) => ({
        ...l,
        upToBase: `${BigInt(l.upToBase) / 10n ** 9n} SOL`,
      }));
    });
    expect(inTokens.pairs[i].minBase).toBe("0.001 SOL");
    const parsed = parseFileConfig(inTokens);
    const shipped = parseFileConfig(DEFAULT);
    expect(parsed.pairs[i]).toEqual(shipped.pairs[i]);
  });

  it("converts a token's inventory sizes in that token", () => {
    const parsed = parseFileConfig(
      withEdit((c) => {
        const usdc = c.tokens.find((t: { symbol: string }) => t.symbol === "USDC");
        usdc.minInventory = "2.5 USDC";
        usdc.safetyBuffer = "100 USDC";
      }),
    );
    const usdc = parsed.tokens.find((t) => t.symbol === "USDC");
    expect(usdc?.minInventory).toBe("2500000");
    expect(usdc?.safetyBuffer).toBe("100000000");
  });

  const refusals: [string, (c: typeof DEFAULT) => void, RegExp][] = [
    [
      "more decimals than the token has",
      (c) => {
        c.pairs[solUsdc(c)].minBase = "0.0000000001 SOL";
      },
      /^config: pairs\.\d+\.minBase: "0\.0000000001 SOL": SOL has 9 decimals, so at most 9 digit\(s\) after the point/,
    ],
    [
      "a size in the other token of the pair",
      (c) => {
        c.pairs[solUsdc(c)].maxBase = "90000 USDC";
      },
      /^config: pairs\.\d+\.maxBase: "90000 USDC": this size is in SOL, not USDC/,
    ],
    [
      "a decimal without its symbol",
      (c) => {
        c.pairs[solUsdc(c)].levels[0].upToBase = "0.5";
      },
      /^config: pairs\.\d+\.levels\.0\.upToBase: "0\.5": a size in tokens needs the token's symbol \("0\.5 SOL"\)/,
    ],
  ];
  it.each(refusals)("refuses %s, naming the key", (_what, edit, message) => {
    const run = () => parseFileConfig(withEdit(edit));
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });
});

describe("finding 11: the service starts on sizes in tokens and refuses a bad one naming it", () => {
  it("starts with sizes in tokens; the banner shows them", { timeout: 90_000 }, async () => {
    const path = join(dir, "tokens.json");
    writeFileSync(
      path,
      JSON.stringify(
        withEdit((c) => {
          const p = c.pairs[solUsdc(c)];
          p.minBase = "0.002 SOL";
          p.maxBase = "400 SOL";
          p.levels = [
            { upToBase: "10 SOL", spreadBps: 5 },
            { upToBase: "400 SOL", spreadBps: 25 },
          ];
        }),
      ),
    );
    const w = startWebhook({ CONFIG: path, PORT: String(await freePort()), HOST: "127.0.0.1" });
    try {
      const until = Date.now() + 80_000;
      while (!/\/permissioned-tokens/.test(w.stderr()) && w.proc.exitCode === null && Date.now() < until)
        await new Promise((r) => setTimeout(r, 100));
      expect(w.stderr()).toMatch(/SOL\/USDC\s+0\.002 - 400 SOL\s+.*5 bps to 10 SOL, 25 bps to 400 SOL/);
    } finally {
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  });

  it("refuses a size with more decimals than its token, exit 78, naming the key", {
    timeout: 90_000,
  }, async () => {
    const path = join(dir, "bad.json");
    writeFileSync(
      path,
      JSON.stringify(
        withEdit((c) => {
          c.pairs[solUsdc(c)].minBase = "0.0000000001 SOL";
        }),
      ),
    );
    const w = startWebhook({ CONFIG: path, PORT: String(await freePort()), HOST: "127.0.0.1" });
    const { code } = await w.exited;
    expect(code).toBe(78);
    expect(w.stderr()).toMatch(/pairs\.\d+\.minBase: "0\.0000000001 SOL": SOL has 9 decimals/);
  });
});
