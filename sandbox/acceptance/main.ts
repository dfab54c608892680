/**
 * `npm run acceptance -- <baseUrl> [apiKey]`: runs the local stand-in of the operator's acceptance
 * suite against a running instance (start it with `ACCEPTANCE_MODE=1 npm start`). Exits non-zero on
 * any failed check.
 */
import { runAcceptanceSuite } from "./suite.ts";

const [baseUrl = "http://127.0.0.1:8080", apiKey] = process.argv.slice(2);
const results = await runAcceptanceSuite(baseUrl, apiKey);
for (const r of results)
  console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name}${r.ok ? "" : `\n      ${r.detail}`}`);
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
