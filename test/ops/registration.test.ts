/**
 * `npm run registration`: base URL, maker address, whether an API key is set (never the key), both
 * token lists as the service would serve them, and the hash of their sorted union.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildConfig, type Config, parseEnv } from "../../config/load.ts";
import { formatRegistration, registration } from "../../src/ops/registration.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import { configuredParts } from "../../src/wiring/parts.ts";
import { makeWorld, removeAta, sortedUnionHash, withToken } from "../inventory/support.ts";
import { MINT } from "../support/config.ts";
import { npmRun } from "../support/npm-run.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("registration");

/** The service's price sources (static here: priced without starting) and USD values. */
function parts(config: Config) {
  const p = configuredParts(config);
  return { sources: p.priceSources, usd: p.usd };
}

describe("registration", () => {
  it("lists what the service would advertise, why the rest is not, and the union hash", async () => {
    const w = makeWorld(withToken("JUP", { permissioned: true }));
    removeAta(w, MINT.USDT);
    const config = buildConfig(
      parseEnv({
        LOG_LEVEL: "silent",
        API_KEY: "operator-key-0123456789",
        PUBLIC_BASE_URL: "https://mm.example.com/jupiter/rfq",
      }),
      { ...w.config.file, basePath: "/jupiter/rfq" },
    );
    const r = await registration({
      config,
      chain: w.chain,
      signer: new KeypairSigner(w.maker),
      ...parts(config),
    });
    expect(r).toMatchObject({
      baseUrl: "https://mm.example.com/jupiter/rfq",
      maker: w.maker.publicKey.toBase58(),
      apiKey: "set",
      tokens: [MINT.SOL, MINT.USDC],
      permissionedTokens: [MINT.JUP],
      unionHash: sortedUnionHash([MINT.SOL, MINT.USDC, MINT.JUP]),
      holdingsUnread: false,
    });
    expect(r.baseUrlNote).toBeUndefined();
    expect(r.lines.find((l) => l.symbol === "USDT")).toMatchObject({
      list: "not advertised",
      why: expect.stringMatching(/no associated token account/),
    });
    const text = formatRegistration(r);
    expect(text).not.toContain("operator-key-0123456789");
    expect(text).toMatch(/API key:\s+set/);
  });

  it("warns when PUBLIC_BASE_URL does not end with the configured basePath", async () => {
    const w = makeWorld();
    const config = buildConfig(parseEnv({ PUBLIC_BASE_URL: "https://mm.example.com" }), {
      ...w.config.file,
      basePath: "/jupiter/rfq",
    });
    const r = await registration({
      config,
      chain: w.chain,
      signer: new KeypairSigner(w.maker),
      ...parts(config),
    });
    expect(r.baseUrlNote).toMatch(/does not end with the configured basePath \/jupiter\/rfq/);
  });

  it("runs as `npm run registration` in the paper setup, with the maker key the service will use", async () => {
    const dataDir = join(dir, "data");
    const res = await npmRun("registration", ["--json"], {
      DATA_DIR: dataDir,
      API_KEY: "operator-key-0123456789",
      PORT: "9123",
      // API_KEY without RPC_URL is the paper setup only when it says so (issue 47, finding 1).
      PAPER: "1",
    });
    expect(res.code).toBe(0);
    expect(res.stdout).not.toContain("operator-key-0123456789");
    const r = JSON.parse(res.stdout);
    const key = Keypair.fromSecretKey(
      Uint8Array.from(JSON.parse(readFileSync(join(dataDir, "maker-keypair.json"), "utf8"))),
    );
    expect(r.maker).toBe(key.publicKey.toBase58());
    expect(r.baseUrl).toBe("http://localhost:9123");
    expect(r.apiKey).toBe("set");
    expect(r.tokens).toEqual([MINT.SOL, MINT.USDC, MINT.USDT, MINT.JUP]);
    expect(r.unionHash).toBe(sortedUnionHash(r.tokens));
    expect(r.pairs).toContainEqual(
      expect.objectContaining({ pair: "SOL/USDC", size: "0.001 - 500 SOL", sizeUsd: "$0.18 - $90,125.00" }),
    );
  });
});
