/** The RFQ v2 channel's settings from the environment, or why they cannot start it. */
import { ConfigError } from "../../config/load.ts";
import type { EnvConfig } from "../../config/schema.ts";
import type { RfqV2Settings } from "./service.ts";

/**
 * Undefined when RFQ_V2_URL is unset (the channel is off); throws naming what is missing. With
 * SIGNER_URL the swaps are signed by the signer service, which judges each one itself.
 */
export function rfqV2Settings(
  env: Partial<Pick<EnvConfig, "RFQ_V2_URL" | "RFQ_V2_MAKER_ID" | "RFQ_V2_AUTH_TOKEN">>,
  pairs: readonly string[],
): RfqV2Settings | undefined {
  if (!env.RFQ_V2_URL) return undefined;
  const missing = (["RFQ_V2_MAKER_ID", "RFQ_V2_AUTH_TOKEN"] as const).filter((n) => !env[n]);
  if (missing.length) throw new ConfigError(`env: ${missing.join(", ")}: required when RFQ_V2_URL is set`);
  if (pairs.length === 0)
    throw new ConfigError(
      'rfqV2.pairs: empty while RFQ_V2_URL is set: name the pairs to stream (e.g. ["SOL/USDC"])',
    );
  const { RFQ_V2_MAKER_ID: makerId, RFQ_V2_AUTH_TOKEN: authToken } = env;
  if (!makerId || !authToken) throw new Error("unreachable: both checked above");
  return { url: env.RFQ_V2_URL, makerId, authToken };
}
