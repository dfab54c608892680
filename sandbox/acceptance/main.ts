/**
 * `npm run acceptance -- <baseUrl> [apiKey]`: runs the local stand-in of the operator's acceptance
 * suite against a running instance (start it with `ACCEPTANCE_MODE=1 npm start`), twice in a row, as
 * the operator's suite may be run again against one instance (its ids repeat across runs). Exits
 * non-zero on any failed check.
 */
import { runAcceptanceSuite } from "./suite.ts";

const RUNS = 2;
const [baseUrl = "http://127.0.0.1:8080", apiKey] = process.argv.slice(2);
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
