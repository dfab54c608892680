/**
 * The admin API, for the maker's operators (never the aggregator): the global pause (kill switch),
 * per-pair switches and a look at inventory. Its own key, ADMIN_API_KEY, sent as X-ADMIN-API-KEY;
 * with no key configured every admin route answers 404, so the API does not exist by default.
 *
 *   GET  /admin/controls                  the switches as this instance sees them
 *   POST /admin/pause   {"reason": "..."}  every instance stops quoting within a second
 *   POST /admin/resume
 *   PUT  /admin/pairs/:base/:quote {"enabled": true | false | null}   null: back to the config
 *   GET  /admin/inventory                 balances, reservations, ATAs (amounts as strings)
 *   GET  /admin/fills?from=&to=&limit=    landed fills from the fill ledger (default: the last 24 h)
 *   GET  /admin/fees?from=&to=            fees owed by mint (default: this UTC month so far)
 *   GET  /admin/report?from=&to=&format=  `npm run report`'s report from this instance's ledger
 *                                         (default: today, UTC; text, csv or json)
 *   GET|PUT|DELETE /admin/takers/...      the toxic-flow controls' flags and lists (admin-takers.ts)
 *
 * `from` and `to` as `npm run report` takes them: YYYY-MM-DD (UTC; a bare `to` includes that day) or
 * an ISO 8601 instant.
 */
import type { Hono } from "hono";
import { z } from "zod";
import type { TokenConfig } from "../../config/schema.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import { AppError, ErrorCode, formatZodError } from "../errors/index.ts";
import { apiKeyAuth } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
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
import type { Metrics } from "../observability/metrics.ts";
import type { TakerStanding } from "../toxicity/interface.ts";
import { registerTakerAdminRoutes } from "./admin-takers.ts";

export interface AdminDeps {
  /** ADMIN_API_KEY; undefined disables the admin API. */
  adminApiKey: string | undefined;
  controls: Controls;
  /** Configured pair keys ("BASE/QUOTE"), so a typo is refused rather than stored. */
  pairs: readonly string[];
  inventory?: Pick<Inventory, "snapshot">;
  /** The fill ledger (absent with LEDGER=off: the ledger routes answer 404). */
  ledger?: Promise<Ledger>;
  tokensByMint?: ReadonlyMap<string, TokenConfig>;
  /** The line the report's toxic takers are drawn at (toxicity.flagBelowBps, minFills; schema defaults when unset). */
  toxicLine?: ToxicLine;
  /** The toxic-flow controls' taker lists (absent unless toxicity.enabled: their routes answer 404). */
  takers?: TakerStanding;
  metrics?: Metrics;
  now?: () => number;
}

const fillsQuery = z.object({
  from: z.string().min(1).optional(),
  to: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
});
const feesQuery = fillsQuery.omit({ limit: true });
const reportQuery = feesQuery.extend({ format: z.enum(["text", "csv", "json"]).default("text") });

const pauseBody = z.object({ reason: z.string().min(1).max(200).default("paused by admin API") });
const pairBody = z.object({ enabled: z.boolean().nullable() });

export const ADMIN_KEY_HEADER = "x-admin-api-key";

export function registerAdminRoutes(app: Hono<AppEnv>, deps: AdminDeps): void {
  const { controls } = deps;
  if (!deps.adminApiKey) {
    app.all("/admin/*", () => {
      throw new AppError(ErrorCode.ROUTE_NOT_FOUND, "the admin API is disabled: set ADMIN_API_KEY");
    });
    return;
  }
  app.use("/admin/*", apiKeyAuth(deps.adminApiKey, ADMIN_KEY_HEADER));
  const known = new Set(deps.pairs);

  app.get("/admin/controls", (c) => c.json(controls.state()));

  app.post("/admin/pause", async (c) => {
    // An empty body is fine (the reason has a default): `curl -X POST .../admin/pause` must work.
    const text = await c.req.text();
    let raw: unknown = {};
    if (text.trim()) {
      try {
        raw = JSON.parse(text);
      } catch {
        throw new AppError(ErrorCode.MALFORMED_JSON, "body: must be a JSON object");
      }
    }
    const parsed = pauseBody.safeParse(raw);
    if (!parsed.success) throw new AppError(ErrorCode.INVALID_REQUEST, formatZodError(parsed.error));
    const { reason } = parsed.data;
    await controls.pause(reason);
    c.get("log").warn({ reason }, "admin: quoting paused");
    return c.json(controls.state());
  });

  app.post("/admin/resume", async (c) => {
    await controls.resume();
    c.get("log").warn("admin: quoting resumed");
    return c.json(controls.state());
  });

  app.put("/admin/pairs/:base/:quote", async (c) => {
    const pair = `${c.req.param("base")}/${c.req.param("quote")}`;
    if (!known.has(pair)) throw new AppError(ErrorCode.ROUTE_NOT_FOUND, `no configured pair ${pair}`);
    const { enabled } = await parseJsonBody(c, pairBody);
    await controls.setPair(pair, enabled);
    c.get("log").warn({ pair, enabled }, "admin: pair switch changed");
    return c.json(controls.state());
  });

  const ledger = async (): Promise<Ledger> => {
    if (!deps.ledger)
      throw new AppError(ErrorCode.ROUTE_NOT_FOUND, "no fill ledger on this instance (LEDGER=off)");
    return deps.ledger;
  };
  const now = deps.now ?? Date.now;
  registerTakerAdminRoutes(app, {
    ...(deps.takers ? { takers: deps.takers } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    now,
  });
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

  app.get("/admin/inventory", (c) => {
    if (!deps.inventory) throw new AppError(ErrorCode.ROUTE_NOT_FOUND, "no inventory on this instance");
    const s = deps.inventory.snapshot();
    return c.json({
      maker: s.maker,
      lamports: s.lamports?.toString() ?? null,
      balancesAtMs: s.balancesAtMs ?? null,
      chainReadAtMs: s.chainReadAtMs ?? null,
      holdings: s.holdings.map((h) => ({
        ...h,
        balance: h.balance.toString(),
        reserved: h.reserved.toString(),
        incoming: h.incoming.toString(),
      })),
    });
  });
}
