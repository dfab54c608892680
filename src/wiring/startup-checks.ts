/**
 * What `npm start` checks before it serves, written once for the service (src/compose.ts) and
 * `npm run doctor` (src/ops/doctor.ts), so that doctor passes only what the start accepts.
 * The fill ledger: reached and migrated (DATABASE_URL, else the embedded one in DATA_DIR/ledger);
 * none in acceptance mode or with LEDGER=off.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import type { Config } from "../../config/load.ts";
import { describeCause, StartupError } from "../errors/startup.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { ledgerLocation, openLedger } from "../ledger/open.ts";
import { embeddedLedgerHolder } from "../ledger/pglite.ts";

/** How long start-up waits for each dependency (Redis, the RPC, the ledger) before giving up (ms). */
export const START_TIMEOUT_MS = 5_000;

/** Where the start opens the ledger; undefined when it opens none. */
function startLedgerLocation(config: Config): ReturnType<typeof ledgerLocation> {
  return config.mode === "acceptance" ? undefined : ledgerLocation(config);
}

/** Opens and migrates the ledger as the start does; throws the StartupError that stops the start. */
export async function openStartLedger(
  config: Config,
  timeoutMs = START_TIMEOUT_MS,
): Promise<Ledger | undefined> {
  const where = startLedgerLocation(config);
  return where ? openLedger(where, timeoutMs) : undefined;
}

export type StartCheck = { ok: true; detail: string } | { ok: false; problem: string; setting: string };

/**
 * The start's ledger check without keeping it open: the embedded ledger a running webhook holds is
 * that webhook's (one process at a time), and one not created yet is created by the first start (its
 * folder must be writable).
 */
export async function checkStartLedger(config: Config, timeoutMs = START_TIMEOUT_MS): Promise<StartCheck> {
  const where = startLedgerLocation(config);
  if (!where)
    return { ok: true, detail: config.mode === "acceptance" ? "none (acceptance mode)" : "off (LEDGER=off)" };
  if (where.kind === "pglite") {
    const holder = embeddedLedgerHolder(where.dir);
    if (holder !== undefined)
      return { ok: true, detail: `embedded, ${where.dir}: open in process ${holder} (the webhook)` };
    // A new one takes seconds to create: the start creates it where it can write.
    if (!existsSync(where.dir)) {
      const parent = nearestExisting(dirname(where.dir));
      try {
        accessSync(parent, constants.W_OK);
        return { ok: true, detail: `embedded, ${where.dir}: created by the first start` };
      } catch (e) {
        return {
          ok: false,
          setting: "DATA_DIR",
          problem: `DATA_DIR: ${where.dir}: cannot create the embedded ledger: ${describeCause(e)}`,
        };
      }
    }
  }
  try {
    const ledger = await openLedger(where, timeoutMs);
    const detail = `${ledger.db.description}: reached, migrations current`;
    await ledger.db.close();
    return { ok: true, detail };
  } catch (e) {
    if (e instanceof StartupError) return { ok: false, problem: e.message, setting: e.setting };
    throw e;
  }
}

function nearestExisting(dir: string): string {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}
