/**
 * Compute units each fill shape needs, measured on the local chain by bench/compute-units.ts
 * (`npm run bench:compute-units` rewrites this file; do not edit the numbers by hand). Read by the
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
export const legKey = (input: LegKind, output: LegKind): string => `${input}->${output}`;

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

export const COMPUTE_UNITS: ComputeUnitTable = {
  measuredWith: "bench/compute-units.ts on the local chain, the largest of 5 samples per shape",
  margin: 0.1,
  legs: {
    "token->token": {
      measured: 510,
      floor: 561,
    },
    "token->token2022": {
      measured: 2124,
      floor: 2337,
    },
    "token->nativeSol": {
      measured: 1165,
      floor: 1282,
    },
    "token2022->token": {
      measured: 2125,
      floor: 2338,
    },
    "token2022->token2022": {
      measured: 3739,
      floor: 4113,
    },
    "token2022->nativeSol": {
      measured: 2779,
      floor: 3057,
    },
    "nativeSol->token": {
      measured: 756,
      floor: 832,
    },
    "nativeSol->token2022": {
      measured: 2370,
      floor: 2607,
    },
  },
  ataCreation: {
    token: {
      measured: 385,
      floor: 424,
    },
    token2022: {
      measured: 2455,
      floor: 2701,
    },
  },
  lighthouseAssertion: null,
};
