/**
 * The RFQ v2 channel, when RFQ_V2_URL is set (in one process of the service): the level stream and
 * its swaps, priced by the webhook's book from the same inventory, recorded in the webhook's ledger
 * outbox (one writer drains both) with their markouts in the one tracker. Loaded only when on: gRPC
 * and the service definition cost every other start nothing.
 */
import { ConfigError } from "../../config/load.ts";
import type { QuotingBook } from "../../pricing/book.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { rfqV2Metrics } from "../rfq-v2/metrics.ts";
import type { RfqV2Service } from "../rfq-v2/service.ts";
import { rfqV2Settings } from "../rfq-v2/settings.ts";
import { RemoteSigner } from "../signing/remote.ts";
import type { WiredChain } from "./chain.ts";
import type { WiredHealth } from "./health.ts";
import type { Wiring } from "./options.ts";
import type { WiredKeys } from "./signer.ts";
import type { WiredState } from "./state.ts";
import type { WiredSwap } from "./swap.ts";

export async function wireRfqV2(
  w: Wiring,
  ledger: Promise<Ledger> | undefined,
  deps: {
    book: QuotingBook;
    keys: WiredKeys;
    chain: WiredChain;
    state: WiredState;
    swap: WiredSwap;
    health: WiredHealth;
  },
): Promise<RfqV2Service | undefined> {
  const { config, log, now } = w;
  const settings = w.given.rfqV2 === false ? undefined : rfqV2Settings(config.env, config.file.rfqV2.pairs);
  if (!settings) return undefined;
  const signer = deps.keys.signer;
  const streams = config.file.rfqV2.quoteExpirySeconds;
  // Levels valid longer than the signer signs for would have every swap on their tail refused.
  if (
    signer instanceof RemoteSigner &&
    signer.v2ExpirySeconds !== undefined &&
    streams > signer.v2ExpirySeconds
  )
    throw new ConfigError(
      `rfqV2.quoteExpirySeconds: ${streams} s, longer than the signer service ${signer.description} signs RFQ v2 swaps for (${signer.v2ExpirySeconds} s with its grace): every swap on the levels' tail would be refused as expired; give both the same rfqV2.quoteExpirySeconds`,
    );
  const { RfqV2Service } = await import("../rfq-v2/service.ts");
  const { V2SwapLedger, decidedInLedger } = await import("../rfq-v2/ledger.ts");
  const v2Log = log.child({ channel: "rfq-v2" });
  const { swapPorts, records } = deps.swap;
  const v2Ledger =
    ledger && swapPorts
      ? new V2SwapLedger({
          journal: swapPorts.journal,
          log: v2Log,
          now,
          onLanded: (signature, quoteId, trade, landedAtMs) =>
            records?.markouts.onLanded(signature, quoteId, trade, landedAtMs),
          lookup: async (quoteId) => decidedInLedger((await ledger).db, quoteId),
        })
      : undefined;
  const stream = new RfqV2Service({
    config,
    settings,
    book: deps.book,
    inventory: deps.state.inventory,
    // Watched: a v2 signature the signer service cannot give counts in the fill path's health too.
    signer: deps.health.signer,
    fillPath: deps.health.fillPath,
    chain: deps.chain.chain,
    log: v2Log,
    metrics: rfqV2Metrics(w.metrics.registry),
    controls: deps.state.controls,
    now,
    ...(v2Ledger ? { ledger: v2Ledger } : {}),
    // The rules /swap holds too (src/policy/): one message per id in the same store, the same takers' standing and issuance.
    messages: deps.state.store,
    ...(deps.state.takers ? { takers: deps.state.takers } : {}),
    ...(deps.state.issuance
      ? { issuance: { policies: deps.state.issuance.policies, usage: deps.state.issuance.usage } }
      : {}),
  });
  w.closers.push(async () => stream.close());
  // Not awaited: the webhook serves while the stream connects (and reconnects) on its own.
  void stream.start();
  return stream;
}
