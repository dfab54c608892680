/**
 * Finding 1 of issue 47: production intent is never the paper setup. A production setting without
 * RPC_URL (a typo such as RPC_ULR) used to start the paper setup with the real key; it is refused now
 * unless PAPER=1 says the paper setup is meant, and a near miss of a known name is fatal whenever a
 * production setting is present. /ready and /metrics say which mode runs. The refusals go through
 * `npm start`'s entry point (src/main.ts) as its own process.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { ConfigError, KNOWN_ENV, loadConfig, PRODUCTION_SETTINGS } from "../../config/load.ts";
import { signerEnvSchema } from "../../src/signer/service/index.ts";
import { freePort } from "../../tooling/processes.ts";
import { startWebhook } from "../support/process.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("intent");
const keyFile = (() => {
  const path = join(dir, "maker.json");
  writeFileSync(path, JSON.stringify(Array.from(Keypair.generate().secretKey)), { mode: 0o600 });
  return path;
})();

function refusal(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("started");
}

/** One value per production setting that parses on its own. */
const SAMPLE: Record<(typeof PRODUCTION_SETTINGS)[number], string> = {
  MAKER_KEYPAIR: keyFile,
  REDIS_URL: "redis://127.0.0.1:6379",
  REDIS_CLUSTER_NODES: "127.0.0.1:7000",
  REDIS_SENTINELS: "127.0.0.1:26379",
  DATABASE_URL: "postgres://rfq@127.0.0.1:5432/rfq",
  API_KEY: "operator-key-0123456789",
  SIGNER_URL: "unix:///run/signer.sock",
  BUNDLE_URL: "https://block-engine.example",
  OPERATOR_API_URL: "https://operator.example",
  RFQ_V2_URL: "https://rfq-v2.example",
};

const SAMPLE_PRODUCTION = () => ({
  RPC_URL: "https://rpc.example",
  MAKER_KEYPAIR: keyFile,
  REDIS_URL: SAMPLE.REDIS_URL,
  API_KEY: SAMPLE.API_KEY,
  DATABASE_URL: SAMPLE.DATABASE_URL,
  ALLOW_STATIC_PRICES: "1",
});

describe("finding 1: production intent is never paper", () => {
  it.each(PRODUCTION_SETTINGS)("refuses %s without RPC_URL, naming both and PAPER=1", (name) => {
    const env: Record<string, string> = { [name]: SAMPLE[name] };
    if (name === "REDIS_SENTINELS") env.REDIS_SENTINEL_MASTER = "mymaster";
    const message = refusal(env);
    expect(message).toMatch(new RegExp(`^env: RPC_URL: unset while ${name}`));
    expect(message).toContain("PAPER=1 if the paper setup is meant");
  });

  it("starts the paper setup with PAPER=1 (the paper setup meant, with Redis and a key)", () => {
    const config = loadConfig({ PAPER: "1", REDIS_URL: SAMPLE.REDIS_URL, MAKER_KEYPAIR: keyFile });
    expect(config.mode).toBe("paper");
  });

  it("refuses the issue's RPC_ULR typo with a key, Redis and API_KEY: the misspelling is named, fatal", () => {
    const env = {
      RPC_ULR: "https://rpc.example",
      MAKER_KEYPAIR: keyFile,
      REDIS_URL: SAMPLE.REDIS_URL,
      API_KEY: SAMPLE.API_KEY,
    };
    const message = refusal(env);
    expect(message).toMatch(/^env: RPC_ULR: not a setting of this service \(did you mean RPC_URL\?\)/);
    expect(message).toContain("with MAKER_KEYPAIR, REDIS_URL, API_KEY set");
    // Even with PAPER=1: a near miss beside a production setting is never a warning only.
    expect(refusal({ ...env, PAPER: "1" })).toMatch(/RPC_ULR: not a setting/);
  });

  it("knows the signer service's settings, so one environment file for both is not a near miss", () => {
    for (const name of Object.keys(signerEnvSchema.shape)) expect(KNOWN_ENV).toContain(name);
    expect(loadConfig({ ...SAMPLE_PRODUCTION(), SIGNER_KEYPAIR: keyFile }).mode).toBe("production");
  });

  it("keeps a near miss a warning in the bare paper setup (nothing real is set)", () => {
    const config = loadConfig({ LOG_LEVL: "debug" });
    expect(config.mode).toBe("paper");
    expect(config.warnings).toEqual([
      "env: LOG_LEVL: not a setting of this service, ignored (did you mean LOG_LEVEL?)",
    ]);
  });

  it("npm start's entry point exits 78 on the typo, before anything listens", {
    timeout: 60_000,
  }, async () => {
    const w = startWebhook({
      PAPER: "",
      RPC_ULR: "https://rpc.example",
      MAKER_KEYPAIR: keyFile,
      API_KEY: SAMPLE.API_KEY,
      PORT: String(await freePort()),
    });
    const { code } = await w.exited;
    expect(code).toBe(78);
    expect(w.stderr()).toMatch(/RPC_ULR: not a setting of this service \(did you mean RPC_URL\?\)/);
    expect(w.stderr()).not.toMatch(/listening on/);
  });

  it("/ready and /metrics name the mode", { timeout: 60_000 }, async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const w = startWebhook({ PORT: String(port), HOST: "127.0.0.1", ADMIN_PORT: String(adminPort) });
    try {
      const until = Date.now() + 50_000;
      while (!/listening on/.test(w.stderr()) && Date.now() < until && w.proc.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      for (const p of [port, adminPort]) {
        const ready = (await (await fetch(`http://127.0.0.1:${p}/ready`)).json()) as { mode: string };
        expect(ready.mode).toBe("paper");
      }
      const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
      expect(metrics).toMatch(/\nrfq_mode_info\{mode="paper"\} 1\n/);
    } finally {
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  });
});
