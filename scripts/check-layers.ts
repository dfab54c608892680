/**
 * `npm run check` (layers): every import between top-level folders must be allowed by the layer table
 * in import-graph.ts, and the folders must form no cycle; inside `src/` no folder imports a layer above
 * its own (SRC_LAYERS) and `src/`'s folders form no cycle either. In particular nothing that ships imports
 * `sandbox/`, and `pricing/` and `inventory/` share amount maths through `amounts/` instead of
 * importing each other. One file crosses the table: the refusal vocabulary (REFUSAL_VOCABULARY), which
 * every shipping folder names its refusals from, as long as it imports nothing itself. Prints each
 * offending import and exits 1.
 */
import {
  buildImportGraph,
  type ImportGraph,
  LAYERS,
  SRC_LAYERS,
  srcFolderOf,
  topOf,
} from "./import-graph.ts";

/** The one list of refusal codes (src/refusal/codes.ts): `pricing/` and `inventory/` refuse in its words too. */
export const REFUSAL_VOCABULARY = "src/refusal/codes.ts";

/**
 * The graph without the imports of the refusal vocabulary, which any folder may import; a problem line
 * when the vocabulary itself imports a file (it would carry that file into every layer).
 */
export function withoutVocabulary(graph: ImportGraph): { graph: ImportGraph; problems: string[] } {
  const out: ImportGraph = new Map();
  for (const [from, targets] of graph)
    out.set(
      from,
      targets.filter((t) => t !== REFUSAL_VOCABULARY),
    );
  const own = graph.get(REFUSAL_VOCABULARY) ?? [];
  return {
    graph: out,
    problems: own.map((t) => `${REFUSAL_VOCABULARY} -> ${t} (the refusal vocabulary imports nothing)`),
  };
}

/** Imports that cross a top-level boundary the layer table does not allow, as "from -> to" lines. */
export function layerViolations(
  graph: ImportGraph,
  layers: Record<string, readonly string[] | "any"> = LAYERS,
): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = topOf(from);
    const allowed = layers[a];
    for (const to of targets) {
      const b = topOf(to);
      if (a === b || allowed === "any") continue;
      if (!allowed?.includes(b)) out.push(`${from} -> ${to} (${a}/ may not import ${b}/)`);
    }
  }
  return out;
}

/**
 * Imports inside `src/` that go up a layer of SRC_LAYERS, and files in a `src/` folder no layer names,
 * as lines.
 */
export function srcLayerViolations(graph: ImportGraph, layers: typeof SRC_LAYERS = SRC_LAYERS): string[] {
  const rank = new Map<string, { index: number; layer: string }>();
  layers.forEach(([layer, folders], index) => {
    for (const f of folders) rank.set(f, { index, layer });
  });
  const name = (folder: string) => (folder === "" ? "src/" : `src/${folder}/`);
  const out = new Set<string>();
  for (const [from, targets] of graph) {
    const a = srcFolderOf(from);
    if (a === undefined) continue;
    const ra = rank.get(a);
    if (!ra) {
      out.add(`${from}: ${name(a)} is in no layer of SRC_LAYERS (scripts/import-graph.ts)`);
      continue;
    }
    for (const to of targets) {
      const b = srcFolderOf(to);
      if (b === undefined || b === a) continue;
      const rb = rank.get(b);
      if (rb && rb.index > ra.index)
        out.add(`${from} -> ${to} (${name(a)} is ${ra.layer}, it may not import ${name(b)}, ${rb.layer})`);
    }
  }
  return [...out];
}

/** Cycles between top-level folders (each as "a -> b -> a"), whatever the layer table says. */
export function folderCycles(
  graph: ImportGraph,
  folderOf: (path: string) => string | undefined = topOf,
): string[] {
  const edges = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const a = folderOf(from);
    if (a === undefined) continue;
    for (const to of targets) {
      const b = folderOf(to);
      if (b === undefined || a === b) continue;
      if (!edges.has(a)) edges.set(a, new Set());
      edges.get(a)!.add(b);
    }
  }
  const cycles = new Set<string>();
  const visit = (node: string, path: string[]) => {
    for (const next of edges.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const loop = path.slice(at);
        // One spelling per cycle: start from its smallest folder name.
        const start = loop.indexOf([...loop].sort()[0]!);
        const canonical = [...loop.slice(start), ...loop.slice(0, start)];
        cycles.add([...canonical, canonical[0]].join(" -> "));
      } else visit(next, [...path, next]);
    }
  };
  for (const node of edges.keys()) visit(node, [node]);
  return [...cycles].sort();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { graph, unresolved } = buildImportGraph();
  const shared = withoutVocabulary(graph);
  const problems = [
    ...unresolved,
    ...shared.problems,
    ...layerViolations(shared.graph),
    ...folderCycles(shared.graph).map((c) => `cycle between folders: ${c}`),
    ...srcLayerViolations(graph),
    ...folderCycles(graph, srcFolderOf).map(
      (c) =>
        `cycle between src/ folders: ${c
          .split(" -> ")
          .map((f) => `src/${f}`)
          .join(" -> ")}`,
    ),
  ];
  if (problems.length) {
    console.error(`layers: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
    process.exit(1);
  }
  console.log(
    `layers: ${graph.size} files, imports follow the layer tables, no cycle between folders or inside src/`,
  );
}
