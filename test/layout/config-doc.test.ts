/**
 * docs/configuration.md is generated from the settings' schemas (scripts/config-doc.ts) and `npm run
 * check` fails when the committed file is not what they give: shown here on a schema with a new key,
 * on a document missing a setting, and on the repository itself.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { envSchema } from "../../config/schema.ts";
import {
  CONFIG_DOC,
  configDocProblems,
  environmentReads,
  renderConfigDoc,
  SchemaDoc,
  unexplainedSettings,
} from "../../scripts/config-doc.ts";
import { REPO_ROOT } from "../../scripts/import-graph.ts";
import { signerEnvSchema } from "../../src/signer/service/index.ts";

const committed = readFileSync(join(REPO_ROOT, CONFIG_DOC), "utf8");

describe("docs/configuration.md", () => {
  it("is what the schemas give (npm run docs:config writes it)", () => {
    expect(configDocProblems(committed, renderConfigDoc())).toEqual([]);
  });

  it("has a row for every environment variable the webhook and the signer service read", () => {
    const rows = committed.split("\n").filter((l) => l.startsWith("| `"));
    for (const name of [...Object.keys(envSchema.shape), ...Object.keys(signerEnvSchema.shape)])
      expect(
        rows.some((r) => r.split("|")[1]?.trim() === `\`${name}\``),
        name,
      ).toBe(true);
  });

  it("gives a key added to a schema its own row: type and default from zod, meaning from its JSDoc", () => {
    const source = [
      "export const demoSchema = z.object({",
      "  /** How long the new thing waits, ms. */",
      "  NEW_WAIT_MS: z.coerce.number().int().min(1).max(9).default(3),",
      "  NEW_NAME: z.string().optional(),",
      "});",
    ].join("\n");
    const demoSchema = z.object({
      NEW_WAIT_MS: z.coerce.number().int().min(1).max(9).default(3),
      NEW_NAME: z.string().optional(),
    });
    const doc = new SchemaDoc([{ file: "demo.ts", source, exports: { demoSchema } }]);
    expect(doc.rows(demoSchema, { env: true })).toEqual([
      {
        name: "NEW_WAIT_MS",
        type: "integer, 1 to 9",
        default: "`3`",
        meaning: "How long the new thing waits, ms.",
      },
      { name: "NEW_NAME", type: "string", default: "unset", meaning: "" },
    ]);
  });

  it("fails the check on an environment variable whose key has no JSDoc comment", () => {
    const source = [
      "export const envDemo = z.object({",
      "  /** Said. */",
      "  SAID: z.string().optional(),",
      "  UNSAID: z.string().optional(),",
      "});",
    ].join("\n");
    const envDemo = z.object({ SAID: z.string().optional(), UNSAID: z.string().optional() });
    const doc = new SchemaDoc([{ file: "demo.ts", source, exports: { envDemo } }]);
    expect(unexplainedSettings(doc, [envDemo])).toEqual([
      "UNSAID has no JSDoc comment on its key in the schema: say there what it does",
    ]);
  });

  it("names the nested keys of a configuration object by their dotted path", () => {
    const source = [
      "export const fileSchema = z.object({",
      "  /** The limits. */",
      "  limits: z.object({",
      "    /** Largest body, bytes. */",
      "    maxBytes: z.number().int().default(16),",
      "  }),",
      "});",
    ].join("\n");
    const fileSchema = z.object({ limits: z.object({ maxBytes: z.number().int().default(16) }) });
    const doc = new SchemaDoc([{ file: "demo.ts", source, exports: { fileSchema } }]);
    expect(doc.rows(fileSchema).map((r) => [r.name, r.default, r.meaning])).toEqual([
      ["limits", "required", "The limits."],
      ["limits.maxBytes", "`16`", "Largest body, bytes."],
    ]);
  });

  it("fails the check when the committed file misses a setting the service reads", () => {
    const generated = renderConfigDoc();
    const without = generated.replaceAll("`REDIS_SENTINEL_MASTER`", "`REDIS_SENTINEL_MAIN`");
    expect(configDocProblems(without, generated)).toEqual([
      "docs/configuration.md does not name REDIS_SENTINEL_MASTER, a setting the service reads",
      "docs/configuration.md is not what the schemas give: run npm run docs:config and commit it",
    ]);
  });

  it("finds an environment variable the shipped code reads by name, outside any schema", () => {
    const root = mkdtempSync(join(tmpdir(), "env-reads-"));
    try {
      mkdirSync(join(root, "src"));
      mkdirSync(join(root, "sandbox"));
      writeFileSync(join(root, "src", "a.ts"), 'export const a = process.env.FOO_BAR ?? env["BAZ_1"];\n');
      writeFileSync(join(root, "sandbox", "b.ts"), "export const b = process.env.NOT_SHIPPED;\n");
      expect([...environmentReads(root)]).toEqual([
        ["FOO_BAR", ["src/a.ts"]],
        ["BAZ_1", ["src/a.ts"]],
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("fails the check when the committed file was edited by hand", () => {
    const generated = renderConfigDoc();
    expect(configDocProblems(`${generated}\nA hand-written line.\n`, generated)).toEqual([
      "docs/configuration.md is not what the schemas give: run npm run docs:config and commit it",
    ]);
  });
});
