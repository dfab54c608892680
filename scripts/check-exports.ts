/**
 * `npm run check` (exports): every value src/ exports (a function, class, enum, const or let; types
 * are not counted) must be used by another file of the repository: imported, re-exported, read from a
 * namespace import (`ns.name`) or a dynamic import. A value only the tests use is allowed when
 * TEST_ONLY lists it with the reason; an export no other file uses should not be exported (or not
 * exist). A TEST_ONLY entry that no longer holds (the value gone, or used outside test/) fails too.
 * Prints each problem and exits 1.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { parseArgs } from "../src/cli/args.ts";
import { REPO_ROOT } from "./import-graph.ts";

/** Values of src/ that only tests import, each with why the tests need it from outside its file. */
export const TEST_ONLY: Record<string, string> = {
  "src/routes/quote.ts:QuoteAdmission":
    "the quote gate's test spies on its decide() to show each quote is judged once, gate or route",
  "src/signer/service/v2.ts:V2_ALLOWED_PROGRAMS":
    "the v2 reading test walks every program an offered swap may hold",
  "src/ledger/postgres.ts:MAX_RECONNECT_DELAY_S":
    "the outage test pins the client's reconnect wait at its cap",
  "src/ledger/postgres.ts:reconnectDelayS": "the outage test pins the reconnect wait's growth and cap",
  "src/swap/executor.ts:DEFAULT_SWAP_BUDGET_MS":
    "the stall fault test sizes its stall against the swap's budget",
  "src/swap/steps/chain-checks.ts:KEPT_AFTER_READS_MS":
    "the retry tests pin where the reads stop asking again",
  "src/chain/local/bundle-engine.ts:localTipAccounts":
    "tests pay a tip to the local engine's accounts as a bundle would",
  "src/chain/local/seed.ts:mintAuthority": "the bundle bed signs as the issuer of the mints the chain seeded",
  "src/chain/local/seed.ts:tokenProgramOf": "a test reads which token program owns a seeded Token-2022 mint",
  "src/chain/local/seed.ts:ata": "tests read and credit the associated token accounts the seed made",
  "src/chain/local/seed.ts:tokenAccountBalance": "bundle tests read a tip account's balance after landing",
  "src/chain/rpc-read.ts:RpcAnswerError": "the reader's tests pin which malformed answers throw it",
  "src/chain/rpc.ts:ChainUnavailableError": "the reader's tests pin which failures throw it",
  "src/cli/args.ts:UsageError": "the help test checks an unknown flag is refused with it",
  "src/cli/args.ts:parseArgv": "the help test parses argv without the process exit parseArgs adds",
  "src/cli/node-version.ts:MIN_NODE": "the node-version test builds versions around the minimum",
  "src/cli/node-version.ts:nodeVersionProblem":
    "the node-version test checks versions without running an old Node",
  "src/contract/common.ts:WIRE_ID_MAX": "the companion test builds a quote id at the wire's longest",
  "src/contract/swap.ts:refusalText": "the refusal test pins the rejectionReason text the operator reads",
  "src/crypto/ed25519.ts:strictRejection": "the strict-signature test pins each rule on its own",
  "src/fill/validate.ts:resolveForRules":
    "the rules-order attacks run the rules on a resolved fill one by one",
  "src/fill/validate.ts:UnresolvedFillError":
    "the rules-order attacks check a rule never reads a fact not yet held",
  "src/fill/validate.ts:must": "the rules-order attacks check a missing fact throws",
  "src/health/fill-path.ts:TRIP_AFTER_FAILURES":
    "the fill-path test trips the path at the threshold, not a copy of it",
  "src/health/fill-path.ts:TRUST_AFTER_SUCCESSES": "the fill-path test restores the path at the threshold",
  "src/health/fill-path.ts:FAILING_PROBE_MS": "the fill-path test moves its clock by the probe interval",
  "src/health/fill-path.ts:IDLE_PROBE_MS": "the fill-path test moves its clock by the idle probe interval",
  "src/http/cluster.ts:restartDelayMs": "the cluster test pins the restart backoff without killing workers",
  "src/http/shed.ts:LOOP_CROSSINGS": "the shed test computes the admission bound from it",
  "src/http/shed.ts:AFTER_ADMISSION_RESERVE": "the shed test computes the admission bound from it",
  "src/http/shed.ts:LAG_TICK_MS": "the shed test steps the lag clock by the tick",
  "src/http/shed.ts:LoopLag": "the shed test drives the lag measure on a hand-moved clock",
  "src/http/shed.ts:STANDING_WINDOW_MS": "the shed test steps through the standing window",
  "src/http/shutdown.ts:InFlightResponses": "the in-flight test checks the list frees answered responses",
  "src/issuance/companion.ts:companionReference":
    "the companion test finds the reference key a quote's companion carries",
  "src/ledger/markouts.ts:MAX_PENDING_MARKOUTS": "the outage test fills the pending list to its bound",
  "src/ledger/markouts.ts:markoutBps": "the markout test pins the sign and size of a markout",
  "src/ledger/migrations.ts:MIGRATIONS": "the ledger test checks migrate reaches the last version",
  "src/ledger/migrations.ts:schemaVersion": "the ledger test reads the version migrate reached",
  "src/ledger/report.ts:volumeByPair": "the report test checks each section on its own rows",
  "src/ledger/report.ts:fillRateByHour": "the report test checks each section on its own rows",
  "src/ledger/report.ts:rejectionsByCode": "the report test checks each section on its own rows",
  "src/ledger/report.ts:markoutsByTaker": "the markout test checks the section on its own rows",
  "src/ledger/report.ts:markoutsByPair": "the markout test checks the section on its own rows",
  "src/ledger/report.ts:fillRateByChannel":
    "the report and RFQ v2 ledger tests check the section on its own rows",
  "src/ledger/report.ts:feesOwedByChannel": "the report test checks each section on its own rows",
  "src/ledger/report.ts:markoutsByChannel":
    "the report and RFQ v2 ledger tests check the section on its own rows",
  "src/ledger/report.ts:toxicTakersByChannel": "the report test checks each section on its own rows",
  "src/operator-api/http.ts:HttpOperatorSwapApi":
    "the client tests build it from options (a stand-in URL, no key) rather than from the environment",
  "src/quote-store/redis.ts:quoteKeys": "the slot test checks a quote's keys share one cluster slot",
  "src/redis/client.ts:unixSocketOptions": "the topology test reads unix: URLs without a Redis",
  "src/routes/admin.ts:ADMIN_KEY_HEADER": "the toxicity tests call the admin API with its header",
  "src/toxicity/redis.ts:takerKeys": "the slot and standing tests read the taker lists' keys",
};

