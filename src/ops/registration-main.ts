/** `npm run registration [-- --json]`: what to give the operator (see registration.ts). */
import { loadConfig } from "../../config/load.ts";
import { runMain } from "../cli/run.ts";
import { opsContext } from "./context.ts";
import { formatRegistration, registration } from "./registration.ts";

async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const ctx = await opsContext(config);
  try {
    const r = await registration(ctx);
    process.stdout.write(
      process.argv.includes("--json") ? `${JSON.stringify(r, null, 2)}\n` : formatRegistration(r),
    );
    return r.holdingsUnread ? 1 : 0;
  } finally {
    await ctx.close();
  }
}

runMain(main);
