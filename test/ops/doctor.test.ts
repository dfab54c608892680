/**
 * `npm run doctor` against a local chain: in-process checks on LiteSVM, and the command itself run
 * against the local chain's JSON-RPC endpoint (what `npm run chain` serves), where it reports a
 * missing ATA and `--fix --yes` creates it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair, PublicKey } from "@solana/web3.js";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import { readHoldings } from "../../inventory/holdings.ts";
import { publishPrice } from "../../pricing/redis.ts";
import { closePriceSources, startPriceSources } from "../../pricing/sources.ts";
import { startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { ata, seedFromConfig } from "../../src/chain/local/seed.ts";
import { createMissingAtas, diagnose } from "../../src/ops/doctor.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import {
  makeTransferFeeMint,
  makeWorld,
  removeAta,
  type World,
  withExtraToken,
} from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT, testConfig } from "../support/config.ts";
import { npmRun } from "../support/npm-run.ts";
import { fileRedis, redisUrl } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const { redis, prefix } = fileRedis();
const dir = fileTempDir("doctor");
const cleanups = cleanupsAfterEach();

function deps(w: World) {
  return {
    config: w.config,
    chain: w.chain,
    signer: new KeypairSigner(w.maker),
    sources: w.sources,
    now: () => w.clock.t,
  };
}
const row = (d: Awaited<ReturnType<typeof diagnose>>, check: string) =>
  d.checks.find((c) => c.check === check);

describe("doctor (in-process, local chain)", () => {
  it("passes a fully seeded maker", async () => {
    const d = await diagnose(deps(makeWorld()));
    expect(d.checks.filter((c) => c.status !== "ok")).toEqual([]);
    expect(d.healthy).toBe(true);
  });

  it("reports missing ATAs (wrapped SOL included) with the fix, and the fix creates them", async () => {
    const w = makeWorld();
    removeAta(w, MINT.SOL);
    removeAta(w, MINT.JUP);
    let d = await diagnose(deps(w));
    expect(d.healthy).toBe(false);
    expect(row(d, "ATA SOL (wSOL)")).toMatchObject({ status: "FAIL", fix: expect.stringMatching(/--fix/) });
    expect(row(d, "ATA JUP")).toMatchObject({ status: "FAIL" });
    expect(d.missingAtas.map((m) => m.symbol)).toEqual(["SOL", "JUP"]);

    const fixed = await createMissingAtas(deps(w), d.missingAtas, { pollMs: 10 });
    expect(fixed.ok).toBe(true);
    const read = await readHoldings(w.chain, w.maker.publicKey, w.config.file.tokens);
    expect(read.ok && read.holdings.tokens.get(MINT.SOL)!.ataExists).toBe(true);
    expect(read.ok && read.holdings.tokens.get(MINT.JUP)!.ataExists).toBe(true);
    d = await diagnose(deps(w));
    expect(row(d, "ATA SOL (wSOL)")!.status).toBe("warn"); // exists now, but empty
    expect(d.healthy).toBe(true);
  });

  it("refuses a Token-2022 mint with a transfer fee", async () => {
    const fee = Keypair.generate();
    const w = makeWorld(withExtraToken(fee.publicKey.toBase58(), "FEE", TOKEN_2022_PROGRAM));
    await makeTransferFeeMint(w, fee, 50);
    const d = await diagnose(deps(w));
    expect(row(d, "mint FEE")).toMatchObject({
      status: "FAIL",
      detail: expect.stringMatching(/transfer fee of 50 bps/),
      fix: expect.stringMatching(/remove FEE/),
    });
  });

  it("flags maker SOL below the minimum for fees", async () => {
    const w = makeWorld((f) => ({ ...f, inventory: { ...f.inventory, minSolLamports: "500000000000" } }));
    const d = await diagnose(deps(w));
    expect(row(d, "maker SOL")).toMatchObject({
      status: "FAIL",
      fix: expect.stringMatching(/^send SOL to /),
    });
  });

  it("flags a stale price, a pair without a price and an unreachable Redis", async () => {
    const names = { keyPrefix: `${prefix}price:`, channel: `${prefix}prices` };
    const w = makeWorld(
      (f) => ({
        ...f,
        pairs: f.pairs.map((p) => (p.quote === "USDC" ? { ...p, priceSource: "engine" } : p)),
        priceSources: {
          ...f.priceSources,
          engine: { kind: "redis", ...names, maxAgeMs: 1_000, pollMs: 500 },
        },
      }),
      {},
      { redis },
    );
    await publishPrice(redis, "SOL/USDC", { ts: Date.now() - 60_000, mid: "180.25" }, names);
    await startPriceSources(w.sources);
    cleanups.push(() => closePriceSources(w.sources));
    const down = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    down.on("error", () => {}); // refused connections are the point here
    cleanups.push(async () => void down.disconnect());
    w.clock.t = Date.now();
    const d = await diagnose({ ...deps(w), redis: down });
    expect(row(d, "price SOL/USDC")).toMatchObject({
      status: "FAIL",
      detail: expect.stringMatching(/ms old, limit 1000 ms/),
    });
    expect(row(d, "price JUP/USDC")).toMatchObject({
      status: "FAIL",
      detail: expect.stringMatching(/no price/),
    });
    expect(row(d, "price SOL/USDT")!.status).toBe("ok");
    expect(row(d, "Redis")!.status).toBe("FAIL");
  });
});

describe("npm run doctor (against the local chain's JSON-RPC endpoint)", () => {
  // Four runs of the command, each opening the embedded ledger as npm start does (seconds each).
  it("reports the missing wSOL ATA, refuses to fix without a terminal or --yes, and --fix --yes creates it", {
    timeout: 120_000,
  }, async () => {
    const config = testConfig();
    const chain = LocalChain.create();
    const maker = Keypair.generate();
    const keyFile = join(dir, "maker.json");
    writeFileSync(keyFile, JSON.stringify(Array.from(maker.secretKey)), { mode: 0o600 });
    seedFromConfig(chain, config.file, maker.publicKey);
    const wsolAta = ata(chain, maker.publicKey, new PublicKey(MINT.SOL));
    chain.svm.setAccount(wsolAta, {
      lamports: 0,
      data: new Uint8Array(),
      owner: new PublicKey("11111111111111111111111111111111"),
      executable: false,
    });
    const server = await startRpcServer(chain, { host: "127.0.0.1", port: 0 });
    cleanups.push(() => server.close());
    // A production setup whose accepted hazards are the shipped static prices and the embedded ledger
    // (warn rows).
    const env = {
      RPC_URL: server.url,
      MAKER_KEYPAIR: keyFile,
      REDIS_URL: redisUrl(),
      API_KEY: "operator-key-0123456789",
      ALLOW_STATIC_PRICES: "1",
      ALLOW_EMBEDDED_LEDGER: "1",
    };

    const report = await npmRun("doctor", [], env);
    expect(report.code).toBe(1);
    expect(report.stdout).toMatch(/mode production/);
    expect(report.stdout).toMatch(new RegExp(`ATA SOL \\(wSOL\\)\\s+FAIL\\s+missing: ${wsolAta.toBase58()}`));
    expect(report.stdout).toMatch(/ATA USDC\s+ok/);
    expect(report.stdout).toMatch(/1 problem\(s\) to fix/);
    // The pairs in human units before the checks, and what production needs beyond quoting.
    expect(report.stdout).toMatch(
      /\nSOL\/USDC\s+0\.001 - 500 SOL\s+\$0\.18 - \$90,125\.00\s+5 bps to 10 SOL, /,
    );
    expect(report.stdout).toMatch(/ADMIN_API_KEY\s+warn\s+not set: no admin API/);
    expect(report.stdout).toMatch(
      /PUBLIC_BASE_URL\s+warn\s+not set: `npm run registration` prints the local address/,
    );
    expect(report.stdout).toMatch(/unsafe embedded ledger\s+warn\s+/);

    const asked = await npmRun("doctor", ["--fix"], env);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toMatch(/not created: no terminal to ask; run with --fix --yes/);
    expect(chain.svm.getAccount(wsolAta)?.data.length ?? 0).toBe(0);

    const fixed = await npmRun("doctor", ["--fix", "--yes"], env);
    expect(fixed.stdout).toMatch(new RegExp(`created 1 ATA\\(s\\): SOL ${wsolAta.toBase58()}`));
    expect(fixed.code).toBe(0);
    expect(chain.svm.getAccount(wsolAta)!.data.length).toBe(165);
    expect(fixed.stdout).toMatch(/unsafe static prices\s+warn\s+.*allowed by ALLOW_STATIC_PRICES=1/);
    // the new wSOL ATA is empty, static prices, the embedded ledger, no ADMIN_API_KEY, no PUBLIC_BASE_URL
    expect(fixed.stdout).toMatch(/ready \(5 warning\(s\)\)/);
    expect(fixed.stdout).toMatch(/\nfill ledger\s+ok\s+\S/);

    const plain = await npmRun("doctor", [], { ...env, PUBLIC_BASE_URL: "http://mm.example.com" });
    expect(plain.stdout).toMatch(/PUBLIC_BASE_URL\s+FAIL\s+http:\/\/mm\.example\.com is not https/);
    expect(plain.code).toBe(1);
  });
});
