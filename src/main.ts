/**
 * Entry point: `npm start`. Parses configuration (fatal, naming the key, on any problem), composes the
 * ports (a dependency that cannot be reached stops the start with one line naming its setting), serves
 * two listeners (the operator's on PORT, operations on ADMIN_PORT), and shuts down gracefully on
 * SIGINT/SIGTERM (src/http/shutdown.ts). With WORKERS > 1 this process becomes the primary of that many
 * workers sharing PORT, each of which runs the same path (src/http/cluster.ts).
 */
import "./v8-flags.ts";
// Next (the V8 settings above run nothing else): an older Node.js is refused with one line before
// any other module runs.
import "./cli/node-version.ts";
import cluster from "node:cluster";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { AggregatorRegistry } from "prom-client";
import { type DotEnv, dotEnvLine, loadConfig, loadDotEnv } from "../config/load.ts";
import { parseArgs } from "./cli/args.ts";
import { runMain } from "./cli/run.ts";
import { composeService, type Service } from "./compose.ts";
import { StartupError } from "./errors/startup.ts";
import {
  DOTENV_SET_ENV,
  PRIMARY_OPS_URL_ENV,
  reportFatalToPrimary,
  runPrimary,
  WORKER_SLOT_ENV,
  workerCount,
  workerIpc,
} from "./http/cluster.ts";
import { backlogWarning, OPERATOR_KEEP_ALIVE_MS, requestListener, somaxconn } from "./http/listener.ts";
import { GracefulShutdown } from "./http/shutdown.ts";
import { createLogger } from "./observability/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import { formatPairs, pairLines } from "./ops/pairs.ts";

const USAGE = {
  command: "npm start",
  summary:
    "Serves the webhook: the operator's routes on PORT (HOST), operations (/metrics, /admin, /health,\n" +
    "/ready) on ADMIN_PORT (ADMIN_HOST, 127.0.0.1 by default). Configured by environment variables and\n" +
    "the CONFIG file; see docs/configuration.md and config/.env.example.",
  flags: {},
} as const;

const urlOf = (info: AddressInfo) =>
  `http://${info.address.includes(":") ? `[${info.address}]` : info.address}:${info.port}`;

