/**
 * The toxic-flow controls' admin routes (src/toxicity/), behind the admin API's key like every other
 * /admin route (registered by admin.ts after its auth):
 *
 *   GET    /admin/takers                        flags, deny list, allow list (unexpired; config entries too)
 *   PUT    /admin/takers/:list/:taker {"ttlMs": 3600000, "reason": "..."}
 *                                               list = flags | deny | allow; ttlMs required for a flag,
 *                                               optional on the lists (absent: until removed)
 *   DELETE /admin/takers/:list/:taker           404 when it was not on the list
 *
 * Every change is written to the shared store and reaches every instance's quote path within
 * `toxicity.reloadMs` (pub/sub: at once). With `toxicity.enabled` off every route answers 404.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { base58Pubkey } from "../../config/schema.ts";
import { AppError, ErrorCode, formatZodError } from "../errors/index.ts";
import { parseJsonBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import type { Metrics } from "../observability/metrics.ts";
import { TAKER_LISTS, type TakerList, type TakerStanding } from "../toxicity/interface.ts";

export interface TakerAdminDeps {
  takers?: TakerStanding;
  metrics?: Metrics;
  now: () => number;
}

const MAX_TTL_MS = 365 * 86_400_000;
const putBody = z.object({
  ttlMs: z.number().int().min(1_000).max(MAX_TTL_MS).optional(),
  reason: z.string().min(1).max(200).optional(),
});

const OTHER: Partial<Record<TakerList, TakerList>> = { deny: "allow", allow: "deny" };

export function registerTakerAdminRoutes(app: Hono<AppEnv>, deps: TakerAdminDeps): void {
  const { now } = deps;
  const takers = (): TakerStanding => {
    if (!deps.takers) {
      throw new AppError(ErrorCode.ROUTE_NOT_FOUND, "the toxic-flow controls are off: set toxicity.enabled");
    }
    return deps.takers;
  };
  const params = (list: string, taker: string): { list: TakerList; taker: string } => {
    if (!(TAKER_LISTS as readonly string[]).includes(list)) {
      throw new AppError(ErrorCode.ROUTE_NOT_FOUND, `no taker list ${list} (flags, deny, allow)`);
    }
    const parsed = base58Pubkey.safeParse(taker);
    if (!parsed.success)
      throw new AppError(ErrorCode.INVALID_REQUEST, `taker: ${formatZodError(parsed.error)}`);
    return { list: list as TakerList, taker };
  };

  app.get("/admin/takers", (c) => c.json(takers().list(now())));

  app.put("/admin/takers/:list/:taker", async (c) => {
    const store = takers();
    const { list, taker } = params(c.req.param("list"), c.req.param("taker"));
    const body = await parseJsonBody(c, putBody);
    if (list === "flags" && body.ttlMs === undefined) {
      throw new AppError(ErrorCode.INVALID_REQUEST, "ttlMs: required for a flag (flags always expire)");
    }
    const other = OTHER[list];
    if (other && store.list(now())[other].some((e) => e.taker === taker)) {
      throw new AppError(
        ErrorCode.INVALID_REQUEST,
        `taker: ${taker} is on the ${other} list; remove it there first (a taker is on one list or the other)`,
      );
    }
    const atMs = now();
    const entry = {
      taker,
      reason: body.reason ?? `set by the admin API`,
      source: "admin" as const,
      atMs,
      ...(body.ttlMs !== undefined ? { untilMs: atMs + body.ttlMs } : {}),
    };
    await store.put(list, entry);
    if (list === "flags") deps.metrics?.toxicFlags.inc({ source: "admin" });
    c.get("log").warn(
      { list, taker, untilMs: entry.untilMs, reason: entry.reason },
      "admin: taker list changed",
    );
    return c.json(entry);
  });

  app.delete("/admin/takers/:list/:taker", async (c) => {
    const store = takers();
    const { list, taker } = params(c.req.param("list"), c.req.param("taker"));
    const configured = store.list(now())[list].find((e) => e.taker === taker && e.source === "config");
    if (configured) {
      throw new AppError(
        ErrorCode.INVALID_REQUEST,
        `taker: ${taker} is in the configuration (toxicity.${list}); edit the configuration to remove it`,
      );
    }
    if (!(await store.remove(list, taker))) {
      throw new AppError(ErrorCode.ROUTE_NOT_FOUND, `taker ${taker} is not on the ${list} list`);
    }
    c.get("log").warn({ list, taker }, "admin: taker removed from a list");
    return c.json({ list, taker, removed: true });
  });
}
