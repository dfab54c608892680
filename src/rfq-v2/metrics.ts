/** The level stream's metrics, registered in the service's registry beside the webhook's. */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export function rfqV2Metrics(registry: Registry) {
  const registers = [registry];
  const m = {
    connected: new Gauge({
      name: "rfq_v2_connected",
      help: "1 while both RFQ v2 streams are open",
      registers,
    }),
    sequence: new Gauge({
      name: "rfq_v2_sequence",
      help: "Sequence number of the last level set sent",
      registers,
    }),
    lastAckSeconds: new Gauge({
      name: "rfq_v2_last_acknowledged_timestamp_seconds",
      help: "When the operator last answered a level set NEW or UPDATED (Unix seconds)",
      registers,
    }),
    levelSets: new Counter({
      name: "rfq_v2_level_sets_total",
      help: "Level sets sent, by pair",
      labelNames: ["pair"],
      registers,
    }),
    updates: new Counter({
      name: "rfq_v2_quote_updates_total",
      help: "Answers to level sets, by type (NEW, UPDATED, EXPIRED, REJECTED, HEARTBEAT)",
      labelNames: ["type"],
      registers,
    }),
    withdrawn: new Counter({
      name: "rfq_v2_withdrawals_total",
      help: "Pairs withdrawn from the stream, by reason (PAUSED, PAIR_DISABLED, PRICE_STALE, ...)",
      labelNames: ["pair", "reason"],
      registers,
    }),
    swaps: new Counter({
      name: "rfq_v2_swaps_total",
      help: "Swaps offered, by outcome: signed, or the refusal's code",
      labelNames: ["outcome"],
      registers,
    }),
    confirmed: new Counter({
      name: "rfq_v2_confirmed_total",
      help: "Co-signed swaps the operator confirmed landed (TRANSACTION_CONFIRMED)",
      registers,
    }),
    lookupResolutions: new Counter({
      name: "rfq_v2_lookup_resolutions_total",
      help: "Swaps whose lookup tables were resolved, by outcome: resolved, or the refusal's code",
      labelNames: ["outcome"],
      registers,
    }),
    lookupTables: new Counter({
      name: "rfq_v2_lookup_tables_total",
      help: "Lookup tables a swap loaded from, by where they were read: cache or chain",
      labelNames: ["source"],
      registers,
    }),
    lookupSeconds: new Histogram({
      name: "rfq_v2_lookup_resolution_seconds",
      help: "Time to resolve a swap's lookup tables (chain reads included), seconds",
      buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2],
      registers,
    }),
    reconnects: new Counter({
      name: "rfq_v2_reconnects_total",
      help: "Times the RFQ v2 streams were lost and reconnected",
      registers,
    }),
  };
  for (const t of ["NEW", "UPDATED", "EXPIRED", "REJECTED", "HEARTBEAT"]) m.updates.inc({ type: t }, 0);
  m.swaps.inc({ outcome: "signed" }, 0);
  m.lookupResolutions.inc({ outcome: "resolved" }, 0);
  for (const source of ["cache", "chain"]) m.lookupTables.inc({ source }, 0);
  return m;
}
export type RfqV2Metrics = ReturnType<typeof rfqV2Metrics>;
