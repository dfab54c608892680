/**
 * `npm run docs:config`: writes docs/configuration.md from the schemas the service parses its settings
 * with (the webhook's environment and configuration file in config/schema.ts, the signer service's
 * environment and policy file in src/signer/service/), so a setting added to a schema reaches the
 * document by regenerating it. Each row's type and default come from the zod schema itself, its meaning
 * from the JSDoc comment on the key in the source; environment variables the shipped code reads by name
 * outside the schemas are listed too. `--check` (run by `npm run check`) exits 1 when the
 * committed document differs from what the schemas give, or misses a name the service reads.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import type { z } from "zod";
import * as load from "../config/load.ts";
import * as schema from "../config/schema.ts";
import { parseArgs } from "../src/cli/args.ts";
import * as signer from "../src/signer/service/index.ts";
import * as signerLimits from "../src/signer/service/limits.ts";
import { listFiles } from "./check-paths.ts";
import { REPO_ROOT } from "./import-graph.ts";

export const CONFIG_DOC = "docs/configuration.md";

/** One module of schemas: its source file (for the JSDoc) and its exports (for the schemas). */
export interface SchemaModule {
  file: string;
  exports: Record<string, unknown>;
  /** The file's text, when not read from the repository. */
  source?: string;
}

/** Every module of config/ (a schema moved or added there is read without naming it here), and the signer's. */
export const MODULES: SchemaModule[] = [
  ...(await Promise.all(
    readdirSync(join(REPO_ROOT, "config"))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
      .sort()
      .map(async (f) => ({
        file: `config/${f}`,
        exports: (await import(`../config/${f}`)) as Record<string, unknown>,
      })),
  )),
  { file: "src/signer/service/index.ts", exports: signer },
  { file: "src/signer/service/limits.ts", exports: signerLimits },
];

/** Names for the shared value schemas whose type says more than "string". */
const PRIMITIVE_LABELS: Record<string, string> = {
  u64String: "integer string (u64, smallest units)",
  decimalString: "decimal string",
  base58Pubkey: "base58 public key",
  pythFeedId: "32-byte hex feed id",
};

export interface Row {
  name: string;
  type: string;
  default: string;
  meaning: string;
}

interface Doc {
  doc: string;
  nested?: ts.ObjectLiteralExpression;
}
type Docs = Map<string, Doc>;

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definition is walked generically
type AnySchema = z.ZodType & { def: any; _zod: { def: any } } & Record<string, any>;

const OBJECT_BUILDERS = new Set(["strictObject", "object", "looseObject"]);

function jsDoc(node: ts.Node): string {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
  if (!docs?.length) return "";
  const c = docs[docs.length - 1]!.comment;
  const text = typeof c === "string" ? c : (c?.map((p) => p.text).join("") ?? "");
  return text.replace(/\s+/g, " ").trim();
}

/** The first object literal given to an object builder (strictObject, z.object) inside `node`, outermost first. */
function findObjectLiteral(node: ts.Node): ts.ObjectLiteralExpression | undefined {
  const queue: ts.Node[] = [node];
  while (queue.length) {
    const n = queue.shift()!;
    if (ts.isCallExpression(n)) {
      const callee = n.expression;
      const name = ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : ts.isIdentifier(callee)
          ? callee.text
          : "";
      const arg = n.arguments[0];
      if (OBJECT_BUILDERS.has(name) && arg && ts.isObjectLiteralExpression(arg)) return arg;
    }
    n.forEachChild((c) => {
      queue.push(c);
    });
  }
  return undefined;
}

function literalDocs(lit: ts.ObjectLiteralExpression | undefined): Docs {
  const out: Docs = new Map();
  for (const p of lit?.properties ?? []) {
    if (!ts.isPropertyAssignment(p)) continue;
    const name = ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) ? p.name.text : p.name.getText();
    out.set(name, { doc: jsDoc(p), nested: findObjectLiteral(p.initializer) });
  }
  return out;
}

interface Declared {
  doc: string;
  literal?: ts.ObjectLiteralExpression;
}

/** Every schema a module declares at top level, by its runtime value: its JSDoc and its object literal. */
function declarations(modules: SchemaModule[]): Map<unknown, Declared & { name: string }> {
  const byValue = new Map<unknown, Declared & { name: string }>();
  for (const m of modules) {
    const text = m.source ?? readFileSync(join(REPO_ROOT, m.file), "utf8");
    const source = ts.createSourceFile(m.file, text, ts.ScriptTarget.Latest, true);
    const byName = new Map<string, Declared>();
    for (const st of source.statements) {
      if (!ts.isVariableStatement(st)) continue;
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || !d.initializer) continue;
        byName.set(d.name.text, { doc: jsDoc(st), literal: findObjectLiteral(d.initializer) });
      }
    }
    for (const [name, value] of Object.entries(m.exports)) {
      const decl = byName.get(name);
      if (decl && value && typeof value === "object" && "_zod" in value && !byValue.has(value))
        byValue.set(value, { ...decl, name });
    }
  }
  return byValue;
}

