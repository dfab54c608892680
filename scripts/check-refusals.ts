/**
 * `npm run check` (refusals): one refusal vocabulary, src/refusal/codes.ts. In the code that ships
 * (SHIPPED) it refuses, outside that file, a second list of refusal codes: an object whose values, an
 * array whose items or a union whose members are UPPER_SNAKE strings, when one of them is spelled as a
 * code of the vocabulary or the list's name says refusal (REFUSAL_NAME); a list elsewhere names its
 * codes from the vocabulary (`S.QUOTE_NOT_FOUND`, `typeof S.QUOTE_NOT_FOUND`), never re-spells them.
 * In that file it refuses a code whose key is not its value (`KEY: "KEY"`, or `KEY: Family.KEY` for a
 * code another family holds). Anywhere, it refuses a refusal in another shape than `{ code, context }`:
 * an object (literal or type) with `ok: false` and a `reason`, or with a `code` and a `reason`,
 * `detail` or `problem`. It reads the syntax (TypeScript's parser), not the types: every finding names
 * its file and line. Prints each problem and exits 1.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { listFiles } from "./check-paths.ts";
import { REPO_ROOT } from "./import-graph.ts";

export const VOCABULARY = "src/refusal/codes.ts";

/** The folders whose code ships, where every refusal is spelled in the vocabulary. */
export const SHIPPED = ["amounts/", "config/", "pricing/", "inventory/", "src/"] as const;

/** Shipped files that hold UPPER_SNAKE names that are not the maker's refusals, each with the reason. */
export const NOT_REFUSALS: Record<string, string> = {
  "src/rfq-v2/proto.ts": "the operator's published protobuf enums (their names are the wire's)",
  "src/chain/local/": "the sandbox chain's own verdicts (what a validator drops), not the maker's refusals",
};

/** A declaration whose name says it lists refusals. */
export const REFUSAL_NAME = /refus|reject|declin|reason/i;

const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;
const isCodeString = (n: ts.Node): boolean => ts.isStringLiteralLike(n) && UPPER_SNAKE.test(n.text);
const nameOf = (n: ts.PropertyName | undefined): string | undefined =>
  n && (ts.isIdentifier(n) || ts.isStringLiteral(n)) ? n.text : undefined;

/** The property names of an object literal or a type literal, with `ok` when it is the literal false. */
function shapeOf(n: ts.ObjectLiteralExpression | ts.TypeLiteralNode): {
  names: Set<string>;
  okFalse: boolean;
} {
  const names = new Set<string>();
  let okFalse = false;
  const members = ts.isObjectLiteralExpression(n) ? n.properties : n.members;
  for (const m of members) {
    const name = ts.isShorthandPropertyAssignment(m) ? m.name.text : nameOf(m.name);
    if (!name) continue;
    names.add(name);
    if (name !== "ok") continue;
    if (ts.isPropertyAssignment(m) && m.initializer.kind === ts.SyntaxKind.FalseKeyword) okFalse = true;
    if (ts.isPropertySignature(m) && m.type && ts.isLiteralTypeNode(m.type)) {
      if (m.type.literal.kind === ts.SyntaxKind.FalseKeyword) okFalse = true;
    }
  }
  return { names, okFalse };
}

/** Every code the vocabulary spells (its `KEY: "KEY"` values). */
export function vocabularyCodes(text: string): Set<string> {
  const sf = ts.createSourceFile(VOCABULARY, text, ts.ScriptTarget.Latest, true);
  const codes = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isPropertyAssignment(n) && isCodeString(n.initializer))
      codes.add((n.initializer as ts.StringLiteral).text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return codes;
}

/** The name of the variable or type a node is declared in, if any. */
function declaredName(n: ts.Node): string | undefined {
  for (let p: ts.Node | undefined = n.parent; p; p = p.parent) {
    if ((ts.isVariableDeclaration(p) || ts.isTypeAliasDeclaration(p) || ts.isPropertySignature(p)) && p.name)
      return ts.isIdentifier(p.name) ? p.name.text : undefined;
    if (ts.isBlock(p) || ts.isSourceFile(p)) return undefined;
  }
  return undefined;
}

/** The problems of one file, as "path:line: what" lines; `codes` are the vocabulary's. */
export function refusalProblems(path: string, text: string, codes: ReadonlySet<string>): string[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node, what: string) =>
    out.push(`${path}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}: ${what}`);
  const vocabulary = path === VOCABULARY;
  // A list of UPPER_SNAKE strings is a list of refusal codes when it re-spells one or is named so.
  const secondList = (n: ts.Node, items: readonly ts.Node[]): boolean =>
    items.some((i) => ts.isStringLiteralLike(i) && codes.has(i.text)) ||
    REFUSAL_NAME.test(declaredName(n) ?? "");
  const visit = (n: ts.Node): void => {
    if (ts.isObjectLiteralExpression(n) || ts.isTypeLiteralNode(n)) {
      const { names, okFalse } = shapeOf(n);
      const other = ["reason", "detail", "problem"].filter((k) => names.has(k));
      if ((okFalse && names.has("reason")) || (names.has("code") && other.length > 0))
        at(n, `a refusal spelled with ${other.join(", ")}: the shape is { code, context }`);
    }
    if (ts.isObjectLiteralExpression(n) && n.properties.length > 0) {
      const props = n.properties.filter(ts.isPropertyAssignment);
      const values = props.map((p) => p.initializer);
      const allCodes = props.length === n.properties.length && values.every(isCodeString);
      if (vocabulary) {
        for (const p of props) {
          const key = nameOf(p.name);
          const v = p.initializer;
          const same = ts.isStringLiteralLike(v)
            ? v.text === key
            : ts.isPropertyAccessExpression(v) && v.name.text === key;
          if (!same) at(p, `the code ${key} is not its own value: KEY: "KEY" (or Family.KEY)`);
        }
      } else if (allCodes && secondList(n, values))
        at(n, `a second list of refusal codes: name them from ${VOCABULARY}`);
    }
    if (
      !vocabulary &&
      ts.isArrayLiteralExpression(n) &&
      n.elements.length > 0 &&
      n.elements.every(isCodeString)
    ) {
      if (secondList(n, n.elements)) at(n, `a second list of refusal codes: name them from ${VOCABULARY}`);
    }
    if (!vocabulary && ts.isUnionTypeNode(n)) {
      const literals = n.types.flatMap((t) =>
        ts.isLiteralTypeNode(t) && isCodeString(t.literal) ? [t.literal] : [],
      );
      if (literals.length > 0 && secondList(n, literals))
        at(n, `a union of refusal codes: name them from ${VOCABULARY}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The shipped code files the check reads (repository-relative). */
export function shippedFiles(root: string = REPO_ROOT): string[] {
  return listFiles(root).filter(
    (f) =>
      /\.(ts|mts)$/.test(f) &&
      SHIPPED.some((d) => f.startsWith(d)) &&
      !Object.keys(NOT_REFUSALS).some((skip) => f === skip || (skip.endsWith("/") && f.startsWith(skip))),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = shippedFiles();
  const codes = vocabularyCodes(readFileSync(join(REPO_ROOT, VOCABULARY), "utf8"));
  const problems = files.flatMap((f) => refusalProblems(f, readFileSync(join(REPO_ROOT, f), "utf8"), codes));
  if (problems.length) {
    console.error(`refusals: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
    process.exit(1);
  }
  console.log(
    `refusals: ${files.length} files, one list of codes (${VOCABULARY}), every refusal { code, context }`,
  );
}
