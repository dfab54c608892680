/**
 * Re-measures the compute units each fill shape needs on the local chain and rewrites the table the
 * compute-unit floor rule reads (src/fill/compute-units.ts): `npm run bench:compute-units`.
 *
 * For every pair of leg kinds (SPL Token, Token-2022, native SOL), a builder-made fill is simulated
 * on a freshly seeded local chain with fresh maker and taker keys, `--samples` times, and the largest
 * consumption is kept; then the same fill with the taker's output ATA created (per token program),
 * and (when the local chain can evaluate them) with one Lighthouse assertion appended. The table keeps
 * the measurement and the margin the rule adds on top; the rule's floor for a fill is
 * ceil((legs + ATA creations + assertions) x (1 + margin)).
 *
 *   npm run bench:compute-units -- --samples 20            # measure and rewrite the table
 *   npm run bench:compute-units -- --check                 # measure and compare, exit 1 on drift
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Keypair, PublicKey } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { type BuildFillParams, buildFillTransaction } from "../sandbox/fill/builder.ts";
import { LocalChain } from "../src/chain/local/index.ts";
import { createMint, fundTaker, seedFromConfig } from "../src/chain/local/seed.ts";
import { parseArgs } from "../src/cli/args.ts";
import {
  COMPUTE_UNITS,
  type ComputeUnitTable,
  LEG_KINDS,
  type LegKind,
  legKey,
} from "../src/fill/compute-units.ts";
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../src/program/layout.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:compute-units",
  summary:
    "Re-measures the compute units each fill shape needs on the local chain (every pair of leg kinds,\n" +
    "with and without the taker's ATA creation and a Lighthouse assertion) and rewrites the table the\n" +
    "compute-unit floor rule reads, or with --check compares and exits 1 on drift.",
  flags: {
    samples: {
      type: "string",
      value: "N",
      default: "10",
      description: "simulations per shape (largest kept)",
    },
    margin: {
      type: "string",
      value: "X",
      default: String(COMPUTE_UNITS.margin),
      description: "margin the rule adds on top of the measurement",
    },
    check: { type: "boolean", description: "measure and compare with the table; exit 1 on drift" },
    out: {
      type: "string",
      value: "FILE",
      default: new URL("../src/fill/compute-units.ts", import.meta.url).pathname,
      description: "the table to rewrite",
    },
  },
});
const config = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
const samples = Number(args.samples);
const margin = Number(args.margin);

const USDC = config.tokens.find((t) => t.symbol === "USDC")!;
const JUP = config.tokens.find((t) => t.symbol === "JUP")!;

interface Bed {
  chain: LocalChain;
  maker: Keypair;
  taker: Keypair;
  t22a: PublicKey;
  t22b: PublicKey;
}

/** A seeded chain with two Token-2022 mints (no extensions) beside the configured tokens. */
function bed(): Bed {
  const chain = LocalChain.create({ slotMs: 3_600_000 });
  const maker = Keypair.generate();
  const taker = Keypair.generate();
  const t22a = Keypair.generate().publicKey;
  const t22b = Keypair.generate().publicKey;
  for (const m of [t22a, t22b])
    createMint(chain, { address: m, decimals: 6, tokenProgram: TOKEN_2022_PROGRAM_ID });
  seedFromConfig(chain, config, maker.publicKey);
  fundTaker(chain, maker.publicKey, {
    tokens: { [t22a.toBase58()]: 10n ** 12n, [t22b.toBase58()]: 10n ** 12n },
  });
  fundTaker(chain, taker.publicKey, {
    sol: 100_000_000_000n,
    tokens: {
      [JUP.mint]: 10n ** 12n,
      [t22a.toBase58()]: 10n ** 12n,
    },
  });
  return { chain, maker, taker, t22a, t22b };
}

/** The mint and program of a leg: the input side draws on the taker's funded accounts. */
function leg(
  b: Bed,
  kind: LegKind,
  side: "in" | "out",
): { mint: PublicKey; program: PublicKey; native: boolean } {
  if (kind === "nativeSol") return { mint: NATIVE_MINT, program: TOKEN_PROGRAM_ID, native: true };
  if (kind === "token2022")
    return { mint: side === "in" ? b.t22a : b.t22b, program: TOKEN_2022_PROGRAM_ID, native: false };
  const m = side === "in" ? JUP.mint : USDC.mint;
  return { mint: new PublicKey(m), program: TOKEN_PROGRAM_ID, native: false };
}

