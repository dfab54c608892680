/**
 * The Hono app. Ports come in ready-made (composition happens once, in main.ts or a test harness);
 * nothing here constructs an adapter.
 *
 * Two apps, served on two listeners (main.ts): the operator's (`createApp`: the operator routes under
 * the configured base path, e.g. /jupiter/rfq/quote, plus /health and /ready for load balancers) and
 * the operations one (`createOpsApp`: /metrics, /admin/*, /health, /ready), bound to loopback by
 * default (ADMIN_PORT, ADMIN_HOST), so neither the metrics nor the admin API face the operator's
 * network. /openapi.json, the document of the operator routes (src/contract/openapi.ts), is served
 * by the operator's listener at its root, outside the base path.
 */
import { Hono } from "hono";
import type { Config } from "../config/load.ts";
import type { TokenLists } from "../inventory/token-lists.ts";
import { openApiDocument } from "./contract/openapi.ts";
import { errorHandler } from "./errors/index.ts";
import { apiKeyAuth } from "./http/auth.ts";
import { bodyLimitOf } from "./http/body.ts";
import type { AppEnv } from "./http/env.ts";
import { gateBeforeHono } from "./http/listener.ts";
import type { Conditions } from "./observability/conditions.ts";
import type { Logger } from "./observability/logger.ts";
import type { Metrics } from "./observability/metrics.ts";
import type { QuoteService } from "./quote/service.ts";
import type { QuoteStore } from "./quote-store/interface.ts";
import { Circuit } from "./redis/circuit.ts";
import { type ReadinessProbe, registerHealthRoutes } from "./routes/health.ts";
import { registerMetricsRoute } from "./routes/metrics.ts";
import { quoteGate, registerQuoteRoute } from "./routes/quote.ts";
import { registerSwapRoute } from "./routes/swap.ts";
import { registerTokenRoutes } from "./routes/tokens.ts";
import type { SwapHandler } from "./swap/handler.ts";

export interface AppDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  store: QuoteStore;
  quotes: QuoteService;
  swap: SwapHandler;
  tokenLists: TokenLists;
  probes: readonly ReadinessProbe[];
  /** Named conditions listed on /ready (a blocking one answers 503). */
  conditions?: Conditions;
  /** True once the process is shutting down: /ready answers 503 "draining". */
  draining?: () => boolean;
  /** The quote store's circuit breaker (compose makes one per service). */
  storeCircuit?: Circuit;
  now?: () => number;
}

export interface OpsAppDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  probes: readonly ReadinessProbe[];
  /** Named conditions listed on /ready (a blocking one answers 503). */
  conditions?: Conditions;
  /** The maker's admin API: behind its own key, never the operator's. */
  adminRoutes?: (app: Hono<AppEnv>) => void;
  /** True once the process is shutting down: /ready answers 503 "draining". */
  draining?: () => boolean;
}

/** The common frame of both apps: the logger, the answer counter, one error handler, 404 bodies. */
function frame(log: Logger, metrics: Metrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("log", log);
    await next();
    // Route label is the matched pattern, not the raw path, so the label set stays bounded.
    metrics.responses.inc({ route: c.req.routePath, status: String(c.res.status) });
  });
  app.onError(errorHandler);
  app.notFound((c) => c.json({ message: `no route ${c.req.method} ${c.req.path}` }, 404));
  return app;
}

/** Production allowances in force (config/safety.ts), shown on /ready. */
const allowancesOf = (config: Config) => config.hazards.filter((h) => h.allowed).map((h) => h.allowance);

/** The operations listener's app: /metrics, /admin/*, /health, /ready. */
export function createOpsApp(deps: OpsAppDeps): Hono<AppEnv> {
  const app = frame(deps.log, deps.metrics);
  registerHealthRoutes(
    app,
    deps.probes,
    allowancesOf(deps.config),
    deps.draining,
    deps.config.mode,
    deps.conditions,
  );
  registerMetricsRoute(app, deps.metrics);
  deps.adminRoutes?.(app);
  return app;
}

/** The operator's listener's app: the operator routes under basePath, plus /health and /ready. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config, log, metrics } = deps;
  const now = deps.now ?? Date.now;
  const app = frame(log, metrics);
  registerHealthRoutes(app, deps.probes, allowancesOf(config), deps.draining, config.mode, deps.conditions);
  const openApi = openApiDocument(config.file.basePath);
  app.get("/openapi.json", (c) => c.json(openApi));

  const api = new Hono<AppEnv>();
  api.use("*", bodyLimitOf(config.file.limits.maxBodyBytes));
  api.use("*", apiKeyAuth(config.env.API_KEY));
  registerTokenRoutes(api, deps.tokenLists);
  const admission = registerQuoteRoute(api, {
    service: deps.quotes,
    store: deps.store,
    metrics,
    minBudgetMs: config.file.limits.minQuoteBudgetMs,
    logSample: config.env.LOG_QUOTE_SAMPLE,
    now,
    storeCircuit: deps.storeCircuit ?? new Circuit({ name: "quoteStore", metrics, now }),
    shedShare: config.file.limits.shedAfterQueuedShare,
  });
  registerSwapRoute(api, deps.swap, metrics);
  app.route(config.file.basePath || "/", api);
  gateBeforeHono(
    app,
    quoteGate(admission, {
      path: `${config.file.basePath}/quote`,
      apiKey: config.env.API_KEY,
      maxBodyBytes: config.file.limits.maxBodyBytes,
      metrics,
    }),
  );
  return app;
}