/** Where the files that may use an export live: every code folder, and the root's configurations. */
const READERS = [
  "src",
  "amounts",
  "config",
  "pricing",
  "inventory",
  "tooling",
  "sandbox",
  "scripts",
  "bench",
  "test",
  "mutation",
];

const SKIPPED = new Set(["node_modules", "dist", "results", ".stryker-tmp"]);

function codeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (SKIPPED.has(name) || name.startsWith(".")) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|mts|cts)$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
    }
  };
  for (const top of READERS) if (existsSync(join(root, top))) walk(join(root, top));
  for (const name of readdirSync(root)) if (/^[\w.-]+\.(ts|mts)$/.test(name)) out.push(join(root, name));
  return out.map((p) => relative(root, p).split(sep).join("/")).sort();
}

function resolveSpecifier(root: string, from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = resolve(root, dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")])
    if (existsSync(candidate) && statSync(candidate).isFile())
      return relative(root, candidate).split(sep).join("/");
  return undefined;
}

/** One file's exports (values and types apart) and what it uses of other files. */
interface FileFacts {
  values: Map<string, number>;
  types: Set<string>;
  /** `export * from`: the files whose exports this one passes on. */
  stars: string[];
  /** [target file, name or "*" for all] this file uses. */
  uses: [string, string][];
}

const hasExport = (n: ts.Node) =>
  ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

function bindingNames(name: ts.BindingName, out: string[]): void {
  if (ts.isIdentifier(name)) out.push(name.text);
  else for (const e of name.elements) if (!ts.isOmittedExpression(e)) bindingNames(e.name, out);
}

/** The names a dynamic import's value is read by (`(await import(x)).a`, `const { a } = await import(x)`); "*" when unknown. */
function dynamicNames(call: ts.CallExpression): string[] {
  let n: ts.Node = call;
  while (ts.isAwaitExpression(n.parent) || ts.isParenthesizedExpression(n.parent)) n = n.parent;
  const p = n.parent;
  if (ts.isPropertyAccessExpression(p) && p.expression === n) return [p.name.text];
  if (ts.isVariableDeclaration(p) && ts.isObjectBindingPattern(p.name))
    return p.name.elements.map((e) =>
      e.propertyName && ts.isIdentifier(e.propertyName)
        ? e.propertyName.text
        : ts.isIdentifier(e.name)
          ? e.name.text
          : "*",
    );
  return ["*"];
}

/** The members a namespace import is read by (`ns.a`); "*" when the namespace itself is passed on. */
function namespaceNames(source: ts.SourceFile, ns: string): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n) && n.text === ns && !ts.isNamespaceImport(n.parent)) {
      const p = n.parent;
      out.push(ts.isPropertyAccessExpression(p) && p.expression === n ? p.name.text : "*");
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

function factsOf(root: string, file: string): FileFacts {
  const text = readFileSync(join(root, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const facts: FileFacts = { values: new Map(), types: new Set(), stars: [], uses: [] };
  const lineOf = (n: ts.Node) => source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1;
  const localValues = new Set<string>();
  const localExported: [ts.ExportSpecifier, string][] = [];
  const use = (spec: ts.Expression | undefined, name: string) => {
    if (!spec || !ts.isStringLiteralLike(spec)) return;
    const target = resolveSpecifier(root, file, spec.text);
    if (target) facts.uses.push([target, name]);
  };
  for (const s of source.statements) {
    if (ts.isImportDeclaration(s)) {
      const clause = s.importClause;
      if (!clause) continue;
      if (clause.name) {
        use(s.moduleSpecifier, "default");
        localValues.add(clause.name.text);
      }
      const b = clause.namedBindings;
      if (b && ts.isNamespaceImport(b))
        for (const n of namespaceNames(source, b.name.text)) use(s.moduleSpecifier, n);
      else if (b)
        for (const e of b.elements) {
          use(s.moduleSpecifier, (e.propertyName ?? e.name).text);
          if (!clause.isTypeOnly && !e.isTypeOnly) localValues.add(e.name.text);
        }
    } else if (ts.isExportDeclaration(s)) {
      if (s.moduleSpecifier) {
        const target = ts.isStringLiteralLike(s.moduleSpecifier)
          ? resolveSpecifier(root, file, s.moduleSpecifier.text)
          : undefined;
        if (!s.exportClause) {
          if (target) facts.stars.push(target);
        } else if (ts.isNamedExports(s.exportClause)) {
          for (const e of s.exportClause.elements) {
            use(s.moduleSpecifier, (e.propertyName ?? e.name).text);
            if (s.isTypeOnly || e.isTypeOnly) facts.types.add(e.name.text);
            else facts.values.set(e.name.text, lineOf(e));
          }
        } else {
          use(s.moduleSpecifier, "*");
          facts.values.set(s.exportClause.name.text, lineOf(s));
        }
      } else if (s.exportClause && ts.isNamedExports(s.exportClause)) {
        for (const e of s.exportClause.elements)
          if (s.isTypeOnly || e.isTypeOnly) facts.types.add(e.name.text);
          else localExported.push([e, (e.propertyName ?? e.name).text]);
      }
    } else if (ts.isExportAssignment(s)) {
      facts.values.set("default", lineOf(s));
    } else if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) {
      if (hasExport(s)) facts.types.add(s.name.text);
    } else if (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isEnumDeclaration(s)) {
      if (s.name) localValues.add(s.name.text);
      if (hasExport(s) && s.name) facts.values.set(s.name.text, lineOf(s));
    } else if (ts.isVariableStatement(s)) {
      const names: string[] = [];
      for (const d of s.declarationList.declarations) bindingNames(d.name, names);
      for (const n of names) localValues.add(n);
      if (hasExport(s)) for (const n of names) facts.values.set(n, lineOf(s));
    }
  }
  // `export { a }` of a local value (or of an imported one passed on); a local type stays a type.
  for (const [e, local] of localExported) {
    if (localValues.has(local)) facts.values.set(e.name.text, lineOf(e));
    else facts.types.add(e.name.text);
  }
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword)
      for (const name of dynamicNames(n)) use(n.arguments[0], name);
    if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument))
      use(
        n.argument.literal as ts.Expression,
        n.qualifier ? (ts.isIdentifier(n.qualifier) ? n.qualifier : n.qualifier.left).getText(source) : "*",
      );
    ts.forEachChild(n, visit);
  };
  visit(source);
  return facts;
}

