/**
 * The simulator's own control surface (not part of the operator's public API): register makers,
 * force a token re-sync, and read each maker's token set and fill rate.
 */
import type { Hono } from "hono";
import { z } from "zod";
import type { FillRateTracker } from "../fill-rate.ts";
import type { WebhookRegistry } from "../webhooks.ts";

const registrationSchema = z.object({
  name: z.string().min(1).max(64),
  baseUrl: z.url({ protocol: /^https?$/ }),
  apiKey: z.string().min(1).optional(),
});

export function registerAdminRoutes(app: Hono, registry: WebhookRegistry, fillRate: FillRateTracker): void {
  const view = (name: string) => {
    const h = registry.get(name);
    if (!h) return undefined;
    return {
      name: h.name,
      baseUrl: h.baseUrl,
      tokens: [...h.tokens],
      permissioned: [...h.permissioned],
      tokensHash: h.tokensHash ?? null,
      lastSyncAtMs: h.lastSyncAtMs ?? null,
      lastSyncError: h.lastSyncError ?? null,
      fillRate: fillRate.status(name),
    };
  };

  app.get("/operator/webhooks", (c) => c.json(registry.list().map((h) => view(h.name))));

  app.post("/operator/webhooks", async (c) => {
    const parsed = registrationSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      return c.json(
        { error: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") },
        400,
      );
    registry.register(parsed.data);
    const sync = await registry.sync(parsed.data.name);
    return c.json({ webhook: view(parsed.data.name), sync }, 201);
  });

  app.post("/operator/webhooks/:name/sync", async (c) => {
    const name = c.req.param("name");
    if (!registry.get(name)) return c.json({ error: `no webhook named ${name}` }, 404);
    const sync = await registry.sync(name, c.req.query("force") === "1" || c.req.query("force") === "true");
    return c.json({ webhook: view(name), sync });
  });
}