export class SchemaDoc {
  private readonly declared: Map<unknown, Declared & { name: string }>;
  private readonly primitives: [AnySchema, string][];

  constructor(modules: SchemaModule[] = MODULES) {
    this.declared = declarations(modules);
    this.primitives = [];
    for (const [value, d] of this.declared) {
      const label = PRIMITIVE_LABELS[d.name];
      if (label) this.primitives.push([value as AnySchema, label]);
    }
  }

  /** The rows of an object schema's keys, nested keys as dotted paths (`<name>` for a record's keys). */
  rows(root: z.ZodType, opts: { env?: boolean } = {}): Row[] {
    const out: Row[] = [];
    const s = root as AnySchema;
    const docs = literalDocs(this.declared.get(root)?.literal);
    for (const [key, child] of Object.entries(s.shape as Record<string, AnySchema>)) {
      this.walk(child, key, docs.get(key), out, opts.env ?? false);
    }
    return out;
  }

  private walk(s: AnySchema, path: string, doc: Doc | undefined, out: Row[], env: boolean): void {
    const { inner, optional, dflt, hasDefault } = unwrap(s);
    const own = this.declared.get(inner);
    const meaning = doc?.doc || own?.doc || "";
    out.push({
      name: path,
      type: this.typeOf(inner),
      default: env ? envDefault(s) : fileDefault(optional, hasDefault, dflt),
      meaning,
    });
    const nestedDocs = literalDocs(own?.literal ?? doc?.nested);
    this.children(inner, path, nestedDocs, doc, out, env);
  }

  private children(
    s: AnySchema,
    path: string,
    docs: Docs,
    doc: Doc | undefined,
    out: Row[],
    env: boolean,
  ): void {
    const t = s.def.type;
    if (t === "object") {
      for (const [key, child] of Object.entries(s.shape as Record<string, AnySchema>))
        this.walk(child, `${path}.${key}`, docs.get(key), out, env);
    } else if (t === "array" || t === "record") {
      const el = unwrap(t === "array" ? s.def.element : s.def.valueType).inner;
      const suffix = t === "array" ? "[]" : ".<name>";
      const elDocs = literalDocs(this.declared.get(el)?.literal ?? doc?.nested);
      this.children(el, `${path}${suffix}`, elDocs, doc, out, env);
    } else if (t === "union") {
      for (const option of s.def.options as AnySchema[]) {
        const o = unwrap(option).inner;
        const kind = o.def.type === "object" ? unwrap(o.shape.kind ?? o).inner : undefined;
        const label = kind?.def.type === "literal" ? ` (kind ${JSON.stringify(kind.def.values[0])})` : "";
        const optDocs = literalDocs(this.declared.get(o)?.literal);
        const before = out.length;
        this.children(o, path, optDocs, undefined, out, env);
        for (const r of out.slice(before)) {
          if (r.name === `${path}.kind` && !r.meaning) r.meaning = this.declared.get(o)?.doc ?? "";
          r.name += label;
        }
      }
    }
  }

  private typeOf(s: AnySchema): string {
    for (const [p, label] of this.primitives) {
      const checks: unknown[] = s.def.checks ?? [];
      const pChecks: unknown[] = p.def.checks ?? [];
      if (
        s === p ||
        (s.def.type === p.def.type && pChecks.length && pChecks.every((c) => checks.includes(c)))
      )
        return label;
    }
    const t = s.def.type;
    switch (t) {
      case "string":
        return s.format === "url" ? "URL" : "string";
      case "number": {
        const base = s.isInt ? "integer" : "number";
        const min =
          Number.isFinite(s.minValue) && s.minValue > Number.MIN_SAFE_INTEGER ? s.minValue : undefined;
        const max =
          Number.isFinite(s.maxValue) && s.maxValue < Number.MAX_SAFE_INTEGER ? s.maxValue : undefined;
        if (min !== undefined && max !== undefined) return `${base}, ${min} to ${max}`;
        if (min !== undefined) return `${base}, at least ${min}`;
        if (max !== undefined) return `${base}, at most ${max}`;
        return base;
      }
      case "boolean":
        return "boolean";
      case "enum":
        return (s.options as string[])
          .filter((o) => o !== "")
          .map((o) => `\`${o}\``)
          .join(", ");
      case "literal":
        return (s.def.values as unknown[]).map((v) => `\`${JSON.stringify(v)}\``).join(", ");
      case "array":
        return `list of ${this.typeOf(unwrap(s.def.element).inner)}`;
      case "record":
        return `map of ${this.typeOf(unwrap(s.def.valueType).inner)}`;
      case "object":
        return "object";
      case "union":
        return "one of the kinds below";
      default:
        return t;
    }
  }
}

