/**
 * Findings 1 and 2 of issue 61: /ready and the log tell the truth. A production start (`npm start`'s
 * built entry, a local chain over RPC, Redis) with a configured token it cannot advertise (the USDC mint
 * mistyped, still valid base58: "mint account not found") used to be ready with the token quietly gone
 * from /tokens; a pair whose price went stale answered 404 with /ready 200 and not one log line. Each is
 * now a named condition: logged once when entered and once when left, listed on /ready, 503 while a
 * pair that is not `optional` cannot be quoted, and named in the banner.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH } from "../../config/load.ts";
import { publishPrice } from "../../pricing/redis.ts";
import { logLines } from "../support/process.ts";
import { type ProductionBed, productionBed, startBuilt, until } from "../support/production-bed.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("conditions");
let bed: ProductionBed;
beforeAll(async () => {
  bed = await productionBed(dir);
}, 240_000);
afterAll(async () => {
  await bed?.close();
});

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const MISTYPED = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1V";

type FileJson = {
  tokens: { symbol: string; mint: string }[];
  pairs: { base: string; quote: string; priceSource?: string; optional?: boolean }[];
  priceSources: Record<string, unknown>;
};

function configWith(name: string, edit: (c: FileJson) => void): string {
  const c = JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")) as FileJson;
  edit(c);
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(c, null, 2));
  return path;
}

async function ready(opsUrl: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${opsUrl}/ready`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

const conditionLogs = (stdout: string, name: string) => logLines(stdout).filter((l) => l.condition === name);

describe("finding 1: a configured token the maker cannot trade is a named condition", () => {
  const mistyped = (optional: boolean) =>
    configWith(`mistyped-${optional}`, (c) => {
      for (const t of c.tokens) if (t.mint === USDC) t.mint = MISTYPED;
      if (optional) for (const p of c.pairs) if (p.base === "USDC" || p.quote === "USDC") p.optional = true;
    });

  it("the USDC mint mistyped: logged once, named in the banner, /ready 503 naming token:USDC", {
    timeout: 120_000,
  }, async () => {
    const s = startBuilt({ ...bed.env, CONFIG: mistyped(false) });
    try {
      await s.started;
      const opsUrl = s.opsUrl() as string;
      expect(opsUrl, s.stderr()).toBeDefined();
      expect(s.stderr()).toMatch(
        new RegExp(
          `\\n {2}conditions:\\n {4}!!! token:USDC: USDC \\(${MISTYPED}\\) is not advertised: mint account not found; not quoted: SOL/USDC, JUP/USDC, USDC/USDT \\(/ready answers 503\\)\\n`,
        ),
      );
      const r = await ready(opsUrl);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe("not ready");
      expect(r.body.blocking).toEqual(["token:USDC"]);
      expect((r.body.conditions as Record<string, string>)["token:USDC"]).toContain("mint account not found");
      const logged = conditionLogs(s.stdout(), "token:USDC");
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 40, blocksReady: true });
      expect(logged[0]?.msg).toMatch(/^condition entered: token:USDC: /);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it("the same with every USDC pair marked optional: still logged and listed, /ready 200", {
    timeout: 120_000,
  }, async () => {
    const s = startBuilt({ ...bed.env, CONFIG: mistyped(true) });
    try {
      await s.started;
      const r = await ready(s.opsUrl() as string);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body.conditions as object)).toEqual(["token:USDC"]);
      expect(r.body.blocking).toBeUndefined();
      expect(s.stderr()).toMatch(
        / {4}!!! token:USDC: .*mint account not found; not quoted: SOL\/USDC, JUP\/USDC, USDC\/USDT\n/,
      );
      expect(conditionLogs(s.stdout(), "token:USDC")).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });
});

describe("finding 2: a stale price is a named condition", () => {
  it("the maker's feed stops: one log line entering, /ready 503 naming price:SOL/USDC; it resumes: one line leaving, 200", {
    timeout: 120_000,
  }, async () => {
    const config = configWith("feed", (c) => {
      c.priceSources.feed = { kind: "redis", maxAgeMs: 1_000, pollMs: 100 };
      for (const p of c.pairs) if (p.base === "SOL" && p.quote === "USDC") p.priceSource = "feed";
    });
    const redis = new Redis(bed.redisUrl);
    const publish = () => publishPrice(redis, "SOL/USDC", { ts: Date.now(), mid: "180.25" });
    await publish();
    let feeding = setInterval(() => void publish(), 200);
    const s = startBuilt({ ...bed.env, CONFIG: config });
    try {
      await s.started;
      const opsUrl = s.opsUrl() as string;
      expect((await ready(opsUrl)).status, s.stdout()).toBe(200);
      expect(s.stderr()).toContain("\n  conditions:  none\n");

      clearInterval(feeding);
      await until(async () => (await ready(opsUrl)).status === 503);
      const stale = await ready(opsUrl);
      expect(stale.body.blocking).toEqual(["price:SOL/USDC"]);
      expect((stale.body.conditions as Record<string, string>)["price:SOL/USDC"]).toMatch(
        /^SOL\/USDC price is \d+ ms old \(source "feed", limit 1000 ms\): not quoted$/,
      );
      await until(() => conditionLogs(s.stdout(), "price:SOL/USDC").length === 1);
      await new Promise((r) => setTimeout(r, 2_500));
      const entered = conditionLogs(s.stdout(), "price:SOL/USDC");
      expect(entered).toHaveLength(1);
      expect(entered[0]).toMatchObject({ level: 40, blocksReady: true });

      feeding = setInterval(() => void publish(), 200);
      await until(async () => (await ready(opsUrl)).status === 200);
      await until(() => conditionLogs(s.stdout(), "price:SOL/USDC").length === 2);
      const left = conditionLogs(s.stdout(), "price:SOL/USDC")[1];
      expect(left).toMatchObject({ level: 30 });
      expect(left?.msg).toMatch(/^condition left: price:SOL\/USDC/);
      expect((await ready(opsUrl)).body.conditions).toBeUndefined();
    } finally {
      clearInterval(feeding);
      redis.disconnect();
      await s.stop();
    }
  });
});
