/**
 * The operator simulator's HTTP app: the operator's order and execute endpoints, plus the simulator's
 * own control routes. Everything it needs arrives built (composition happens in main.ts or a test).
 */
import { Hono } from "hono";
import type { ExecuteDeps } from "./execute.ts";
import type { OrderDeps } from "./order.ts";
import { registerAdminRoutes } from "./routes/admin.ts";
import { registerExecuteRoutes } from "./routes/execute.ts";
import { registerOrderRoute } from "./routes/order.ts";

export type OperatorDeps = OrderDeps &
  ExecuteDeps & {
    /** When set, order and execute calls must carry it in x-api-key (the operator's own auth). */
    apiKey?: string;
  };

export function createOperatorApp(deps: OperatorDeps): Hono {
  const app = new Hono();
  app.onError((err, c) => c.json({ error: `internal error: ${err.message}` }, 500));
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
  app.get("/health", (c) => c.json({ ok: true }));
  if (deps.apiKey) {
    const key = deps.apiKey;
    app.use("/ultra/*", async (c, next) => {
      if (c.req.header("x-api-key") !== key) return c.json({ error: "missing or invalid x-api-key" }, 401);
      await next();
    });
    app.use("/swap/*", async (c, next) => {
      if (c.req.header("x-api-key") !== key) return c.json({ error: "missing or invalid x-api-key" }, 401);
      await next();
    });
  }
  registerOrderRoute(app, deps);
  registerExecuteRoutes(app, deps);
  registerAdminRoutes(app, deps.registry, deps.fillRate);
  return app;
}
