/**
 * The webhook's swap channel: the executor that checks a fill against its quote, co-signs and sends
 * it (src/wiring/swap-ports.ts builds its ports), with the ledger's records of what it decided and
 * what landed; or, in acceptance mode, the canned answers of src/acceptance/.
 */
import { AcceptanceSwapHandler } from "../acceptance/swap.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { SwapHandler } from "../swap/handler.ts";
import type { WiredChain } from "./chain.ts";
import type { WiredHealth } from "./health.ts";
import { type WiredRecords, wireRecords } from "./ledger.ts";
import type { Wiring } from "./options.ts";
import type { ConfiguredParts } from "./parts.ts";
import type { WiredKeys } from "./signer.ts";
import type { WiredState } from "./state.ts";
import { createSwapPorts, type SwapPorts } from "./swap-ports.ts";

export interface WiredSwap {
  swap: SwapHandler;
  /** The swap executor and its background parts (absent in acceptance mode). */
  swapPorts: SwapPorts | undefined;
  /** The ledger's writer and the markouts (with a ledger). */
  records: WiredRecords | undefined;
}

export async function wireSwap(
  w: Wiring,
  ledger: Promise<Ledger> | undefined,
  deps: {
    parts: ConfiguredParts;
    keys: WiredKeys;
    chain: WiredChain;
    state: WiredState;
    health: WiredHealth;
  },
): Promise<WiredSwap> {
  if (w.config.mode === "acceptance")
    return { swap: new AcceptanceSwapHandler(), swapPorts: undefined, records: undefined };
  const { store, inventory, takers, issuance } = deps.state;
  let records: WiredRecords | undefined;
  const ports = createSwapPorts({
    config: w.config,
    log: w.log,
    metrics: w.metrics,
    ports: {
      store,
      chain: deps.health.chain,
      inventory,
      signer: deps.health.signer,
      ...(takers ? { takers } : {}),
      ...(issuance ? { issuance } : {}),
      // The markouts (wired below, with the ledger) give the mid journaled with each fill sent.
      mids: { liveMid: (pair) => records?.markouts.liveMid(pair) },
    },
    ...(w.redis ? { redis: w.redis } : {}),
    journalPrefix: w.keys.swap,
    now: w.now,
    ...(w.given.swap ? { tuning: w.given.swap } : {}),
    ledger: ledger !== undefined,
    // From its send, not its settlement: it lands within seconds of the send, while a process
    // restarted meanwhile settles it minutes later.
    onLanded: (fill) => {
      if (fill.trade) records?.markouts.onLanded(fill.signature, fill.quoteId, fill.trade, fill.sentAtMs);
    },
  });
  await ports.start();
  w.closers.push(() => ports.close());
  if (ledger) records = await wireRecords(w, ledger, ports, deps);
  return { swap: ports.executor, swapPorts: ports, records };
}
