/**
 * `npm run signer`: the signer service as its own process (src/signer/service/). Holds the maker's key,
 * listens on SIGNER_SOCKET and/or SIGNER_TLS_LISTEN, signs only fills its own policy allows; stops on
 * SIGINT/SIGTERM. Settings: docs/signer.md and config/.env.example.
 */
// First: an older Node.js is refused with one line before anything else runs.
import "../cli/node-version.ts";
import { parseArgs } from "../cli/args.ts";
import { runMain } from "../cli/run.ts";
import { startSignerService } from "./service/index.ts";

const USAGE = {
  command: "npm run signer",
  summary:
    "The signer service: holds the maker's key (SIGNER_KEYPAIR) and co-signs fills for webhooks started\n" +
    "with SIGNER_URL, after checking each one itself (fill rules against the quote it reads from Redis,\n" +
    "never signed before, within SIGNER_LIMITS), and their RFQ v2 swaps (the route's structure, the\n" +
    "swap's own levels against its band). Listens on SIGNER_SOCKET (Unix, mode 0600) and/or\n" +
    "SIGNER_TLS_LISTEN (mutual TLS). See docs/signer.md and config/.env.example.",
  flags: {},
} as const;

async function main(): Promise<number> {
  parseArgs(process.argv.slice(2), USAGE);
  const service = await startSignerService(process.env);
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      service.log.info({ signal }, "signer stopping");
      void service.close().then(() => resolve(0));
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
}

runMain(main);