async function unitsFor(inKind: LegKind, outKind: LegKind, createAta: boolean): Promise<number> {
  let most = 0;
  for (let i = 0; i < samples; i++) {
    const b = bed();
    const input = leg(b, inKind, "in");
    const output = leg(b, outKind, "out");
    if (!createAta && !output.native) {
      fundTaker(b.chain, b.taker.publicKey, { tokens: { [output.mint.toBase58()]: 0n } });
    }
    const params: BuildFillParams = {
      maker: b.maker.publicKey,
      taker: b.taker.publicKey,
      inputMint: input.mint,
      outputMint: output.mint,
      inputTokenProgram: input.program,
      outputTokenProgram: output.program,
      inputAmount: 1_000_000n,
      outputAmount: 1_000_000n,
      expireAt: (await b.chain.getUnixTimestamp()) + 60n,
      feeBps: 10,
      exactOut: false,
      computeUnitLimit: 1_400_000,
      computeUnitPrice: 10_000n,
      recentBlockhash: (await b.chain.getLatestBlockhash()).blockhash,
      createTakerOutputAta: createAta,
      nativeSolIn: input.native,
      nativeSolOut: output.native,
    };
    const tx = buildFillTransaction(params);
    tx.sign([b.maker, b.taker]);
    const sim = b.chain.simulate(tx, { sigVerify: true });
    if (sim.errJson !== null) {
      throw new Error(
        `${legKey(inKind, outKind)}${createAta ? " + ATA" : ""}: simulation failed: ${sim.error}`,
      );
    }
    most = Math.max(most, Number(sim.unitsConsumed));
  }
  return most;
}

const withMargin = (units: number): number => Math.ceil(units * (1 + margin));

const legs: ComputeUnitTable["legs"] = {};
for (const inKind of LEG_KINDS) {
  for (const outKind of LEG_KINDS) {
    if (inKind === "nativeSol" && outKind === "nativeSol") continue;
    const measured = await unitsFor(inKind, outKind, false);
    legs[legKey(inKind, outKind)] = { measured, floor: withMargin(measured) };
  }
}
// ATA creation, per token program: the output leg's CreateIdempotent, measured as the difference.
const ataCreation: ComputeUnitTable["ataCreation"] = {};
for (const [program, outKind] of [
  ["token", "token"],
  ["token2022", "token2022"],
] as const) {
  const measured = (await unitsFor("token", outKind, true)) - (await unitsFor("token", outKind, false));
  ataCreation[program] = { measured, floor: withMargin(measured) };
}

const table: ComputeUnitTable = {
  measuredWith: `bench/compute-units.ts on the local chain, the largest of ${samples} samples per shape`,
  margin,
  legs,
  ataCreation,
  lighthouseAssertion: COMPUTE_UNITS.lighthouseAssertion,
};

const rows = [
  ...Object.entries(legs).map(([k, v]) => [k, v.measured, v.floor]),
  ...Object.entries(ataCreation).map(([k, v]) => [`+ ATA creation (${k})`, v.measured, v.floor]),
];
console.log(`shape${" ".repeat(30)}measured  floor (margin ${margin})`);
for (const [k, m, f] of rows)
  console.log(`${String(k).padEnd(35)}${String(m).padStart(8)}  ${String(f).padStart(6)}`);

if (args.check) {
  const drift = Object.entries(legs).filter(([k, v]) => COMPUTE_UNITS.legs[k]?.measured !== v.measured);
  for (const [k, v] of drift)
    console.log(`drift: ${k} measured ${v.measured}, table ${COMPUTE_UNITS.legs[k]?.measured}`);
  process.exit(drift.length ? 1 : 0);
}

const source = `/**
 * Compute units each fill shape needs, measured on the local chain by bench/compute-units.ts
 * (\`npm run bench:compute-units\` rewrites this file; do not edit the numbers by hand). Read by the
 * compute-unit floor rule (rules/compute-unit-limit.ts): a fill's floor is
 * ceil((legs + ATA creations + Lighthouse assertions) x (1 + margin)).
 *
 * The local chain emulates the order-engine fill and the ATA program with the SPL instructions they
 * perform (src/chain/local/), so these are lower bounds of what the real programs use on mainnet
 * (the acceptance fixture's operator-built fill asks 38,941): a limit under the floor cannot land
 * anywhere; one above it may still be short, which the pre-flight simulation catches.
 */
export type LegKind = "token" | "token2022" | "nativeSol";
export const LEG_KINDS: readonly LegKind[] = ["token", "token2022", "nativeSol"];
export const legKey = (input: LegKind, output: LegKind): string => \`\${input}->\${output}\`;

export interface ComputeUnitRow {
  /** Largest consumption measured. */
  measured: number;
  /** ceil(measured x (1 + margin)). */
  floor: number;
}

export interface ComputeUnitTable {
  measuredWith: string;
  margin: number;
  /** Keyed by legKey(input, output). */
  legs: Record<string, ComputeUnitRow>;
  /** Per CreateIdempotent, keyed by token program kind. */
  ataCreation: Partial<Record<"token" | "token2022", ComputeUnitRow>>;
  /** Per assertion; null while the local chain cannot meter Lighthouse (its program is not available). */
  lighthouseAssertion: ComputeUnitRow | null;
}

export const COMPUTE_UNITS: ComputeUnitTable = ${JSON.stringify(table, null, 2)};
`;
writeFileSync(args.out, source);
execFileSync("npx", ["biome", "format", "--write", args.out], { stdio: "ignore" });
console.log(`wrote ${args.out}`);
