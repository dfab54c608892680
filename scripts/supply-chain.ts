/**
 * `npm run check` runs this after tsc and Biome: native code in the production tree against
 * native-addons.json, and a lockfile that `npm ci` accepts. See scripts/supply-chain/check.ts.
 *
 *   tsx scripts/supply-chain.ts [--root DIR] [--allow FILE]
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkSupplyChain, formatResult, loadAllowlist } from "./supply-chain/check.ts";

const usage = "usage: tsx scripts/supply-chain.ts [--root DIR] [--allow FILE]";
let values: { root?: string; allow?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { root: { type: "string" }, allow: { type: "string" }, help: { type: "boolean", short: "h" } },
  }));
} catch (e) {
  console.error(`${(e as Error).message}\n${usage}`);
  process.exit(2);
}
if (values.help) {
  console.log(
    `${usage}\n  fails on native code in production dependencies that the allowlist does not name,\n  and on a lockfile that npm ci would refuse`,
  );
  process.exit(0);
}
const root = resolve(values.root ?? join(import.meta.dirname ?? ".", ".."));
const allowFile = values.allow ?? join(root, "native-addons.json");
const { ok, text } = formatResult(checkSupplyChain(root, loadAllowlist(allowFile)), "native-addons.json");
(ok ? console.log : console.error)(text);
process.exit(ok ? 0 : 1);
