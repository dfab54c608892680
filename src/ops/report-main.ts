/**
 * `npm run report -- [--from 2026-11-01] [--to 2026-11-30] [--format text|csv|json]`: the fill ledger's
 * report for a range (src/ledger/report.ts; default: today, UTC): landed fills, volume by pair, fees
 * owed by mint (what the operator will invoice), fill rate by hour, rejections by refusal code. Reads the
 * ledger the service writes: DATABASE_URL, else the embedded one in DATA_DIR/ledger, which one process
 * opens at a time: while a webhook has it open, the report is asked of that webhook's admin API
 * (GET /admin/report on ADMIN_HOST:ADMIN_PORT with ADMIN_API_KEY), or the refusal says how.
 */
import { type Config, loadConfig, loadDotEnv } from "../../config/load.ts";
import { parseArgs } from "../cli/args.ts";
import { runMain } from "../cli/run.ts";
import { ledgerLocation, openLedger } from "../ledger/open.ts";
import { embeddedLedgerHolder } from "../ledger/pglite.ts";
import { ledgerReport, reportRange } from "../ledger/report.ts";
import { formatReport, type ReportFormat, withSymbols } from "../ledger/report-format.ts";
import { createRedisClient, redisTarget } from "../redis/client.ts";
import { configuredParts } from "../wiring/parts.ts";

const USAGE = {
  command: "npm run report",
  summary:
    "Prints the fill ledger's report for [--from, --to): the landed fills, volume by pair, fees owed by\n" +
    "mint (what the operator will invoice), fill rate by hour and rejections by refusal code. A bare date is\n" +
    "UTC midnight; as --to it includes that whole day; both default to today (UTC). Reads DATABASE_URL,\n" +
    "else the embedded ledger in DATA_DIR/ledger; while a webhook has that open, asks the webhook\n" +
    "(GET /admin/report on ADMIN_HOST:ADMIN_PORT, with ADMIN_API_KEY).",
  flags: {
    from: {
      type: "string",
      value: "DATE",
      description: "start: YYYY-MM-DD (UTC) or an ISO 8601 instant (default: today)",
    },
    to: {
      type: "string",
      value: "DATE",
      description: "end: YYYY-MM-DD (that day included) or an instant (default: today)",
    },
    format: { type: "string", value: "FORMAT", default: "text", description: "text, csv or json" },
  },
  notes: "Example: npm run report -- --from 2026-11-01 --to 2026-11-30 --format csv",
} as const;

const FORMATS: readonly ReportFormat[] = ["text", "csv", "json"];

async function main(): Promise<number> {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const usage = (message: string): number => {
    process.stderr.write(`${message}\n(npm run report -- --help for the usage)\n`);
    return 64;
  };
  const today = new Date().toISOString().slice(0, 10);
  const from = values.from ?? today;
  const to = values.to ?? today;
  const format = values.format as ReportFormat;
  if (!FORMATS.includes(format))
    return usage(`--format: one of ${FORMATS.join(", ")} (got ${values.format})`);
  let range: ReturnType<typeof reportRange>;
  try {
    range = reportRange(from, to);
  } catch (e) {
    return usage((e as Error).message);
  }
  loadDotEnv();
  // It reads the configuration and the ledger: RPC_URL, the key and Redis are not asked for.
  const config = loadConfig(process.env, { hazards: "report", reader: true });
  await refuseWhatTheServiceRefuses(config);
  const where = ledgerLocation(config);
  if (!where) {
    process.stderr.write("LEDGER=off: there is no fill ledger to report on\n");
    return 1;
  }
  if (where.kind === "pglite") {
    const holder = embeddedLedgerHolder(where.dir);
    if (holder !== undefined) return fromRunningService(config, holder, from, to, format);
  }
  const ledger = await openLedger(where);
  try {
    const report = withSymbols(config, await ledgerReport(ledger.db, range, config.file.toxicity));
    process.stdout.write(formatReport(report, format));
    return 0;
  } finally {
    await ledger.db.close();
  }
}

/** The report from the webhook that has the embedded ledger open (its admin API), or how to get it. */
async function fromRunningService(
  config: Config,
  pid: number,
  from: string,
  to: string,
  format: ReportFormat,
): Promise<number> {
  const { ADMIN_API_KEY: key, ADMIN_PORT: port } = config.env;
  const host = ["0.0.0.0", "::"].includes(config.env.ADMIN_HOST) ? "127.0.0.1" : config.env.ADMIN_HOST;
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const query = new URLSearchParams({ from, to, format }).toString();
  const held = `the embedded ledger ${ledgerLocationText(config)} is open in process ${pid} (the webhook; one process at a time)`;
  if (!key) {
    process.stderr.write(
      `${held}.\nAsk that webhook instead: set ADMIN_API_KEY to its key and run this again (it asks ${base}/admin/report),\n` +
        `or: curl -sf -H "X-ADMIN-API-KEY: $ADMIN_API_KEY" '${base}/admin/report?${query}'\n` +
        "(a webhook started without ADMIN_API_KEY has no admin API: restart it with one, or stop it and run this again)\n",
    );
    return 69;
  }
  let res: Response;
  try {
    res = await fetch(`${base}/admin/report?${query}`, {
      headers: { "x-admin-api-key": key },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    process.stderr.write(
      `${held}, and its admin API at ${base} (ADMIN_HOST, ADMIN_PORT) does not answer: ${(e as Error).message}\n`,
    );
    return 69;
  }
  const body = await res.text();
  if (!res.ok) {
    process.stderr.write(`${held}; its admin API (${base}/admin/report) answered ${res.status}: ${body}\n`);
    return 69;
  }
  process.stderr.write(`(from the running webhook, process ${pid}, at ${base})\n`);
  process.stdout.write(body);
  return 0;
}

/**
 * Builds the service's configured parts (src/wiring/parts.ts) and closes them: the report reads
 * none of them. A `redis` price source without a Redis setting is not asked about: the report reads no
 * price.
 */
async function refuseWhatTheServiceRefuses(config: Config): Promise<void> {
  const target = redisTarget(config.env);
  if (!target && Object.values(config.file.priceSources).some((s) => s.kind === "redis")) return;
  // A probe client connects only when asked: this one never is.
  const redis = target ? createRedisClient(target, { client: "report", use: "probe" }) : undefined;
  try {
    await configuredParts(config, redis ? { redis } : {}).close();
  } finally {
    redis?.disconnect();
  }
}

const ledgerLocationText = (config: Config) => {
  const where = ledgerLocation(config);
  return where?.kind === "pglite" ? where.dir : "";
};

runMain(main);
