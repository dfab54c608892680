/** `npm run registration [-- --json]`: what to give the operator (see registration.ts). */
import { loadConfig, loadDotEnv } from "../../config/load.ts";
import { parseArgs } from "../cli/args.ts";
import { runMain } from "../cli/run.ts";
import { opsContext } from "./context.ts";
import { formatRegistration, registration } from "./registration.ts";

const USAGE = {
  command: "npm run registration",
  summary:
    "Prints what to hand the operator: the public base URL (PUBLIC_BASE_URL), the maker address, the\n" +
    "/tokens and /permissioned-tokens lists and their union hash, and the pairs in tokens and USD\n" +
    "(sizes, spreads, caps, price and its age). Exit 1 when the maker's holdings\n" +
    "cannot be read. Configured like `npm start` (environment and CONFIG).",
  flags: { json: { type: "boolean", description: "print JSON instead of text" } },
} as const;

async function main(): Promise<number> {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  // Production hazards are doctor's to report; what to register does not depend on them.
  loadDotEnv();
  const config = loadConfig(process.env, { hazards: "report" });
  const ctx = await opsContext(config);
  try {
    const problem = await ctx.startPrices(3_000);
    if (problem) process.stderr.write(`${problem}\n`);
    const r = await registration(ctx);
    process.stdout.write(values.json ? `${JSON.stringify(r, null, 2)}\n` : formatRegistration(r));
    return r.holdingsUnread ? 1 : 0;
  } finally {
    await ctx.close();
  }
}

runMain(main);
