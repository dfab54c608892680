/**
 * Whether the swap path can fill right now (src/health/): what a fill needs beyond this process, the
 * RPC (a remote chain), the signer service, the ledger's database and, for an issued token's bundled
 * fill, the block engine, each watched on the swap path's
 * own calls and probed when idle. The quote path declines (a fast 404 naming the dependency) while one
 * is failing. Wall time, not the service clock: probe intervals and timeouts are real time (tests move
 * the clock).
 */
import { JitoBundleClient } from "../chain/bundle-jito.ts";
import type { MadeBundlePort } from "../chain/make.ts";
import {
  type Dependency,
  FillPathHealth,
  watchBundles,
  watchChain,
  watchSigner,
} from "../health/fill-path.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { RemoteSigner } from "../signing/remote.ts";
import type { WiredChain } from "./chain.ts";
import { owned, type Wiring } from "./options.ts";
import type { WiredKeys } from "./signer.ts";

/**
 * A fill dependency's probe slower than this is a failure: a healthy RPC, signer or database answers
 * in tens of ms, and a call slower than a second leaves a fill too little of its swap budget.
 */
const FILL_PROBE_TIMEOUT_MS = 1_000;

export interface WiredHealth {
  fillPath: FillPathHealth;
  /** The chain and the signer the swap path uses: watched, so that their failures count. */
  chain: WiredChain["chain"];
  signer: WiredKeys["signer"];
  /** The bundle port the issuance uses: a block engine's client watched, so that its failures count. */
  bundles: MadeBundlePort;
  /** The ledger database's dependency, once the ledger is open (a PostgreSQL server only). */
  ledger: Dependency | undefined;
}

export function wireHealth(w: Wiring, keys: WiredKeys, chain: WiredChain): WiredHealth {
  const fillPath = owned(w, new FillPathHealth({ log: w.log }));
  const rpc =
    !w.given.chain && w.config.env.RPC_URL
      ? fillPath.track({
          name: "rpc",
          what: `the RPC (${chain.note})`,
          timeoutMs: FILL_PROBE_TIMEOUT_MS,
          probe: () => chain.chain.getLatestBlockhash(),
        })
      : undefined;
  const signer = keys.signer;
  const remote =
    signer instanceof RemoteSigner
      ? fillPath.track({
          name: "signer",
          what: `the signer service (${signer.description})`,
          timeoutMs: FILL_PROBE_TIMEOUT_MS,
          probe: () => signer.keys(),
        })
      : undefined;
  // A remote block engine only (the local one runs in this process); the RPC's thresholds: another remote JSON-RPC endpoint.
  const made = chain.bundles;
  const engine =
    made.port instanceof JitoBundleClient
      ? fillPath.track({
          name: "bundle",
          what: `the bundle engine (${made.port.description})`,
          timeoutMs: FILL_PROBE_TIMEOUT_MS,
          probe: () => (made.port as JitoBundleClient).probe(),
          bundledOnly: true,
        })
      : undefined;
  return {
    fillPath,
    chain: rpc ? watchChain(chain.chain, rpc) : chain.chain,
    signer: remote ? watchSigner(signer, remote) : signer,
    bundles: engine && made.port ? { port: watchBundles(made.port, engine), note: made.note } : made,
    ledger: undefined,
  };
}

/** Tracks the ledger's database: a PostgreSQL server can be down while this process runs (PGlite cannot). */
export async function trackLedger(health: WiredHealth, ledger: Promise<Ledger> | undefined): Promise<void> {
  const db = ledger ? (await ledger).db : undefined;
  if (db?.kind !== "postgres") return;
  health.ledger = health.fillPath.track({
    name: "ledger",
    what: `the fill ledger (${db.description})`,
    timeoutMs: FILL_PROBE_TIMEOUT_MS,
    probe: () => db.query("SELECT 1"),
  });
}
