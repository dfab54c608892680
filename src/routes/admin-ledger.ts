/**
 * The admin API's reads of the fill ledger (behind admin.ts's key check): landed fills, fees owed by
 * mint, and `npm run report`'s report, from this instance's ledger (the embedded one is open here
 * only). `from` and `to` as `npm run report` takes them: YYYY-MM-DD (UTC; a bare `to` includes that
 * day) or an ISO 8601 instant. Without a ledger (LEDGER=off) every one answers 404.
 */
import type { Hono } from "hono";
import { z } from "zod";
import type { TokenConfig } from "../../config/schema.ts";
import { AppError, ErrorCode, formatZodError } from "../errors/index.ts";
import type { AppEnv } from "../http/env.ts";
import type { Ledger } from "../ledger/ledger.ts";
import {
  feesOwedByMint,
  landedFills,
  ledgerReport,
  type ReportRange,
  reportRange,
  type ToxicLine,
} from "../ledger/report.ts";
import { formatReport, withSymbolsOf } from "../ledger/report-format.ts";

export interface LedgerAdminDeps {
  /** The fill ledger (absent with LEDGER=off: these routes answer 404). */
  ledger?: Promise<Ledger>;
  tokensByMint?: ReadonlyMap<string, TokenConfig>;
  /** The line the report's toxic takers are drawn at (toxicity.flagBelowBps, minFills; schema defaults when unset). */
  toxicLine?: ToxicLine;
  now: () => number;
}

const fillsQuery = z.object({
  from: z.string().min(1).optional(),
  to: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
});
const feesQuery = fillsQuery.omit({ limit: true });
const reportQuery = feesQuery.extend({ format: z.enum(["text", "csv", "json"]).default("text") });

export function registerLedgerAdminRoutes(app: Hono<AppEnv>, deps: LedgerAdminDeps): void {
  const { now } = deps;
  const ledger = async (): Promise<Ledger> => {
    if (!deps.ledger)
      throw new AppError(ErrorCode.ROUTE_NOT_FOUND, "no fill ledger on this instance (LEDGER=off)");
    return deps.ledger;
  };
  const rangeOf = (
    q: { from?: string | undefined; to?: string | undefined },
    defaultFromMs: number,
  ): ReportRange => {
    try {
      return reportRange(
        q.from ?? new Date(defaultFromMs).toISOString(),
        q.to ?? new Date(now()).toISOString(),
      );
    } catch (e) {
      throw new AppError(ErrorCode.INVALID_REQUEST, (e as Error).message.replace(/^--/, ""));
    }
  };
  const query = <T extends z.ZodType>(schema: T, raw: Record<string, string>): z.output<T> => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new AppError(ErrorCode.INVALID_REQUEST, formatZodError(parsed.error));
    return parsed.data;
  };

  app.get("/admin/fills", async (c) => {
    const q = query(fillsQuery, c.req.query());
    const range = rangeOf(q, now() - 86_400_000);
    const fills = await landedFills((await ledger()).db, range, q.limit);
    return c.json({
      from: new Date(range.fromMs).toISOString(),
      to: new Date(range.toMs).toISOString(),
      fills,
    });
  });

  app.get("/admin/fees", async (c) => {
    const q = query(feesQuery, c.req.query());
    const month = new Date(now());
    const range = rangeOf(q, Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1));
    const fees = (await feesOwedByMint((await ledger()).db, range)).map((f) => {
      const t = deps.tokensByMint?.get(f.mint);
      return { ...f, symbol: t?.symbol ?? null, decimals: t?.decimals ?? null };
    });
    return c.json({
      from: new Date(range.fromMs).toISOString(),
      to: new Date(range.toMs).toISOString(),
      fees,
    });
  });

  // What `npm run report` prints, from this instance's ledger: the embedded one is open here only.
  app.get("/admin/report", async (c) => {
    const q = query(reportQuery, c.req.query());
    const today = new Date(now()).toISOString().slice(0, 10);
    const range = rangeOf({ from: q.from ?? today, to: q.to ?? today }, 0);
    const report = await ledgerReport((await ledger()).db, range, deps.toxicLine);
    const body = formatReport(withSymbolsOf(deps.tokensByMint, report), q.format);
    return c.body(body, 200, {
      "content-type":
        q.format === "json" ? "application/json" : q.format === "csv" ? "text/csv" : "text/plain",
    });
  });
}
