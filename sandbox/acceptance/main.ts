/**
 * `npm run acceptance -- <baseUrl> [apiKey]`: runs the local stand-in of the operator's acceptance
 * suite against a running instance (start it with `ACCEPTANCE_MODE=1 npm start`), twice in a row, as
 * the operator's suite may be run again against one instance (its ids repeat across runs). Exits
 * non-zero on any failed check.
 */
import { parseArgs } from "../../src/cli/args.ts";
import { runAcceptanceSuite } from "./suite.ts";

const RUNS = 2;
const { positionals } = parseArgs(process.argv.slice(2), {
  command: "npm run acceptance",
  positionals: "[baseUrl] [apiKey]",
  summary:
    "Runs the local stand-in of the operator's acceptance suite, twice, against a running instance\n" +
    "(start it with ACCEPTANCE_MODE=1 npm start). baseUrl defaults to http://127.0.0.1:8080 (add the\n" +
    "config's basePath); apiKey is its API_KEY, if any. Exits non-zero on any failed check.",
  flags: {},
});
if (positionals.length > 2) {
  process.stderr.write(
    `npm run acceptance: at most [baseUrl] [apiKey], got ${positionals.length} arguments\n`,
  );
  process.exit(64);
}
const [baseUrl = "http://127.0.0.1:8080", apiKey] = positionals;
let failed = 0;
for (let run = 1; run <= RUNS; run++) {
  const results = await runAcceptanceSuite(baseUrl, apiKey);
  for (const r of results)
    console.log(`${r.ok ? "PASS" : "FAIL"}  run ${run}: ${r.name}${r.ok ? "" : `\n      ${r.detail}`}`);
  const bad = results.filter((r) => !r.ok).length;
  console.log(`run ${run}: ${results.length - bad} passed, ${bad} failed`);
  failed += bad;
}
process.exit(failed ? 1 : 0);
