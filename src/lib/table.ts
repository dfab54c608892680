/** Plain-text tables for the operations commands (no colours: output often lands in tickets). */

export function table(headers: string[], rows: string[][], maxWidth = Number.POSITIVE_INFINITY): string {
  const clip = (s: string) => (s.length > maxWidth ? `${s.slice(0, maxWidth - 1)}…` : s);
  const cells = [headers, ...rows].map((r) => r.map(clip));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [
    line(headers.map(clip)),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.slice(1).map(line),
  ].join("\n");
}
