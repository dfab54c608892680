/**
 * `npm run check` runs this after tsc and Biome: native code in the production tree against
 * native-addons.json, and a lockfile that `npm ci` accepts. See scripts/supply-chain/check.ts.
 *
 *   tsx scripts/supply-chain.ts [--root DIR] [--allow FILE]
 *   tsx scripts/supply-chain.ts --complete-lockfile   # after `npm install`, if the check says so
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkSupplyChain, completeLockfile, formatResult, loadAllowlist } from "./supply-chain/check.ts";

const usage = "usage: tsx scripts/supply-chain.ts [--root DIR] [--allow FILE] [--complete-lockfile]";
let values: { root?: string; allow?: string; help?: boolean; "complete-lockfile"?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      root: { type: "string" },
      allow: { type: "string" },
      help: { type: "boolean", short: "h" },
      "complete-lockfile": { type: "boolean" },
    },
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
if (values["complete-lockfile"]) {
  const added = completeLockfile(root);
  console.log(added.length ? `package-lock.json: added ${added.join(", ")}` : "package-lock.json: complete");
}
const allowFile = values.allow ?? join(root, "native-addons.json");
const { ok, text } = formatResult(checkSupplyChain(root, loadAllowlist(allowFile)), "native-addons.json");
(ok ? console.log : console.error)(text);
process.exit(ok ? 0 : 1);