function banner(
  service: Service,
  url: string,
  opsUrl: string,
  ledger: string,
  workers: string,
  dotEnv: DotEnv | undefined,
): string {
  const { config, signer } = service;
  const symbols = (mints: string[]) =>
    mints.map((m) => `${config.tokensByMint.get(m)?.symbol ?? "?"} ${m}`).join("\n    ");
  const allowed = config.hazards.filter((h) => h.allowed);
  const lines = [
    "",
    `RFQ maker webhook listening on ${url}${config.file.basePath}`,
    `  operations:  ${opsUrl} (/metrics, /admin, /health, /ready)`,
    `  workers:     ${workers}`,
    `  mode:        ${config.mode}${config.mode === "paper" ? " (PAPER SETUP: local chain, static prices, nothing real)" : ""}`,
    `  maker:       ${signer.publicKey.toBase58()}${service.keyCreated ? " (generated now)" : ""}`,
    `  config:      ${config.configPath}`,
    `  .env:        ${dotEnvLine(dotEnv)}`,
    `  quote store: ${service.redis ? "redis" : "in-memory (single instance)"}`,
    `  chain:       ${service.chain.description}`,
    `  bundles:     ${service.bundles.port ? service.bundles.note : `none (${service.bundles.reason})`}`,
    `  fill ledger: ${ledger}`,
    `  rfq v2:      ${config.env.RFQ_V2_URL ? `${config.file.rfqV2.pairs.join(", ")} to ${new URL(config.env.RFQ_V2_URL).host}` : "off (RFQ_V2_URL unset)"}`,
    `  api key:     ${config.env.API_KEY ? "required (X-API-KEY)" : "none"}`,
    `  pairs:\n${indent(formatPairs(pairLines(config, service.priceSources, service.usd)))}`,
    `  /tokens:\n    ${symbols(service.tokenLists.tokens()) || "(none)"}`,
    `  /permissioned-tokens:\n    ${symbols(service.tokenLists.permissionedTokens()) || "(none)"}`,
    `  conditions:${conditionLines(service)}`,
  ];
  if (service.issuer && service.issuance) {
    const issued = service.issuance.policies
      .tokens()
      .map((t) => t.token.symbol)
      .join(", ");
    lines.push(
      `  issuer:      ${service.issuer.publicKey.toBase58()} (${service.issuer.source}${service.issuer.created ? ", generated now" : ""}): mints and burns ${issued}`,
      ...(service.issuance.bundles ? [] : [`  !!! no bundle engine: ${issued} not quoted`]),
    );
  }
  for (const h of allowed) lines.push(`  ALLOWED UNSAFE (${h.allowance}=1): ${h.problem}`);
  if (config.mode === "acceptance") {
    lines.push(
      "",
      "!!! ACCEPTANCE_MODE=1: /swap gives the operator acceptance suite's CANNED answers.",
      "!!! Nothing is validated, signed or sent. Never register this instance for real traffic.",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The named conditions held at start (src/observability/conditions.ts), one line each. */
function conditionLines(service: Service): string {
  service.conditions.refresh();
  const held = service.conditions.list();
  if (!held.length) return "  none";
  return held
    .map((c) => `\n    !!! ${c.name}: ${c.detail}${c.blocksReady ? " (/ready answers 503)" : ""}`)
    .join("");
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");

/** A plain node:http server: Hono's listener with the native routes first (src/http/listener.ts). */
type Server = HttpServer;

/** Listens; resolves with the bound address, rejects with a message naming the address. */
function listen(
  app: Service["app"],
  port: number,
  hostname: string,
  what: string,
  backlog?: number,
): Promise<[Server, AddressInfo]> {
  return new Promise((resolve, reject) => {
    const server = createServer(requestListener(app));
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        new StartupError(
          what,
          `${hostname}:${port}`,
          e.code === "EADDRINUSE"
            ? `address in use (EADDRINUSE): another process listens there; stop it or set another ${what}`
            : `cannot listen: ${e.code ?? e.message}`,
        ),
      ),
    );
    // With workers, the primary listens with the first worker's options, backlog included.
    server.listen({ port, host: hostname, ...(backlog ? { backlog } : {}) }, () =>
      resolve([server, server.address() as AddressInfo]),
    );
  });
}

/** A worker's operations listener: loopback, a free port of its own. */
function listenExclusive(app: Service["opsApp"]): Promise<[Server, AddressInfo]> {
  return new Promise((resolve, reject) => {
    const server = createServer(requestListener(app));
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () =>
      resolve([server, server.address() as AddressInfo]),
    );
  });
}

/** Resolves with the exit code once the server has stopped (it runs until SIGINT/SIGTERM). */
async function main(): Promise<number> {
  parseArgs(process.argv.slice(2), USAGE);
  const ownDotEnv = loadDotEnv();
  // A worker inherits what the primary's `.env` set: the primary says which names those were.
  const inherited = cluster.isWorker ? process.env[DOTENV_SET_ENV] : undefined;
  const dotEnv =
    ownDotEnv && inherited !== undefined
      ? { ...ownDotEnv, set: inherited ? inherited.split(",") : [] }
      : ownDotEnv;
  const config = loadConfig(process.env);
  const slot = cluster.isWorker ? Number(process.env[WORKER_SLOT_ENV] ?? cluster.worker?.id) : 0;
  const workers = cluster.isWorker ? undefined : workerCount(config);
  if (workers && workers.count > 1) {
    const log = createLogger(config.env.LOG_LEVEL).child({ role: "primary" });
    for (const w of config.warnings) log.warn(w);
    return runPrimary({
      count: workers.count,
      log,
      adminPort: config.env.ADMIN_PORT,
      adminHost: config.env.ADMIN_HOST,
      graceMs: config.env.SHUTDOWN_GRACE_MS,
      ...(dotEnv ? { dotEnvSet: dotEnv.set } : {}),
      onOpsListening: (url) =>
        log.info({ adminUrl: url, workers: workers.count }, "primary: operations listening"),
    });
  }
  // Process metrics (CPU, heap, event-loop lag, GC) only here: tests compose many services per process.
  const metrics = new Metrics({ defaultMetrics: true });
  const service = await composeService(config, {
    metrics,
    rfqV2: slot <= 1,
    ...(slot ? { log: createLogger(config.env.LOG_LEVEL).child({ worker: slot }) } : {}),
  });
  const { log } = service;
  if (slot) {
    // The primary's /metrics asks every worker for this registry (prom-client's AggregatorRegistry).
    AggregatorRegistry.setRegistries([metrics.registry]);
    new AggregatorRegistry();
  } else if (workers?.singleBecause && config.env.WORKERS === undefined) {
    log.info({ why: workers.singleBecause }, "one process (WORKERS unset)");
  }
  if (slot <= 1) for (const w of config.warnings) log.warn(w);
  const backlogCut = slot <= 1 ? backlogWarning(config.env.LISTEN_BACKLOG, somaxconn()) : undefined;
  if (backlogCut) log.warn(backlogCut);
  for (const h of config.hazards.filter((x) => x.allowed))
    log.warn({ allowance: h.allowance }, `allowed unsafe setting: ${h.problem}`);
  if (config.mode === "acceptance")
    log.warn("ACCEPTANCE_MODE=1: canned /swap answers; never use for real traffic");

  const servers: [Server, AddressInfo][] = [];
  try {
    servers.push(
      await listen(service.app, config.env.PORT, config.env.HOST, "PORT", config.env.LISTEN_BACKLOG),
    );
    // A worker's operations app listens on a loopback port of its own (`exclusive`: not shared
    // through the primary); the primary's ADMIN_PORT passes requests to it.
    servers.push(
      slot
        ? await listenExclusive(service.opsApp)
        : await listen(service.opsApp, config.env.ADMIN_PORT, config.env.ADMIN_HOST, "ADMIN_PORT"),
    );
  } catch (e) {
    // One line naming the setting (runMain: "cannot start: PORT: ...", exit 69), no stack trace.
    for (const [s] of servers) s.close();
    await service.close();
    throw e;
  }
  const [[server, info], [, opsInfo]] = servers as [[Server, AddressInfo], [Server, AddressInfo]];
  const ledger = service.ledger
    ? (await service.ledger).db.description
    : config.mode === "acceptance"
      ? "none (acceptance mode)"
      : "off (LEDGER=off)";
  const opsUrl = slot ? (process.env[PRIMARY_OPS_URL_ENV] ?? urlOf(opsInfo)) : urlOf(opsInfo);
  const workersLine = slot
    ? `${Number(process.env.WORKERS) || "?"} (node:cluster; primary pid ${process.ppid})`
    : "1 (this process)";
  // On stderr: stdout carries the JSON log lines only (a log shipper parses every line of it).
  if (slot <= 1) process.stderr.write(banner(service, urlOf(info), opsUrl, ledger, workersLine, dotEnv));
  log.info(
    {
      port: info.port,
      adminPort: opsInfo.port,
      mode: config.mode,
      maker: service.signer.publicKey.toBase58(),
    },
    "listening",
  );
  server.keepAliveTimeout = OPERATOR_KEEP_ALIVE_MS;

  // SIGTERM/SIGINT: drain (/ready 503, Connection: close), finish what is in flight, exit 0; a second
  // signal or SHUTDOWN_GRACE_MS exits 1 naming what was cut (src/http/shutdown.ts).
  const shutdown = new GracefulShutdown({
    servers: servers.map(([s]) => s),
    log,
    drainMs: config.env.SHUTDOWN_DRAIN_MS,
    graceMs: config.env.SHUTDOWN_GRACE_MS,
    onDrain: () => {
      service.lifecycle.draining = true;
    },
    closeService: () => service.close(),
    pendingWork: () => ({ fillsTracked: service.swapPorts?.confirmations.size ?? 0 }),
  });
  if (slot) workerIpc(shutdown).listening(opsInfo.port);
  else shutdown.installSignalHandlers();
  return shutdown.done;
}

// A worker's reason for not starting is printed once, by the primary (src/http/cluster.ts).
runMain(cluster.isWorker ? () => main().catch(reportFatalToPrimary) : main);
