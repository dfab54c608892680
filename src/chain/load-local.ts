/**
 * The paper setup's local chain, loaded on demand. LocalChain runs on LiteSVM, a 13 MB native addon
 * that is a development dependency: production (RPC_URL set) never loads it, and the production image
 * (`npm ci --omit=dev`) does not even contain it. Everything on the production path imports this file,
 * never ./local/index.ts, so the addon is loaded only when a paper setup asks for a local chain.
 */
import { ConfigError } from "../../config/load.ts";
import type { LocalChain } from "./local/index.ts";

export async function loadLocalChain(): Promise<typeof LocalChain> {
  try {
    return (await import("./local/index.ts")).LocalChain;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && /litesvm/.test(String(e))) {
      throw new ConfigError(
        "RPC_URL: unset, so this is the paper setup, whose local chain needs the development dependency " +
          "litesvm, not installed here (npm ci --omit=dev). Set RPC_URL, MAKER_KEYPAIR and REDIS_URL for " +
          "production, or install with `npm ci` for the paper setup.",
      );
    }
    throw e;
  }
}