/** Through optional, default, nullable and pipes to the schema that says what the value is. */
function unwrap(s: AnySchema): { inner: AnySchema; optional: boolean; hasDefault: boolean; dflt: unknown } {
  let optional = false;
  let hasDefault = false;
  let dflt: unknown;
  let cur = s;
  for (;;) {
    const t = cur.def.type;
    if (t === "optional" || t === "nullable") {
      optional = true;
      cur = cur.def.innerType;
    } else if (t === "default" || t === "prefault") {
      if (!hasDefault) dflt = cur.def.defaultValue;
      hasDefault = true;
      cur = cur.def.innerType;
    } else if (t === "pipe") {
      cur = cur.def.out.def.type === "transform" ? cur.def.in : cur.def.out;
    } else {
      return { inner: cur, optional, hasDefault, dflt };
    }
  }
}

/** An environment variable's default: what the schema makes of it unset. */
function envDefault(s: AnySchema): string {
  const r = s.safeParse(undefined);
  if (!r.success) return "required";
  const v = r.data;
  if (v === undefined) return "unset";
  if (typeof v === "boolean") return v ? "on" : "off";
  return `\`${String(v)}\``;
}

function fileDefault(optional: boolean, hasDefault: boolean, dflt: unknown): string {
  if (hasDefault) {
    if (dflt !== null && typeof dflt === "object") {
      const json = JSON.stringify(dflt);
      return json.length <= 48 ? `\`${json}\`` : "each key's default";
    }
    return `\`${JSON.stringify(dflt)}\``;
  }
  return optional ? "unset" : "required";
}

function cell(s: string): string {
  return s.replace(/\|/g, "\\|");
}

function table(first: string, rows: Row[]): string {
  const lines = [`| ${first} | type | default | meaning |`, "| --- | --- | --- | --- |"];
  for (const r of rows)
    lines.push(`| \`${cell(r.name)}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.meaning)} |`);
  return lines.join("\n");
}

/** The folders whose code ships: an environment variable read there is a setting of the service. */
export const SHIPPED_FOLDERS = ["src", "config", "pricing", "inventory", "amounts"] as const;

/**
 * Environment variables the shipped code reads by name (`process.env.NAME`, `env.NAME`,
 * `process.env["NAME"]`), each with the files that read it.
 */
export function environmentReads(root: string = REPO_ROOT): Map<string, string[]> {
  const reads = new Map<string, string[]>();
  const files = listFiles(root).filter(
    (f) => /\.ts$/.test(f) && SHIPPED_FOLDERS.some((top) => f.startsWith(`${top}/`)),
  );
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(
      /\b(?:process\.env|env)(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\])/g,
    )) {
      const name = (m[1] ?? m[2])!;
      const where = reads.get(name) ?? [];
      if (!where.includes(file)) where.push(file);
      reads.set(name, where);
    }
  }
  return reads;
}

/**
 * The names the webhook's environment schema and the signer's read, those known outside both, and
 * those the shipped code reads directly that none of these holds.
 */
export function environmentNames(root: string = REPO_ROOT): {
  webhook: string[];
  signer: string[];
  other: string[];
  direct: Map<string, string[]>;
} {
  const webhook = Object.keys(schema.envSchema.shape);
  const signerNames = Object.keys(signer.signerEnvSchema.shape);
  const other = [...load.KNOWN_ENV].filter((n) => !webhook.includes(n) && !signerNames.includes(n)).sort();
  const known = new Set([...webhook, ...signerNames, ...other]);
  const direct = new Map(
    [...environmentReads(root)].filter(([n]) => !known.has(n)).sort(([a], [b]) => a.localeCompare(b)),
  );
  return { webhook, signer: signerNames, other, direct };
}