export interface ExportUse {
  file: string;
  name: string;
  line: number;
  /** The other files that use it. */
  by: string[];
}

/** Every value src/ exports, with the other files that use it. */
export function exportUses(root: string = REPO_ROOT): ExportUse[] {
  const files = codeFiles(root);
  const facts = new Map(files.map((f) => [f, factsOf(root, f)]));
  const usedBy = new Map<string, Set<string>>();
  const mark = (target: string, name: string, by: string, seen = new Set<string>()): void => {
    const key = `${target}#${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (!usedBy.has(key)) usedBy.set(key, new Set());
    usedBy.get(key)!.add(by);
    // A name a file passes on through `export *` (not its own) is its origin's.
    const t = facts.get(target);
    if (!t) return;
    if (name === "*") {
      for (const s of t.stars) mark(s, "*", by, seen);
    } else if (!t.values.has(name) && !t.types.has(name)) {
      for (const s of t.stars) mark(s, name, by, seen);
    }
  };
  for (const [file, f] of facts) for (const [target, name] of f.uses) mark(target, name, file);
  const out: ExportUse[] = [];
  for (const [file, f] of facts) {
    if (!file.startsWith("src/")) continue;
    for (const [name, line] of f.values) {
      const by = new Set([...(usedBy.get(`${file}#${name}`) ?? []), ...(usedBy.get(`${file}#*`) ?? [])]);
      by.delete(file);
      out.push({ file, name, line, by: [...by].sort() });
    }
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/** Every problem: values no other file uses, values only tests use that TEST_ONLY does not list, stale entries. */
export function exportProblems(
  root: string = REPO_ROOT,
  testOnly: Record<string, string> = TEST_ONLY,
): string[] {
  const problems: string[] = [];
  const listed = new Set(Object.keys(testOnly));
  for (const u of exportUses(root)) {
    const key = `${u.file}:${u.name}`;
    const onlyTests = u.by.length > 0 && u.by.every((f) => f.startsWith("test/"));
    if (u.by.length === 0)
      problems.push(`${u.file}:${u.line}: ${u.name} is exported and used by no other file`);
    else if (onlyTests && !listed.has(key))
      problems.push(
        `${u.file}:${u.line}: ${u.name} is used only by tests (${u.by.join(", ")}); list it in TEST_ONLY with why`,
      );
    if (listed.has(key)) {
      listed.delete(key);
      if (!onlyTests)
        problems.push(
          `TEST_ONLY: ${key} is ${u.by.length ? "used outside test/" : "used by no other file"}; drop the entry`,
        );
    }
  }
  for (const key of listed) problems.push(`TEST_ONLY: ${key} is no exported value of src/; drop the entry`);
  return problems;
}

const USAGE = {
  command: "tsx scripts/check-exports.ts",
  summary:
    "Checks that every value src/ exports is used by another file (imported, re-exported, read from a\n" +
    "namespace or a dynamic import), the ones only tests use listed in TEST_ONLY with the reason.\n" +
    "--list prints every exported value with the files that use it. Exit 1 on any problem.",
  flags: {
    root: { type: "string", description: "the repository to check (default: this one)" },
    list: { type: "boolean", description: "print every exported value and its users instead" },
  },
} as const;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const root = resolve(values.root ?? REPO_ROOT);
  const problems = values.list ? [] : exportProblems(root);
  if (values.list)
    for (const u of exportUses(root)) console.log(`${u.file}:${u.line} ${u.name}: ${u.by.join(", ") || "-"}`);
  else if (problems.length) {
    console.error(`exports: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
    // exitCode, not exit(): a long report to a pipe is written out before the process ends.
    process.exitCode = 1;
  } else console.log("exports: every value src/ exports is used by another file (tests' own needs listed)");
}
