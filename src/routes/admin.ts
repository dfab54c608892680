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
 *   (the ledger's routes, /admin/fills, /admin/fees and /admin/report, are in admin-ledger.ts)
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
import type { ToxicLine } from "../ledger/report.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { TakerStanding } from "../toxicity/interface.ts";
import { registerLedgerAdminRoutes } from "./admin-ledger.ts";
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

  const now = deps.now ?? Date.now;
  registerTakerAdminRoutes(app, {
    ...(deps.takers ? { takers: deps.takers } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    now,
  });
  registerLedgerAdminRoutes(app, {
    ...(deps.ledger ? { ledger: deps.ledger } : {}),
    ...(deps.tokensByMint ? { tokensByMint: deps.tokensByMint } : {}),
    ...(deps.toxicLine ? { toxicLine: deps.toxicLine } : {}),
    now,
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
