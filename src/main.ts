/**
 * Entry point: `npm start`. Parses configuration (fatal, naming the key, on any problem), composes the
 * ports, serves, and shuts down cleanly on SIGINT/SIGTERM.
 */
import { serve } from "@hono/node-server";
import { loadConfig } from "../config/load.ts";
import { runMain } from "./cli/run.ts";
import { composeService, type Service } from "./compose.ts";

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
  );
  server.once("error", (e: NodeJS.ErrnoException) => {
    // EADDRINUSE and friends: say which address, then stop like any other fatal start-up problem.
    log.fatal({ err: e }, `cannot listen on ${config.env.HOST}:${config.env.PORT}: ${e.code ?? e.message}`);
    void service.close().finally(() => process.exit(1));
  });
  // The operator keeps connections alive across quotes; do not let Node's defaults cut them short.
  if ("keepAliveTimeout" in server) server.keepAliveTimeout = 65_000;

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "shutting down");
      server.close(async () => {
        await service.close();
        resolve(0);
      });
      // In-flight swaps get up to the operator's 25 s to finish before we give up on them.
      setTimeout(() => resolve(1), 25_000).unref();
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
  });
}

runMain(main);
