/**
 * The refusal check `npm run check` runs (scripts/check-refusals.ts): each kind of violation planted in
 * a small file is found, with its line, and the repository itself has none.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { refusalProblems, shippedFiles, VOCABULARY, vocabularyCodes } from "../../scripts/check-refusals.ts";
import { REPO_ROOT } from "../../scripts/import-graph.ts";

const codes = vocabularyCodes(readFileSync(join(REPO_ROOT, VOCABULARY), "utf8"));
const lines = (problems: string[]) => problems.map((p) => p.replace(/: .*$/, ""));

describe("refusal check", () => {
  it("reads the vocabulary's codes, the renamed ones under their one name only", () => {
    expect(codes.has("QUOTE_NOT_FOUND")).toBe(true);
    expect(codes.has("V2_LEVELS_NOT_STREAMED")).toBe(true);
    expect(codes.has("REBALANCE_SOL_LEFT_MAKER")).toBe(true);
    for (const old of [
      "SIGNER_UNKNOWN_QUOTE",
      "V2_MAKER_NOT_EXCLUSIVE",
      "MAKER_ACCOUNT_MISUSED",
      "STORE_FULL",
    ])
      expect(codes.has(old), old).toBe(false);
  });

  it("refuses a second list of codes outside the vocabulary: an object, an array, a union", () => {
    const file = [
      'export const V2Codes = { V2_DUPLICATE_SWAP: "V2_DUPLICATE_SWAP", V2_NEW: "V2_NEW" } as const;',
      'const PATH = ["DEADLINE", "QUOTE_ID_CLAIMED"] as const;',
      'export type ShapeRefusal = "MALFORMED_TRANSACTION" | "LOOKUP_TABLES_UNSUPPORTED";',
      'export type MyDecline = "BRAND_NEW" | "ALSO_NEW";',
    ].join("\n");
    expect(lines(refusalProblems("src/x/codes.ts", file, codes))).toEqual([
      "src/x/codes.ts:1",
      "src/x/codes.ts:2",
      "src/x/codes.ts:3",
      "src/x/codes.ts:4",
    ]);
  });

  it("lets a list name its codes from the vocabulary, and leaves UPPER_SNAKE names that are not refusals", () => {
    const file = [
      "const CONTEXT_ONLY = new Set([S.QUOTE_NOT_FOUND, S.INTERNAL_ERROR]);",
      "export type Shed = typeof Q.DEADLINE | typeof Q.OVERLOADED;",
      'const missing = (["SIGNER_TLS_CERT", "SIGNER_TLS_KEY"] as const).filter(Boolean);',
      'export const ErrorCode = { MALFORMED_JSON: "MALFORMED_JSON", INVALID_REQUEST: "INVALID_REQUEST" } as const;',
    ].join("\n");
    expect(refusalProblems("src/x/ok.ts", file, codes)).toEqual([]);
  });

  it("refuses a code in the vocabulary whose key is not its value", () => {
    const file = [
      "export const SignerRefusalCode = {",
      '  SIGNER_NO_PRICE: "SIGNER_NO_PRICE",',
      '  UNKNOWN_QUOTE: "SIGNER_UNKNOWN_QUOTE",',
      "  QUOTE_NOT_FOUND: SwapRefusalCode.QUOTE_NOT_FOUND,",
      "  EXPIRED: V2RejectCode.V2_EXPIRED,",
      "} as const;",
    ].join("\n");
    expect(lines(refusalProblems(VOCABULARY, file, codes))).toEqual([`${VOCABULARY}:3`, `${VOCABULARY}:5`]);
  });

  it("refuses a refusal spelled { reason, detail }, { code, detail } or { code, problem }, in a type or a value", () => {
    const file = [
      "type A = { ok: true } | { ok: false; reason: Code; detail: string };",
      "type B = { ok: false; code: Code; detail: string };",
      'const c = { ok: false, code: "INVALID_TAKER", problem: "key 1" };',
      "const d = (code: Code, detail: string) => ({ code, detail });",
      "type E = { ok: false; code: Code; context: string };",
      "type F = { ok: false; error: string; logs: string[] };",
    ].join("\n");
    expect(lines(refusalProblems("src/x/shape.ts", file, codes))).toEqual([
      "src/x/shape.ts:1",
      "src/x/shape.ts:2",
      "src/x/shape.ts:3",
      "src/x/shape.ts:4",
    ]);
  });

  it("finds nothing in the repository's shipped code", () => {
    const files = shippedFiles();
    expect(files).toContain(VOCABULARY);
    expect(files).toContain("pricing/book.ts");
    const problems = files.flatMap((f) =>
      refusalProblems(f, readFileSync(join(REPO_ROOT, f), "utf8"), codes),
    );
    expect(problems).toEqual([]);
  });
});
