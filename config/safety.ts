/**
 * What production mode refuses unless the maker allows it by name. Each rule is one entry: a setting
 * that would run a real maker unsafely by accident, the allowance (an environment variable) that says
 * "yes, on purpose", and what to do instead. `loadConfig` refuses to start on any hazard that is not
 * allowed; the allowed ones are shown in the start-up banner and on /ready, and `npm run doctor` lists
 * every one (FAIL when not allowed, warn when allowed).
 */
import { statSync } from "node:fs";
import type { EnvConfig, FileConfig } from "./schema.ts";

export interface Hazard {
  /** The allowance that accepts this hazard, e.g. ALLOW_NO_API_KEY. */
  allowance: AllowanceName;
  /** Whether the allowance is set. */
  allowed: boolean;
  /** `field: problem`, naming the setting at fault. */
  problem: string;
  /** What to do instead (or how to allow it). */
  fix: string;
}

export const ALLOWANCES = [
  "ALLOW_NO_API_KEY",
  "ALLOW_STATIC_PRICES",
  "ALLOW_READABLE_KEYPAIR",
  "ALLOW_EMBEDDED_LEDGER",
] as const;
export type AllowanceName = (typeof ALLOWANCES)[number];

interface SafetyInput {
  env: EnvConfig;
  file: FileConfig;
  /** File mode of a path (the keypair); injectable for tests, statSync otherwise. */
  fileMode?: (path: string) => number | undefined;
}

type Rule = (input: SafetyInput) => Omit<Hazard, "allowed"> | undefined;

/** No API key: anyone who learns the URL can ask for quotes and submit fills in the maker's name. */
const noApiKey: Rule = ({ env }) =>
  env.API_KEY
    ? undefined
    : {
        allowance: "ALLOW_NO_API_KEY",
        problem: "API_KEY: unset in production mode: every caller is served, not only the operator",
        fix: "set API_KEY to the key the operator sends as X-API-KEY (16+ characters), or ALLOW_NO_API_KEY=1",
      };

/** Static prices never go stale: the maker would quote yesterday's price forever. */
const staticPrices: Rule = ({ file }) => {
  const pairs = file.pairs.filter((p) => p.enabled && file.priceSources[p.priceSource]?.kind === "static");
  if (!pairs.length) return undefined;
  return {
    allowance: "ALLOW_STATIC_PRICES",
    problem: `pairs ${pairs.map((p) => `${p.base}/${p.quote}`).join(", ")}: priced by a static source (never stale, never moves) in production mode`,
    fix: 'price them from a "redis" or "pyth" source, or ALLOW_STATIC_PRICES=1',
  };
};

/** The maker's secret key readable by other users of the machine. */
const readableKeypair: Rule = ({ env, fileMode }) => {
  const path = env.MAKER_KEYPAIR;
  if (!path) return undefined;
  const mode = (fileMode ?? statMode)(path);
  if (mode === undefined || (mode & 0o077) === 0) return undefined;
  return {
    allowance: "ALLOW_READABLE_KEYPAIR",
    problem: `MAKER_KEYPAIR: ${path} is accessible to group or others (mode ${(mode & 0o777).toString(8).padStart(4, "0")})`,
    fix: `chmod 600 ${path}, or ALLOW_READABLE_KEYPAIR=1`,
  };
};

/** The embedded ledger in production: the books in a folder beside the paper setup's, on one disk. */
const embeddedLedger: Rule = ({ env }) =>
  env.LEDGER === "off" || env.DATABASE_URL
    ? undefined
    : {
        allowance: "ALLOW_EMBEDDED_LEDGER",
        problem: `DATABASE_URL: unset in production mode: the fill ledger would be the embedded one in ${env.DATA_DIR}/ledger (one process, one disk, no backups)`,
        fix: "set DATABASE_URL to the ledger's PostgreSQL (postgres://...), or ALLOW_EMBEDDED_LEDGER=1",
      };

function statMode(path: string): number | undefined {
  try {
    return statSync(path).mode;
  } catch {
    return undefined; // a missing file is the signer's error, named when it is read
  }
}

const RULES: readonly Rule[] = [noApiKey, staticPrices, readableKeypair, embeddedLedger];

/** Every hazard of this production setup, allowed or not (none outside production mode). */
export function productionHazards(input: SafetyInput & { production: boolean }): Hazard[] {
  if (!input.production) return [];
  return RULES.flatMap((rule) => {
    const h = rule(input);
    return h ? [{ ...h, allowed: input.env[h.allowance] }] : [];
  });
}
