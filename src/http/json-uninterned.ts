/**
 * `JSON.parse`, except that the string values of a few named keys come out as ordinary strings
 * instead of internalized ones.
 *
 * Why: V8's `JSON.parse` internalizes every string value of up to 10 characters it reads (Node 20's
 * V8; later ones below 10). An internalized string is allocated in the old generation and entered
 * in the isolate's string table, and both keep it until the next full (mark-compact) collection. A
 * u64 amount below 10^10 is such a value, and nearly every quote's amount is a new one. Measured
 * with `--trace-gc-verbose` on the load test's webhook at 5,000 quotes/s: the old generation grew
 * by about 200 KB/s, half of it these strings, and V8 ran a full collection every ~35 s. Each one
 * stopped the quote path for 25-40 ms, and set the p99.9 of the minute. The string table also
 * grows with them, and resizing it stops the thread too (about 5 ms at 170,000 entries, 11 ms at
 * 340,000, measured alone).
 *
 * How: for each key whose quoted name occurs exactly once in a text without a backslash, a marker
 * is inserted at the start of its string value, which makes the value too long to internalize. It
 * is cut off again after parsing, leaving a fresh (uninternalized) copy of the original. Without a
 * backslash every `"` in the text delimits a string, so `"key":"` there can only be that key with
 * a string value, and being its one occurrence, the top-level key of that name if the parse has
 * one. When it has none (the key sits in a nested object), or the text has a backslash, the key
 * more than once, or a non-string value, the text is parsed as it is. Either way the result is
 * what `JSON.parse(text)` gives: test/http/json-uninterned.test.ts holds the two equal over
 * generated and mutated texts, and checks with V8's own `%DebugPrint` that the value is not
 * internalized.
 */

/** Longer than the longest value V8 internalizes: the marked value never is. */
const MARK = "~~~~~~~~~~~";

/**
 * `JSON.parse(text)`, with the string values of `keys` (top-level) not internalized. `keys` are
 * plain property names (never `__proto__`, whose assignment would not replace the value).
 */
export function parseJsonUninterned(text: string, keys: readonly string[]): unknown {
  if (text.includes("\\")) return JSON.parse(text);
  const at: { key: string; valueStart: number }[] = [];
  for (const key of keys) {
    const name = `"${key}"`;
    const i = text.indexOf(name);
    if (i < 0 || text.indexOf(name, i + 1) >= 0) continue;
    const afterName = i + name.length;
    if (text.charCodeAt(afterName) !== 58 /* : */ || text.charCodeAt(afterName + 1) !== 34 /* " */) continue;
    at.push({ key, valueStart: afterName + 2 });
  }
  if (at.length === 0) return JSON.parse(text);
  // Inserted from the last position to the first, so that earlier positions stay where they were.
  at.sort((a, b) => b.valueStart - a.valueStart);
  let marked = text;
  for (const { valueStart } of at) marked = marked.slice(0, valueStart) + MARK + marked.slice(valueStart);
  let parsed: unknown;
  try {
    parsed = JSON.parse(marked);
  } catch {
    // The marker sits inside a string: the text is exactly as (in)valid, and throws the same way.
    return JSON.parse(text);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return JSON.parse(text);
  const o = parsed as Record<string, unknown>;
  for (const { key } of at) {
    const v = Object.hasOwn(o, key) ? o[key] : undefined;
    // The one occurrence was not this object's own key (a nested object's): parse as it is.
    if (typeof v !== "string" || !v.startsWith(MARK)) return JSON.parse(text);
    o[key] = v.slice(MARK.length);
  }
  return o;
}
