/**
 * `npm run bench:permissioned` (part of `npm run bench`): the compute units of the largest permissioned
 * fill the configuration allows, measured on the local chain by sandbox/fill/permissioned-units.ts (the
 * buy after the issuer's mint, the sell before its burn), against the 200,000 the operator gives
 * permissioned pairs. Compute units are deterministic: the figures are exact.
 */
import { benchConfig, measurePermissionedFills } from "../sandbox/fill/permissioned-units.ts";
import { parseArgs } from "../src/cli/args.ts";
import { PERMISSIONED_COMPUTE_UNIT_LIMIT } from "../src/fill/rules/compute-unit-limit.ts";

{
  parseArgs(process.argv.slice(2), {
    command: "npm run bench:permissioned",
    summary:
      "The compute units of the largest permissioned fill the configuration allows (buy: after the\n" +
      "issuer's mint; sell: before its burn), measured on the local chain, against the 200,000 limit the\n" +
      "operator sets for permissioned pairs. Exit 1 if one does not fit.",
    flags: {},
  });
  const { file, note } = benchConfig();
  const rows = await measurePermissionedFills(file);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  say(
    `permissioned fills: compute units on the local chain (${note}); limit ${PERMISSIONED_COMPUTE_UNIT_LIMIT}`,
  );
  let worst = 0n;
  for (const r of rows) {
    worst = r.fillUnits > worst ? r.fillUnits : worst;
    say(
      `  ${r.pair.padEnd(12)} ${r.direction.padEnd(18)} ${String(r.amount).padStart(14)} units of ${r.symbol}: ` +
        `fill ${r.fillUnits} CU (${((Number(r.fillUnits) / PERMISSIONED_COMPUTE_UNIT_LIMIT) * 100).toFixed(1)}% of the limit), companion ${r.companionUnits} CU`,
    );
  }
  say(
    "  (the order engine's fill instruction is emulated on the local chain, its program binary not being\n" +
      "  available: these count the token and system programs' work the fill does, ATA creation included)",
  );
  const fits = worst < BigInt(PERMISSIONED_COMPUTE_UNIT_LIMIT);
  say(
    `  largest permissioned fill: ${worst} CU ${fits ? "<" : ">="} ${PERMISSIONED_COMPUTE_UNIT_LIMIT}${fits ? "" : "  DOES NOT FIT"}`,
  );
  process.exit(fits ? 0 : 1);
}
