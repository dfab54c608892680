/**
 * Finding 6 of issue 47: `npm start`, `doctor`, `registration` and `report` build the configured
 * service parts with one function (src/wiring/parts.ts), so each accepts exactly the configurations the
 * others accept. Every entry point is run as its own process with the same configuration file; a
 * refusal is exit 78 with the same message from each. Production hazards are out of this set: the
 * service refuses them, doctor reports them as rows (finding 1's rule, tested in test/ops/doctor.test.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { freePort } from "../../tooling/processes.ts";
import { defaultFileConfig } from "../support/config.ts";
import { npmRun } from "../support/npm-run.ts";
import { startWebhook } from "../support/process.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("one-composition");

type Outcome = { accepted: true } | { accepted: false; message: string };

const mint = () => Keypair.generate().publicKey.toBase58();
const staticPrices = (f: FileConfig) =>
  (f.priceSources.static as { kind: "static"; prices: Record<string, string> }).prices;

/** A token of the maker's and a pair of it priced by the static source. */
function withToken(
  f: FileConfig,
  token: Record<string, unknown>,
  pair?: { quote: string; price: string; extra?: Record<string, unknown> },
): FileConfig {
  const symbol = token.symbol as string;
  return {
    ...f,
    tokens: [...f.tokens, { mint: mint(), decimals: 6, ...token } as FileConfig["tokens"][number]],
    pairs: pair
      ? [
          ...f.pairs,
          {
            base: symbol,
            quote: pair.quote,
            minBase: "1000000",
            maxBase: "1000000000",
            levels: [{ upToBase: "1000000000", spreadBps: 20 }],
            ...pair.extra,
          } as FileConfig["pairs"][number],
        ]
      : f.pairs,
    priceSources: pair
      ? {
          ...f.priceSources,
          static: {
            kind: "static",
            prices: { ...staticPrices(f), [`${symbol}/${pair.quote}`]: pair.price },
          } as FileConfig["priceSources"][string],
        }
      : f.priceSources,
  };
}

const CASES: { name: string; file: (f: FileConfig) => FileConfig; refusal?: RegExp }[] = [
  {
    name: "a permissioned token with targetInventory and maxExposureUsd, valued through its pair",
    file: (f) =>
      withToken(
        f,
        { symbol: "PRM", permissioned: true, targetInventory: "5000000000", maxExposureUsd: "2500" },
        { quote: "USDC", price: "1.02" },
      ),
  },
  {
    name: "maxExposureUsd on a token no pair values in USD",
    file: (f) => withToken(f, { symbol: "LONE", targetInventory: "1000000", maxExposureUsd: "100" }),
    refusal: /tokens\.LONE\.maxExposureUsd: no pair values LONE in USD/,
  },
  {
    name: "maxNotionalUsd on a pair whose quote token has no USD price",
    file: (f) =>
      withToken(
        withToken(f, { symbol: "AAA" }),
        { symbol: "BBB" },
        {
          quote: "AAA",
          price: "2",
          extra: { maxNotionalUsd: "1000" },
        },
      ),
    refusal: /pairs\.BBB\/AAA\.maxNotionalUsd: no USD price for AAA/,
  },
];

function envFor(name: string, file: FileConfig): Record<string, string> {
  const configPath = join(dir, `${name}.json`);
  writeFileSync(configPath, JSON.stringify(file));
  // The paper setup, no fill ledger (report then stops after its configuration with "LEDGER=off").
  return { CONFIG: configPath, DATA_DIR: join(dir, `data-${name}`), LEDGER: "off" };
}

/** Accepted: the entry point got past its configuration to its own work (`done` in its output). */
function outcome(code: number | null, output: string, stderr: string, done: RegExp): Outcome {
  if (done.test(output)) return { accepted: true };
  // A refusal is the configuration error's exit code and message, never a stack trace.
  expect({ code, stackTrace: /\n\s+at /.test(stderr) }).toEqual({ code: 78, stackTrace: false });
  return { accepted: false, message: stderr.replace(/^configuration error, not starting:\n/, "").trim() };
}

async function service(env: Record<string, string>): Promise<Outcome> {
  const w = startWebhook({ ...env, PORT: String(await freePort()), HOST: "127.0.0.1" });
  const until = Date.now() + 60_000;
  while (!/listening on/.test(w.stderr()) && w.proc.exitCode === null && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  if (w.proc.exitCode === null) w.proc.kill("SIGTERM");
  const { code } = await w.exited;
  return outcome(code, w.stderr(), w.stderr(), /listening on/);
}

/** What each command prints once its configuration is accepted. */
const DONE: Record<string, RegExp> = {
  doctor: /^doctor: /m,
  registration: /^maker address: /m,
  report: /LEDGER=off: there is no fill ledger/,
};

async function command(script: string, env: Record<string, string>): Promise<Outcome> {
  const res = await npmRun(script, [], env);
  return outcome(res.code, res.stdout + res.stderr, res.stderr, DONE[script] as RegExp);
}

describe("finding 6: one composition", () => {
  it.each(CASES)(
    "npm start, doctor, registration and report agree: $name",
    {
      timeout: 240_000,
    },
    async ({ name, file, refusal }) => {
      const env = envFor(name.replace(/\W+/g, "-"), file(defaultFileConfig()));
      const outcomes = {
        start: await service(env),
        doctor: await command("doctor", env),
        registration: await command("registration", env),
        report: await command("report", env),
      };
      const expected = refusal
        ? { accepted: false, message: expect.stringMatching(refusal) }
        : { accepted: true };
      expect(outcomes).toEqual({
        start: expected,
        doctor: expected,
        registration: expected,
        report: expected,
      });
      if (refusal) {
        const messages = new Set(Object.values(outcomes).map((o) => (o.accepted ? "" : o.message)));
        expect(messages.size).toBe(1);
      }
    },
  );
});
