/**
 * `npm run report -- --from 2026-11-01 --to 2026-11-30 [--format text|csv|json]`: the fill ledger's
 * report for a range (src/ledger/report.ts): landed fills, volume by pair, fees owed by mint (what the
 * operator will invoice), fill rate by hour, rejections by reason. Reads the ledger the service writes:
 * DATABASE_URL, else the embedded one in DATA_DIR/ledger (which one process opens at a time: while the
 * webhook runs, ask its admin API, GET /admin/fees and /admin/fills).
 */
import { loadConfig } from "../../config/load.ts";
import { parseArgs } from "../cli/args.ts";
import { runMain } from "../cli/run.ts";
import { ledgerLocation, openLedger } from "../ledger/open.ts";
import { ledgerReport, reportRange } from "../ledger/report.ts";
import { formatReport, type ReportFormat, withSymbols } from "../ledger/report-format.ts";

const USAGE = {
  command: "npm run report",
  summary:
    "Prints the fill ledger's report for [--from, --to): the landed fills, volume by pair, fees owed by\n" +
    "mint (what the operator will invoice), fill rate by hour and rejections by reason. A bare date is\n" +
    "UTC midnight; as --to it includes that whole day. Reads DATABASE_URL, else the embedded ledger in\n" +
    "DATA_DIR/ledger (not while a webhook has it open: use its GET /admin/fees and /admin/fills).",
  flags: {
    from: { type: "string", value: "DATE", description: "start: YYYY-MM-DD (UTC) or an ISO 8601 instant" },
    to: { type: "string", value: "DATE", description: "end: YYYY-MM-DD (that day included) or an instant" },
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
  if (!values.from || !values.to) return usage("--from and --to are required");
  const format = values.format as ReportFormat;
  if (!FORMATS.includes(format))
    return usage(`--format: one of ${FORMATS.join(", ")} (got ${values.format})`);
  let range: ReturnType<typeof reportRange>;
  try {
    range = reportRange(values.from, values.to);
  } catch (e) {
    return usage((e as Error).message);
  }
  const config = loadConfig(process.env, { hazards: "report" });
  const where = ledgerLocation(config);
  if (!where) {
    process.stderr.write("LEDGER=off: there is no fill ledger to report on\n");
    return 1;
  }
  const ledger = await openLedger(where);
  try {
    const report = withSymbols(config, await ledgerReport(ledger.db, range));
    process.stdout.write(formatReport(report, format));
    return 0;
  } finally {
    await ledger.db.close();
  }
}

runMain(main);
