/** The ledger report as text tables, CSV (one section after another, each under a `# name` line) or JSON. */
import type { Config } from "../../config/load.ts";
import { table } from "../lib/table.ts";
import type { LedgerReport } from "./report.ts";

export type ReportFormat = "text" | "csv" | "json";

/** The report with each mint's symbol and decimals as configured (absent for an unknown mint). */
export interface SymbolReport extends LedgerReport {
  feesOwedByMint: (LedgerReport["feesOwedByMint"][number] & {
    symbol: string | null;
    decimals: number | null;
  })[];
  feesOwedByChannel: (LedgerReport["feesOwedByChannel"][number] & {
    symbol: string | null;
    decimals: number | null;
  })[];
}

export function withSymbols(config: Config, r: LedgerReport): SymbolReport {
  return withSymbolsOf(config.tokensByMint, r);
}

export function withSymbolsOf(
  tokensByMint: Config["tokensByMint"] | undefined,
  r: LedgerReport,
): SymbolReport {
  const named = <F extends { mint: string }>(f: F) => {
    const t = tokensByMint?.get(f.mint);
    return { ...f, symbol: t?.symbol ?? null, decimals: t?.decimals ?? null };
  };
  return {
    ...r,
    feesOwedByMint: r.feesOwedByMint.map(named),
    feesOwedByChannel: r.feesOwedByChannel.map(named),
  };
}

/** Smallest units as a decimal number of tokens (exact: bigint arithmetic). */
function tokens(units: string, decimals: number | null): string {
  if (decimals === null || decimals === 0) return units;
  const neg = units.startsWith("-");
  const digits = (neg ? units.slice(1) : units).padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const frac = digits.slice(-decimals).replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

const rate = (r: number | null) => (r === null ? "" : r.toFixed(4));

/** One mint's fees owed: mint, symbol, fills, in units and in tokens. */
const feeCells = (f: SymbolReport["feesOwedByMint"][number]): string[] => [
  f.mint,
  f.symbol ?? "",
  String(f.fills),
  f.feeOwed,
  tokens(f.feeOwed, f.decimals),
];

function sections(r: SymbolReport): { name: string; headers: string[]; rows: string[][] }[] {
  return [
    {
      name: "fees owed by mint",
      headers: ["mint", "symbol", "fills", "fee_owed_units", "fee_owed"],
      rows: r.feesOwedByMint.map(feeCells),
    },
    {
      name: "volume by pair",
      headers: ["pair", "fills", "base_volume_units", "quote_volume_units"],
      rows: r.volumeByPair.map((v) => [v.pair, String(v.fills), v.baseVolume, v.quoteVolume]),
    },
    {
      name: "fill rate by hour",
      headers: ["hour", "decided", "accepted", "landed", "honest_rejections", "fill_rate"],
      rows: r.fillRateByHour.map((h) => [
        h.hour,
        String(h.decided),
        String(h.accepted),
        String(h.landed),
        String(h.honestRejections),
        rate(h.fillRate),
      ]),
    },
    {
      name: "rejections by code",
      headers: ["code", "count"],
      rows: r.rejectionsByCode.map((x) => [x.code, String(x.count)]),
    },
    {
      name: "markouts by pair (bps, maker's side)",
      headers: ["pair", "horizon", "fills", "avg_bps"],
      rows: r.markoutsByPair.map((m) => [m.pair, m.horizon, String(m.fills), m.avgBps.toFixed(2)]),
    },
    {
      name: "markouts by taker (bps, maker's side; worst first)",
      headers: ["taker", "horizon", "fills", "avg_bps"],
      rows: r.markoutsByTaker.map((m) => [m.taker, m.horizon, String(m.fills), m.avgBps.toFixed(2)]),
    },
    {
      name: "by channel: fill rate",
      headers: ["channel", "decided", "accepted", "landed", "honest_rejections", "fill_rate"],
      rows: r.fillRateByChannel.map((c) => [
        c.channel,
        String(c.decided),
        String(c.accepted),
        String(c.landed),
        String(c.honestRejections),
        rate(c.fillRate),
      ]),
    },
    {
      name: "by channel: fees owed",
      headers: ["channel", "mint", "symbol", "fills", "fee_owed_units", "fee_owed"],
      rows: r.feesOwedByChannel.map((f) => [f.channel, ...feeCells(f)]),
    },
    {
      name: "by channel: markouts (bps, maker's side)",
      headers: ["channel", "horizon", "fills", "avg_bps"],
      rows: r.markoutsByChannel.map((m) => [m.channel, m.horizon, String(m.fills), m.avgBps.toFixed(2)]),
    },
    {
      name: `by channel: toxic takers (mean 60s markout below ${r.toxicLine.flagBelowBps} bps over at least ${r.toxicLine.minFills} fills; worst first)`,
      headers: ["channel", "taker", "fills", "avg_bps"],
      rows: r.toxicTakersByChannel.map((t) => [t.channel, t.taker, String(t.fills), t.avgBps.toFixed(2)]),
    },
    {
      name: "fills",
      headers: [
        "landed_at",
        "channel",
        "tx_signature",
        "quote_id",
        "request_id",
        "taker",
        "pair",
        "side",
        "amount_in",
        "amount_out",
        "fee_mint",
        "fee_owed",
        "fee_bps",
        "slot",
      ],
      rows: r.fills.map((f) => [
        f.landedAt,
        f.channel,
        f.txSignature,
        f.quoteId,
        f.requestId,
        f.taker ?? "",
        f.pair ?? "",
        f.side ?? "",
        f.amountIn ?? "",
        f.amountOut ?? "",
        f.feeMint,
        f.feeOwed,
        String(f.feeBps),
        f.slot ?? "",
      ]),
    },
  ];
}

const csvCell = (s: string) => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

export function formatReport(r: SymbolReport, format: ReportFormat): string {
  if (format === "json") return `${JSON.stringify(r, null, 2)}\n`;
  const parts = sections(r);
  if (format === "csv") {
    return `${parts
      .map((s) =>
        [`# ${s.name}`, ...[s.headers, ...s.rows].map((row) => row.map(csvCell).join(","))].join("\n"),
      )
      .join("\n\n")}\n`;
  }
  const head = `Fill ledger report, ${r.from} to ${r.to} (end excluded)`;
  return `${[head, ...parts.map((s) => `${s.name}:\n${s.rows.length ? table(s.headers, s.rows) : "  (none)"}`)].join("\n\n")}\n`;
}
