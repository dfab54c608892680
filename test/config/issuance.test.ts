/** The `issuance` key of the configuration: strict, cross-checked against tokens, pairs and price sources. */
import { describe, expect, it } from "vitest";
import { parseFileConfig } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import { defaultFileConfig } from "../support/config.ts";
import { permissionedSetup } from "../support/permissioned.ts";

const base = (): FileConfig => permissionedSetup(1).vary(defaultFileConfig());
type Raw = Record<string, unknown> & { issuance: Record<string, Record<string, unknown>> };
const raw = (): Raw => JSON.parse(JSON.stringify(base())) as Raw;

function problem(f: unknown): string {
  try {
    parseFileConfig(f, "config");
  } catch (e) {
    return (e as Error).message;
  }
  return "";
}

describe("issuance policy configuration", () => {
  it("accepts a policy and fills in its defaults (mint on buy, burn on sell, a 10,000-lamport tip)", () => {
    const f = parseFileConfig(raw());
    expect(f.issuance.TBILL).toMatchObject({ mintOnBuy: true, burnOnSell: true, tipLamports: "10000" });
  });

  it("names an unknown key of a policy (strict)", () => {
    const r = raw();
    (r.issuance.TBILL as Record<string, unknown>).maxPerDy = "1";
    expect(problem(r)).toMatch(/issuance\.TBILL\.maxPerDy: unknown key/);
  });

  it("refuses a policy for a token that is not configured, or not permissioned", () => {
    const r = raw();
    r.issuance.NOPE = r.issuance.TBILL as Record<string, unknown>;
    expect(problem(r)).toMatch(/issuance\.NOPE: unknown token symbol NOPE/);
    const s = raw();
    s.issuance.JUP = { ...(s.issuance.TBILL as object), priceSource: "static" };
    expect(problem(s)).toMatch(/issuance\.JUP: tokens\[JUP\]\.permissioned must be true/);
  });

  it("refuses a per-fill cap above the daily cap, and a zero cap", () => {
    const r = raw();
    (r.issuance.TBILL as Record<string, unknown>).maxPerFill = "9999999999999";
    expect(problem(r)).toMatch(/issuance\.TBILL\.maxPerFill: must not exceed maxPerDay/);
    const z = raw();
    (z.issuance.TBILL as Record<string, unknown>).maxPerDay = "0";
    expect(problem(z)).toMatch(/issuance\.TBILL\.maxPerDay: must be greater than zero/);
  });

  it("requires every pair of the token to price from the source backing its issuance", () => {
    const r = raw();
    (r.priceSources as Record<string, unknown>).nav = { kind: "redis" };
    (r.issuance.TBILL as Record<string, unknown>).priceSource = "nav";
    expect(problem(r)).toMatch(/pairs\.\d+\.priceSource: must be nav, the source backing TBILL's issuance/);
    const u = raw();
    (u.issuance.TBILL as Record<string, unknown>).priceSource = "missing";
    expect(problem(u)).toMatch(/issuance\.TBILL\.priceSource: unknown price source missing/);
  });

  it("refuses an allowlist entry that is not a public key", () => {
    const r = raw();
    (r.issuance.TBILL as Record<string, unknown>).holders = { allowlist: ["not-a-key"] };
    expect(problem(r)).toMatch(/issuance\.TBILL\.holders\.allowlist\.0: must be a base58 public key/);
  });
});
