/**
 * Sizes in the configuration may be written in tokens: `"500 SOL"`, `"0.001 SOL"` (a decimal with at
 * most the token's decimals, then the token's symbol), besides smallest units (`"500000000000"`, digits
 * only, as before). `parseFileConfig` (config/load.ts) converts them here, exactly (bigint, no float),
 * before the schema (config/schema.ts) reads them; the schema then holds smallest units only, so every
 * reader of the configuration is unchanged. A size in the wrong token, more decimals than the token
 * has, or a decimal without its symbol is refused naming the key.
 *
 * The sizes converted, each in the token it counts: a token's `minInventory`, `safetyBuffer`,
 * `targetInventory` (that token); a pair's `minBase`, `maxBase`, `levels` / `bidLevels` / `askLevels`
 * `upToBase` and `skew.fullAtBase` (its base token); `rebalance.targets.<SYMBOL>` `target`, `band`,
 * `maxTrade` and `issuance.<SYMBOL>` `maxPerFill`, `maxPerDay` (that symbol's token). Lamport amounts
 * (`maxLamports`, `minSolLamports`, `maxFeeLamports`) stay lamports.
 */

const IN_TOKENS = /^(\d+)(?:\.(\d+))?\s+(\S+)$/;
const BARE_DECIMAL = /^\d*\.\d+$|^\d+\.$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `value` in smallest units of `symbol` (with `decimals`): the digits unchanged, a token amount
 * converted exactly; an error message (without the key) when it cannot be.
 */
export function sizeInUnits(
  value: string,
  symbol: string,
  decimals: number,
): { units: string } | { error: string } {
  const v = value.trim();
  if (/^\d+$/.test(v)) return { units: v };
  const m = IN_TOKENS.exec(v);
  if (!m) {
    if (BARE_DECIMAL.test(v))
      return {
        error: `"${value}": a size in tokens needs the token's symbol ("${v} ${symbol}"); smallest units are digits only`,
      };
    return { units: value };
  }
  const [, whole = "", frac = "", unit = ""] = m;
  if (unit !== symbol) return { error: `"${value}": this size is in ${symbol}, not ${unit}` };
  if (frac.length > decimals)
    return {
      error: `"${value}": ${symbol} has ${decimals} decimals, so at most ${decimals} digit(s) after the point (its smallest unit is ${decimals === 0 ? "1" : `0.${"0".repeat(decimals - 1)}1`} ${symbol})`,
    };
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, "0") || "0");
  return { units: units.toString() };
}

/**
 * A copy of the raw configuration file with every size written in tokens converted to smallest units,
 * and the problems found (`<key>: <why>`, the key as the schema's errors name it). Anything it does not
 * recognise is left for the schema to judge.
 */
export function sizesToUnits(raw: unknown): { raw: unknown; problems: string[] } {
  if (!isObject(raw)) return { raw, problems: [] };
  const out = structuredClone(raw) as Json;
  const problems: string[] = [];
  const decimalsOf = new Map<string, number>();
  if (Array.isArray(out.tokens))
    for (const t of out.tokens)
      if (isObject(t) && typeof t.symbol === "string" && Number.isInteger(t.decimals))
        decimalsOf.set(t.symbol, t.decimals as number);

  /** Converts `obj[key]` in place when it is a string and `symbol` is a known token. */
  const convert = (obj: unknown, key: string, symbol: unknown, path: string) => {
    if (!isObject(obj) || typeof obj[key] !== "string" || typeof symbol !== "string") return;
    const decimals = decimalsOf.get(symbol);
    if (decimals === undefined) return;
    const r = sizeInUnits(obj[key] as string, symbol, decimals);
    if ("error" in r) problems.push(`${path}.${key}: ${r.error}`);
    else obj[key] = r.units;
  };

  if (Array.isArray(out.tokens))
    out.tokens.forEach((t, i) => {
      if (!isObject(t)) return;
      for (const k of ["minInventory", "safetyBuffer", "targetInventory"])
        convert(t, k, t.symbol, `tokens.${i}`);
    });
  if (Array.isArray(out.pairs))
    out.pairs.forEach((p, i) => {
      if (!isObject(p)) return;
      for (const k of ["minBase", "maxBase"]) convert(p, k, p.base, `pairs.${i}`);
      for (const levels of ["levels", "bidLevels", "askLevels"]) {
        const list = p[levels];
        if (Array.isArray(list))
          list.forEach((l, j) => {
            convert(l, "upToBase", p.base, `pairs.${i}.${levels}.${j}`);
          });
      }
      convert(p.skew, "fullAtBase", p.base, `pairs.${i}.skew`);
    });
  const targets = isObject(out.rebalance) ? out.rebalance.targets : undefined;
  if (isObject(targets))
    for (const [symbol, t] of Object.entries(targets))
      for (const k of ["target", "band", "maxTrade"]) convert(t, k, symbol, `rebalance.targets.${symbol}`);
  if (isObject(out.issuance))
    for (const [symbol, policy] of Object.entries(out.issuance))
      for (const k of ["maxPerFill", "maxPerDay"]) convert(policy, k, symbol, `issuance.${symbol}`);
  return { raw: out, problems };
}
