/**
 * The layout checks `npm run check` runs (scripts/check-layers.ts, scripts/check-orphans.ts): each is
 * shown catching what it exists to catch on a small graph, and the repository itself passes both.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  folderCycles,
  layerViolations,
  REFUSAL_VOCABULARY,
  srcLayerViolations,
  withoutVocabulary,
} from "../../scripts/check-layers.ts";
import { ENTRY_POINTS, orphans } from "../../scripts/check-orphans.ts";
import { buildImportGraph, type ImportGraph, REPO_ROOT, srcFolderOf } from "../../scripts/import-graph.ts";

const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

describe("layer check", () => {
  it("refuses shipped code that imports the sandbox", () => {
    const g = graph({ "src/app.ts": ["sandbox/operator/wire.ts"], "sandbox/operator/wire.ts": [] });
    expect(layerViolations(g)).toEqual([
      "src/app.ts -> sandbox/operator/wire.ts (src/ may not import sandbox/)",
    ]);
  });

  it("refuses an import between pricing/ and inventory/ in either direction", () => {
    const g = graph({
      "pricing/book.ts": ["inventory/interface.ts"],
      "inventory/reservations/interface.ts": ["pricing/usd.ts"],
    });
    expect(layerViolations(g)).toHaveLength(2);
  });

  it("lets pricing/ and inventory/ name their refusals from the vocabulary, and only while it imports nothing", () => {
    const g = graph({
      "pricing/book.ts": [REFUSAL_VOCABULARY],
      "inventory/interface.ts": [REFUSAL_VOCABULARY],
      "src/quote/service.ts": ["pricing/book.ts", REFUSAL_VOCABULARY],
      [REFUSAL_VOCABULARY]: [],
    });
    expect(layerViolations(g)).toHaveLength(2);
    const shared = withoutVocabulary(g);
    expect(shared.problems).toEqual([]);
    expect(layerViolations(shared.graph)).toEqual([]);
    expect(folderCycles(shared.graph)).toEqual([]);
    // A vocabulary that imports would carry its import into every layer.
    const heavy = withoutVocabulary(graph({ [REFUSAL_VOCABULARY]: ["src/chain/interface.ts"] }));
    expect(heavy.problems).toEqual([
      `${REFUSAL_VOCABULARY} -> src/chain/interface.ts (the refusal vocabulary imports nothing)`,
    ]);
  });

  it("allows the shared amount maths to pricing/ and inventory/", () => {
    const g = graph({ "pricing/book.ts": ["amounts/decimal.ts"], "inventory/x.ts": ["amounts/usd.ts"] });
    expect(layerViolations(g)).toEqual([]);
  });

  it("finds a cycle between top-level folders, even among folders the table lets import anything", () => {
    const g = graph({ "test/a.ts": ["bench/b.ts"], "bench/b.ts": ["test/c.ts"], "test/c.ts": [] });
    expect(folderCycles(g)).toEqual(["bench -> test -> bench"]);
  });

  it("refuses an import up a layer inside src/ (infrastructure importing the fill rules)", () => {
    const g = graph({ "src/chain/local/seed.ts": ["src/fill/validate.ts"], "src/fill/validate.ts": [] });
    expect(srcLayerViolations(g)).toEqual([
      "src/chain/local/seed.ts -> src/fill/validate.ts (src/chain/ is infrastructure, it may not import src/fill/, domain)",
    ]);
  });

  it("allows src/ imports down the layers and inside one folder", () => {
    const g = graph({
      "src/main.ts": ["src/swap/executor.ts"],
      "src/swap/executor.ts": ["src/fill/validate.ts", "src/swap/expiry.ts"],
      "src/fill/validate.ts": ["src/program/decode.ts", "src/lib/bounded.ts"],
    });
    expect(srcLayerViolations(g)).toEqual([]);
  });

  it("names a src/ folder that no layer holds", () => {
    const g = graph({ "src/newthing/a.ts": [] });
    expect(srcLayerViolations(g)).toEqual([
      "src/newthing/a.ts: src/newthing/ is in no layer of SRC_LAYERS (scripts/import-graph.ts)",
    ]);
  });

  it("finds a cycle between two src/ folders of one layer, type imports included", () => {
    const g = graph({
      "src/ledger/writer.ts": ["src/journal/interface.ts"],
      "src/journal/interface.ts": ["src/ledger/records.ts"],
    });
    expect(folderCycles(g, srcFolderOf)).toEqual(["journal -> ledger -> journal"]);
  });

  it("passes on this repository: no forbidden import, no cycle, inside src/ too", () => {
    const { graph: repo, unresolved } = buildImportGraph();
    expect(unresolved).toEqual([]);
    const shared = withoutVocabulary(repo);
    expect(shared.problems).toEqual([]);
    expect(layerViolations(shared.graph)).toEqual([]);
    expect(folderCycles(shared.graph)).toEqual([]);
    expect(srcLayerViolations(repo)).toEqual([]);
    expect(folderCycles(repo, srcFolderOf)).toEqual([]);
  });
});

describe("orphan check", () => {
  it("lists a shipped file that only a test imports", () => {
    const g = graph({
      "src/main.ts": ["src/app.ts"],
      "src/app.ts": [],
      "src/fill/only-tests-use-me.ts": [],
      "test/x.test.ts": ["src/fill/only-tests-use-me.ts"],
    });
    expect(orphans(g, ["src/main.ts"])).toEqual(["src/fill/only-tests-use-me.ts"]);
  });

  it("finds no orphan in this repository's shipped folders", () => {
    expect(orphans(buildImportGraph().graph, ENTRY_POINTS)).toEqual([]);
  });
});

describe("ports are folders", () => {
  // Each port: an interface.ts, one file per adapter beside it.
  const ports: Record<string, string[]> = {
    "src/quote-store": ["memory.ts", "redis.ts"],
    "src/journal": ["memory.ts", "redis.ts"],
    "pricing/controls": ["memory.ts", "redis.ts"],
    "inventory/advertised-store": ["file.ts", "redis.ts"],
    "src/chain": ["rpc.ts", "local/index.ts"],
  };
  for (const [folder, adapters] of Object.entries(ports)) {
    it(`${folder}/ holds the interface and one file per adapter`, () => {
      for (const f of ["interface.ts", ...adapters]) {
        expect(existsSync(join(REPO_ROOT, folder, f)), `${folder}/${f}`).toBe(true);
      }
    });
  }
});
