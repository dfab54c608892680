/**
 * The fill ledger: opened and migrated before serving (a wrong DATABASE_URL stops the start; the
 * embedded PGlite runs on this thread, so it opens now, not while requests are served), then, once
 * the swap path's journal exists, the writer that drains its outbox into the ledger and the markouts
 * of landed fills (with the toxic-flow flagger when toxicity is on).
 */
import type { Ledger } from "../ledger/ledger.ts";
import { MarkoutTracker } from "../ledger/markouts.ts";
import { LedgerWriter } from "../ledger/writer.ts";
import { ToxicFlagger } from "../toxicity/flagger.ts";
import type { WiredHealth } from "./health.ts";
import { owned, type Wiring } from "./options.ts";
import type { ConfiguredParts } from "./parts.ts";
import type { WiredKeys } from "./signer.ts";
import { openStartLedger } from "./startup-checks.ts";
import type { WiredState } from "./state.ts";
import type { SwapPorts } from "./swap-ports.ts";

/** The ledger, or none (LEDGER=off, acceptance mode). */
export async function wireLedger(w: Wiring): Promise<{ ledger: Promise<Ledger> | undefined }> {
  if (w.given.ledger) return { ledger: Promise.resolve(w.given.ledger) };
  const opened = await openStartLedger(w.config, w.startTimeoutMs);
  if (!opened) return { ledger: undefined };
  w.closers.push(() => opened.db.close());
  w.log.info({ ledger: opened.db.description }, "fill ledger open");
  return { ledger: Promise.resolve(opened) };
}

export interface WiredRecords {
  markouts: MarkoutTracker;
  writer: LedgerWriter;
}

/** The ledger's writer and the markouts, over the swap path's journal. */
export async function wireRecords(
  w: Wiring,
  ledger: Promise<Ledger>,
  ports: SwapPorts,
  deps: { parts: ConfiguredParts; keys: WiredKeys; state: WiredState; health: WiredHealth },
): Promise<WiredRecords> {
  const { config, given, metrics, log, now } = w;
  const { takers } = deps.state;
  const markouts = new MarkoutTracker({
    config,
    priceSources: deps.parts.priceSources,
    journal: ports.journal,
    metrics,
    log,
    now,
    ...(given.markoutHorizons ? { horizons: given.markoutHorizons } : {}),
    ...(given.markoutSampleMs ? { sampleMs: given.markoutSampleMs } : {}),
    ...(takers
      ? { judge: new ToxicFlagger({ config: config.file.toxicity, takers, ledger, metrics, log, now }) }
      : {}),
  });
  markouts.start();
  owned(w, markouts);
  // Fills landed before a restart whose horizons are not all in the ledger: take the rest.
  const resumed = await markouts.resume((await ledger).db).catch((err: unknown) => {
    log.warn({ err }, "markouts: could not read the ledger's unfinished fills; their horizons are lost");
    return 0;
  });
  if (resumed) log.info({ fills: resumed }, "markouts resumed from the ledger");
  const writer = new LedgerWriter({
    journal: ports.journal,
    ledger,
    metrics,
    log,
    stamp: { mode: config.mode, maker: deps.keys.signer.publicKey.toBase58() },
    ...(deps.health.ledger ? { health: deps.health.ledger } : {}),
    ...given.ledgerWriter,
  });
  writer.start();
  w.closers.push(() => writer.stop());
  return { markouts, writer };
}
