/**
 * Strict objects for the configuration schema: a key the schema does not know is an error naming the
 * key and the nearest known key (a misspelt `maxNotionalUSD` must not start the service with the
 * notional cap silently off). Each unknown key becomes one line `<key>: unknown key ...`, which
 * config/load.ts prefixes with the file and the object's path.
 */
import { z } from "zod";

/** Levenshtein distance, case-insensitive (a wrong case is the commonest slip: maxNotionalUSD). */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const cur = [i];
    for (let j = 1; j <= t.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[t.length]!;
}

/**
 * The known name nearest to `name`, when it is near enough to be a likely slip (at most a third of
 * the name's length in edits, and at least 2 allowed), else undefined.
 */
export function nearest(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** One line per unknown key: the suggestion when one is near, else the list of known keys. */
export function unknownKeyLines(keys: readonly string[], known: readonly string[]): string {
  return keys
    .map((key) => {
      const near = nearest(key, known);
      return near
        ? `${key}: unknown key (did you mean "${near}"?)`
        : `${key}: unknown key (known keys: ${known.join(", ")})`;
    })
    .join("\n");
}

/** z.strictObject whose unknown-key error names each key and its nearest known key. */
export function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? unknownKeyLines(issue.keys, known) : undefined),
  });
}
