/**
 * `npm run doctor [-- --fix [--yes]]`: prints the readiness table; exit status 0 when nothing FAILs.
 * `--fix` creates the maker's missing ATAs (asks first; `--yes` skips the question).
 */
import { createInterface } from "node:readline/promises";
import { formatRatio } from "../../amounts/decimal.ts";
import { dotEnvLine, loadConfig, loadDotEnv } from "../../config/load.ts";
import { parseArgs } from "../cli/args.ts";
import { runMain } from "../cli/run.ts";
import { table } from "../lib/table.ts";
import { makeOperatorSwapApi } from "../operator-api/http.ts";
import { checkStartLedger } from "../wiring/startup-checks.ts";
import { opsContext } from "./context.ts";
import { createMissingAtas, type Diagnosis, diagnose } from "./doctor.ts";
import { formatPairs, pairLines } from "./pairs.ts";

/** Streaming sources need a moment for their first price; static and Redis ones have it at start. */
const PRICE_WAIT_MS = 3_000;

function print(d: Diagnosis): void {
  const rows = d.checks.map((c) => [c.check, c.status, c.detail, c.fix ?? ""]);
  process.stdout.write(`${table(["CHECK", "STATUS", "DETAIL", "FIX"], rows)}\n\n`);
  const fails = d.checks.filter((c) => c.status === "FAIL").length;
  const warns = d.checks.filter((c) => c.status === "warn").length;
  process.stdout.write(
    fails ? `${fails} problem(s) to fix, ${warns} warning(s).\n` : `ready (${warns} warning(s)).\n`,
  );
}

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

const USAGE = {
  command: "npm run doctor",
  summary:
    "Is this maker ready to be registered? Prints the pairs in tokens and USD (sizes, spreads, caps,\n" +
    "price and its age), then checks the RPC, the maker's SOL, every traded mint and the maker's ATAs,\n" +
    "Redis, the fill ledger (as npm start opens it), price freshness, the production hazards (no API key, static prices, a keypair others can\n" +
    "read, the embedded ledger), ADMIN_API_KEY and an https PUBLIC_BASE_URL; prints a table with a fix\n" +
    "for each problem. Exit 0 when nothing FAILs.\n" +
    "Configured like `npm start` (environment and CONFIG).",
  flags: {
    fix: { type: "boolean", description: "create the maker's missing ATAs (asks first)" },
    yes: { type: "boolean", short: "y", description: "with --fix: do not ask" },
  },
} as const;

async function main(): Promise<number> {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const { fix, yes } = values;
  // Hazards are rows of the table here, not a refusal to run.
  const dotEnv = loadDotEnv();
  const config = loadConfig(process.env, { hazards: "report" });
  const ctx = await opsContext(config);
  const operatorApi = makeOperatorSwapApi(config.env, { orderAttempts: 1 });
  try {
    process.stdout.write(
      `doctor: ${config.configPath}, mode ${config.mode}, chain ${ctx.chainNote}\n.env: ${dotEnvLine(dotEnv)}\n\n`,
    );
    await ctx.redis?.connect().catch(() => undefined);
    const problem = await ctx.startPrices(PRICE_WAIT_MS);
    if (problem) process.stdout.write(`${problem}\n`);
    process.stdout.write(`${formatPairs(pairLines(config, ctx.sources, ctx.usd))}\n\n`);
    const ledger = await checkStartLedger(config);
    const deps = {
      config,
      ledger,
      chain: ctx.chain,
      signer: ctx.signer,
      sources: ctx.sources,
      ...(ctx.redis ? { redis: ctx.redis } : {}),
      ...(operatorApi ? { operatorApi } : {}),
    };
    let d = await diagnose(deps);
    print(d);
    if (!fix || !d.missingAtas.length) return d.healthy ? 0 : 1;

    const cost = d.ataRentLamports * BigInt(d.missingAtas.length);
    const what = d.missingAtas.map((m) => `${m.symbol} ${m.ata.toBase58()}`).join(", ");
    const question = `Create ${d.missingAtas.length} ATA(s) (${what}), paying ${formatRatio({ num: cost, den: 1_000_000_000n }, 6)} SOL rent from the maker? [y/N] `;
    if (!yes && !(await confirm(question))) {
      process.stdout.write(
        process.stdin.isTTY ? "not created.\n" : "not created: no terminal to ask; run with --fix --yes.\n",
      );
      return 1;
    }
    const res = await createMissingAtas(ctx, d.missingAtas);
    if (!res.ok) {
      process.stdout.write(`creating the ATAs failed: ${res.error}\n`);
      return 1;
    }
    process.stdout.write(
      `created ${d.missingAtas.length} ATA(s): ${what} (transaction ${res.signature})\n\n`,
    );
    d = await diagnose(deps);
    print(d);
    return d.healthy ? 0 : 1;
  } finally {
    await ctx.close();
  }
}

runMain(main);