/** docs/configuration.md, as the schemas give it. */
export function renderConfigDoc(doc = new SchemaDoc()): string {
  const names = environmentNames();
  return `# Configuration

<!-- Generated by \`npm run docs:config\` from the schemas: do not edit. \`npm run check\` fails when this
file is not what the schemas give. A setting's meaning is the JSDoc comment on its key. -->

Every setting the service reads, generated from the schemas it parses them with. The webhook reads its
environment (and a \`.env\` file in the working directory, the environment winning) and one JSON configuration file (\`CONFIG\`); both are
validated once at start, and a bad or unknown value stops the start naming it. How they are read, the
modes they select and the production guards are in [deployment.md](deployment.md); the signer service
is described in [signer.md](signer.md); \`config/.env.example\` is an annotated example.

## Environment variables

From \`envSchema\` in \`config/schema.ts\`, read by \`npm start\` and by the ops commands (\`npm run doctor\`,
\`report\`, \`registration\`, \`rebalance\`).

${table("name", doc.rows(schema.envSchema, { env: true }))}

## Environment variables of the signer service

From \`signerEnvSchema\` in \`src/signer/service/index.ts\`, read by \`npm run signer\`. It also reads the
webhook's Redis settings above (\`REDIS_*\`), named as the webhook names them.

${table("name", doc.rows(signer.signerEnvSchema, { env: true }))}

## Other environment names

Read by the sandbox, the operator simulator, the chain server and the test wrapper, or set by the
webhook's primary process for its workers; not settings of the service, but known to it, so that they
are not warned about as typos (\`KNOWN_ENV\` in \`config/load.ts\`):
${names.other.map((n) => `\`${n}\``).join(", ")}.

## Read directly by the code

Read by name in the shipped code, outside the schemas above (a setting here is not validated at start):

${names.direct.size ? [...names.direct].map(([n, files]) => `- \`${n}\`: ${files.map((f) => `\`${f}\``).join(", ")}`).join("\n") : "(none)"}

## The configuration file

From \`fileConfigSchema\` in \`config/schema.ts\`; the file is \`CONFIG\` (default \`config/default.json\`).
Amounts are strings of integers in the token's smallest units; a size may instead be written in its
token (\`"500 SOL"\`, \`"0.001 SOL"\`: at most the token's decimals), converted exactly when the file is
read (\`config/token-amounts.ts\` lists the keys: a token's inventory sizes, a pair's sizes, levels and
skew, rebalance targets, issuance caps; lamport amounts stay lamports); \`[]\` marks a list's entries and
\`<name>\` a key of your choosing (a token symbol, a price source's name, a pair).

${table("key", doc.rows(schema.fileConfigSchema))}

## The signer's policy file

From \`limitsFileSchema\` in \`src/signer/service/limits.ts\`; the file is \`SIGNER_LIMITS\` (example:
\`config/signer-limits.example.json\`). Limits are in whole tokens.

${table("key", doc.rows(signerLimits.limitsFileSchema))}
`;
}

/** Environment variables of these schemas whose key has no JSDoc comment to say what they do. */
export function unexplainedSettings(doc: SchemaDoc, schemas: z.ZodType[]): string[] {
  return schemas
    .flatMap((sch) => doc.rows(sch, { env: true }))
    .filter((r) => !r.meaning)
    .map((r) => `${r.name} has no JSDoc comment on its key in the schema: say there what it does`);
}

/**
 * What is wrong with the committed document: not current, missing a name the service reads, or an
 * environment variable without a meaning.
 */
export function configDocProblems(committed: string, generated: string, doc = new SchemaDoc()): string[] {
  const problems: string[] = unexplainedSettings(doc, [schema.envSchema, signer.signerEnvSchema]);
  const names = environmentNames();
  for (const n of [...names.webhook, ...names.signer, ...names.other, ...names.direct.keys()])
    if (!committed.includes(`\`${n}\``))
      problems.push(`${CONFIG_DOC} does not name ${n}, a setting the service reads`);
  if (committed !== generated)
    problems.push(`${CONFIG_DOC} is not what the schemas give: run npm run docs:config and commit it`);
  return problems;
}

const USAGE = {
  command: "npm run docs:config",
  summary:
    "Writes docs/configuration.md from the schemas of the settings (environment and configuration\n" +
    "file of the webhook and of the signer service). --check: exit 1 if the committed file is not current.",
  flags: {
    check: { type: "boolean", description: "compare instead of writing (npm run check runs this)" },
  },
} as const;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const path = join(REPO_ROOT, CONFIG_DOC);
  const generated = renderConfigDoc();
  if (values.check) {
    let committed = "";
    try {
      committed = readFileSync(path, "utf8");
    } catch {
      // a missing file is reported below like any other difference
    }
    const problems = configDocProblems(committed, generated);
    if (problems.length) {
      console.error(`config doc: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
      process.exit(1);
    }
    console.log(`config doc: ${CONFIG_DOC} is current`);
  } else {
    writeFileSync(path, generated);
    console.log(`wrote ${CONFIG_DOC}`);
  }
}
