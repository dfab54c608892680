/**
 * Entry point: `npm start`. Parses configuration (fatal, naming the key, on any problem), composes the
 * ports (a dependency that cannot be reached stops the start with one line naming its setting), serves,
 * and shuts down gracefully on SIGINT/SIGTERM (src/http/shutdown.ts).
 */
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { loadConfig } from "../config/load.ts";
import { runMain } from "./cli/run.ts";
import { composeService, type Service } from "./compose.ts";
import { GracefulShutdown } from "./http/shutdown.ts";

function banner(service: Service, url: string): string {
  const { config, signer } = service;
  const symbols = (mints: string[]) =>
    mints.map((m) => `${config.tokensByMint.get(m)?.symbol ?? "?"} ${m}`).join("\n    ");
  const lines = [
    "",
    `RFQ maker webhook listening on ${url}${config.file.basePath}`,
    `  mode:        ${config.mode}${config.mode === "paper" ? " (PAPER SETUP: local chain, static prices, nothing real)" : ""}`,
    `  maker:       ${signer.publicKey.toBase58()}${service.keyCreated ? " (generated now)" : ""}`,
    `  config:      ${config.configPath}`,
    `  quote store: ${service.redis ? "redis" : "in-memory (single instance)"}`,
    `  chain:       ${service.chain.description}`,
    `  api key:     ${config.env.API_KEY ? "required (X-API-KEY)" : "none"}`,
    `  /tokens:\n    ${symbols(service.tokenLists.tokens()) || "(none)"}`,
    `  /permissioned-tokens:\n    ${symbols(service.tokenLists.permissionedTokens()) || "(none)"}`,
  ];
  if (config.mode === "acceptance") {
    lines.push(
      "",
      "!!! ACCEPTANCE_MODE=1: /swap gives the operator acceptance suite's CANNED answers.",
      "!!! Nothing is validated, signed or sent. Never register this instance for real traffic.",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Resolves with the exit code once the server has stopped (it runs until SIGINT/SIGTERM). */
async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const service = await composeService(config, {});
  const { log } = service;
  if (config.mode === "acceptance")
    log.warn("ACCEPTANCE_MODE=1: canned /swap answers; never use for real traffic");

  const server = serve(
    { fetch: service.app.fetch, port: config.env.PORT, hostname: config.env.HOST },
    (info) => {
      const host = info.address.includes(":") ? `[${info.address}]` : info.address;
      process.stdout.write(banner(service, `http://${host}:${info.port}`));
      log.info(
        { port: info.port, mode: config.mode, maker: service.signer.publicKey.toBase58() },
        "listening",
      );
    },
  ) as Server;
  server.once("error", (e: NodeJS.ErrnoException) => {
    // EADDRINUSE and friends: say which address, then stop like any other fatal start-up problem.
    log.fatal({ err: e }, `cannot listen on ${config.env.HOST}:${config.env.PORT}: ${e.code ?? e.message}`);
    void service.close().finally(() => process.exit(1));
  });
  // The operator keeps connections alive across quotes; do not let Node's defaults cut them short.
  server.keepAliveTimeout = 65_000;

  // SIGTERM/SIGINT: drain (/ready 503, Connection: close), finish what is in flight, exit 0; a second
  // signal or SHUTDOWN_GRACE_MS exits 1 naming what was cut (src/http/shutdown.ts).
  const shutdown = new GracefulShutdown({
    server,
    log,
    drainMs: config.env.SHUTDOWN_DRAIN_MS,
    graceMs: config.env.SHUTDOWN_GRACE_MS,
    onDrain: () => {
      service.lifecycle.draining = true;
    },
    closeService: () => service.close(),
    pendingWork: () => ({ fillsTracked: service.swapPorts?.confirmations.size ?? 0 }),
  });
  shutdown.installSignalHandlers();
  return shutdown.done;
}

runMain(main);
