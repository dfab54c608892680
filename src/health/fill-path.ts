/**
 * Whether the swap path can fill right now, for the quote path: a quote the maker cannot fill costs
 * more than no quote (the operator counts refused swaps against the maker's fill rate and suspends it
 * under 95 %), so while a dependency of the fill is failing, quotes that depend on it are fast 404s
 * with a named reason instead of prices.
 *
 * Each dependency (the RPC, the signer service, the ledger database, the bundle engine) is one
 * `Dependency`, fed twice:
 *
 *  - by the swap path's own calls, through the port wrappers below (`watchChain`, `watchSigner`,
 *    `watchBundles`) and the ledger writer: an answer is a success, a call that could not be answered
 *    a failure;
 *  - by its own probe when nothing else fed it for a while (idle), so that an outage is seen without
 *    swap traffic and a recovery is seen although no quote (hence no swap) goes out while it is down.
 *
 * Most dependencies are on every fill's path; the bundle engine only on a bundled fill's (an issued
 * token the maker mints or burns with the fill). `refusal({ bundled })` is the quote path's question
 * (src/quote/service.ts, the RFQ v2 stream): in memory, a few comparisons. Entering and leaving a
 * failure is logged once each; the state is on /ready (`readiness()` for every fill's dependencies,
 * a condition for the bundle engine's), the refusals in rfq_no_quote_total{reason}.
 */
import type { BundlePort } from "../chain/bundle.ts";
import type { Blockhash, Chain, SendOptions, SimulationResult, StatusHint } from "../chain/interface.ts";
import type { Conditions } from "../observability/conditions.ts";
import type { Logger } from "../observability/logger.ts";
import { QuoteDeclineCode, type Refused } from "../refusal/codes.ts";
import { type Signer, SignerRefusal } from "../signing/port.ts";

// The thresholds, each with its reason:
/** One failed call is a blip (a reset connection, one slow answer); two in a row are an outage. */
export const TRIP_AFTER_FAILURES = 2;
/** Two answers in a row, `FAILING_PROBE_MS` apart, tell a dependency that is back from one lucky call. */
export const TRUST_AFTER_SUCCESSES = 2;
/** Probed this often while failing: two successes then take ~300 ms, inside the 1 s recovery promise. */
export const FAILING_PROBE_MS = 150;
/** Probed when nothing fed it for this long: an outage is seen within ~1 s without swap traffic. */
export const IDLE_PROBE_MS = 400;

/** The dependencies of a fill, and the no-quote code each gives while it fails. */
const FILL_PATH_CODES = {
  rpc: QuoteDeclineCode.RPC_UNAVAILABLE,
  signer: QuoteDeclineCode.SIGNER_UNAVAILABLE,
  ledger: QuoteDeclineCode.LEDGER_UNAVAILABLE,
  bundle: QuoteDeclineCode.BUNDLE_UNAVAILABLE,
} as const;
export type FillDependency = keyof typeof FILL_PATH_CODES;
export type FillPathCode = (typeof FILL_PATH_CODES)[FillDependency];

export interface DependencyOptions {
  name: FillDependency;
  /** Resolves when the dependency answered; throws when it did not. Bounded by `timeoutMs`. */
  probe: () => Promise<unknown>;
  /** A probe slower than this is a failure (ms). */
  timeoutMs: number;
  /** What this dependency is, for the 404's message ("the RPC http://..."). */
  what: string;
  /** Only a bundled fill needs it (the bundle engine): other quotes are answered while it fails. */
  bundledOnly?: boolean;
}

/** The fill path's answer for a quote: undefined when it can be filled. */
export type FillPathRefusal = Refused<FillPathCode>;

/**
 * Feeds one dependency: the wrappers and the ledger writer call these, with when the call started
 * (default: now). An outcome is ignored when a call started later has already reported the other one:
 * a request stuck since before the dependency came back, timing out after the fresh ones answered,
 * says nothing about it now.
 */
export interface HealthFeed {
  ok(startedAtMs?: number): void;
  fail(error: unknown, startedAtMs?: number): void;
}

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One dependency's state: failing or not, and the run of outcomes that changes it. */
export class Dependency implements HealthFeed {
  #failing = true;
  #everUp = false;
  #failures = 0;
  #successes = 0;
  #lastFedMs = Number.NEGATIVE_INFINITY;
  #lastProbeMs = Number.NEGATIVE_INFINITY;
  #downSinceMs: number;
  #lastError = "not probed yet";
  /** When the latest-started call that answered, and the latest-started one that failed, started. */
  #okStartMs = Number.NEGATIVE_INFINITY;
  #failStartMs = Number.NEGATIVE_INFINITY;
  #refusal: FillPathRefusal;

  constructor(
    readonly opts: DependencyOptions,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    this.#downSinceMs = now();
    this.#refusal = this.#refusalOf();
  }

  get failing(): boolean {
    return this.#failing;
  }

  /** The quote's 404 while failing (made once per change, not per quote). */
  get refusal(): FillPathRefusal | undefined {
    return this.#failing ? this.#refusal : undefined;
  }

  ok(startedAtMs: number = this.now()): void {
    this.#lastFedMs = this.now();
    if (startedAtMs < this.#failStartMs) return;
    this.#okStartMs = startedAtMs;
    this.#failures = 0;
    if (!this.#failing) return;
    this.#successes++;
    // Never up yet (the start): the first answer is enough, there is no outage to be wary of.
    if (this.#successes >= (this.#everUp ? TRUST_AFTER_SUCCESSES : 1)) {
      this.#failing = false;
      this.#successes = 0;
      if (this.#everUp) {
        this.log.info(
          { dependency: this.opts.name, downMs: this.now() - this.#downSinceMs },
          "fill path: dependency answering again, quoting resumes",
        );
      }
      this.#everUp = true;
    }
  }

  fail(error: unknown, startedAtMs: number = this.now()): void {
    this.#lastFedMs = this.now();
    if (startedAtMs < this.#okStartMs) return;
    this.#failStartMs = startedAtMs;
    this.#successes = 0;
    this.#lastError = describe(error);
    if (this.#failing) {
      this.#refusal = this.#refusalOf();
      return;
    }
    this.#failures++;
    if (this.#failures >= TRIP_AFTER_FAILURES) {
      this.#failing = true;
      this.#failures = 0;
      this.#downSinceMs = this.now();
      this.#refusal = this.#refusalOf();
      this.log.warn(
        { dependency: this.opts.name, code: FILL_PATH_CODES[this.opts.name], error: this.#lastError },
        "fill path: dependency failing, its quotes are 404s until it answers again",
      );
    }
  }

  /** Runs the probe if one is due now; returns its outcome's promise (tests await it). */
  tick(): Promise<void> | undefined {
    const at = this.now();
    const due = this.#failing
      ? at - this.#lastProbeMs >= FAILING_PROBE_MS
      : at - Math.max(this.#lastFedMs, this.#lastProbeMs) >= IDLE_PROBE_MS;
    if (!due) return undefined;
    return this.probe();
  }

  /** One probe, bounded by the dependency's timeout; its outcome feeds the state. */
  async probe(): Promise<void> {
    const started = this.now();
    this.#lastProbeMs = started;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.opts.timeoutMs} ms`)),
        this.opts.timeoutMs,
      );
    });
    try {
      await Promise.race([this.opts.probe(), timeout]);
      this.ok(started);
    } catch (e) {
      this.fail(e, started);
    } finally {
      clearTimeout(timer);
    }
  }

  #refusalOf(): FillPathRefusal {
    return {
      ok: false,
      code: FILL_PATH_CODES[this.opts.name],
      context: `${FILL_PATH_CODES[this.opts.name]}: ${this.opts.what} is not answering (${this.#lastError}): a quote could not be filled`,
    };
  }
}

export interface FillPathHealthOptions {
  log: Logger;
  /** Wall time (default Date.now; the port wrappers stamp their calls with Date.now too). */
  now?: () => number;
  /** Interval of the probe loop's ticks (ms, 50): each tick probes what is due. */
  tickMs?: number;
}

/** The fill path's dependencies, probed when idle, asked by the quote path. */
export class FillPathHealth {
  readonly #deps: Dependency[] = [];
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #tickMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: FillPathHealthOptions) {
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#tickMs = opts.tickMs ?? 50;
  }

  /** Tracks one dependency; the returned feed is what its port wrapper reports to. */
  track(opts: DependencyOptions): Dependency {
    const dep = new Dependency(opts, this.#log, this.#now);
    this.#deps.push(dep);
    return dep;
  }

  /**
   * The quote path's question: undefined when a quote can be filled, else the first failing
   * dependency's 404. `bundled`: the fill goes out in a bundle, so the bundle engine counts too.
   */
  refusal(opts: { bundled?: boolean } = {}): FillPathRefusal | undefined {
    for (const d of this.#deps) {
      if (d.opts.bundledOnly && !opts.bundled) continue;
      const r = d.refusal;
      if (r) return r;
    }
    return undefined;
  }

  /** /ready's entries for every fill's dependencies: `fill.<dependency>`, false while it fails. */
  readiness(): [name: string, probe: () => Promise<boolean>][] {
    return this.#deps
      .filter((d) => !d.opts.bundledOnly)
      .map((d) => [`fill.${d.opts.name}`, async () => !d.failing]);
  }

  /**
   * The bundle engine's state as the condition `fill.<dependency>` on /ready: listed while it fails,
   * not blocking (the instance still fills every pair but the bundled ones).
   */
  report(conditions: Pick<Conditions, "watch" | "set">): void {
    for (const d of this.#deps.filter((x) => x.opts.bundledOnly)) {
      conditions.watch(() => {
        const r = d.refusal;
        conditions.set(`fill.${d.opts.name}`, r ? { detail: r.context, blocksReady: false } : undefined);
      });
    }
  }

  /** Probes every dependency once (awaited: the state is known before serving), then keeps probing. */
  async start(): Promise<void> {
    await Promise.all(this.#deps.map((d) => d.probe()));
    for (const d of this.#deps) {
      if (d.failing) {
        this.#log.warn(
          { dependency: d.opts.name, code: FILL_PATH_CODES[d.opts.name] },
          "fill path: dependency not answering at start, its quotes are 404s until it does",
        );
      }
    }
    const loop = () => {
      for (const d of this.#deps) void d.tick();
      this.#timer = setTimeout(loop, this.#tickMs);
      this.#timer.unref();
    };
    loop();
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** A chain port that reports whether the RPC answered each of the swap path's calls. */
export function watchChain(chain: Chain, feed: HealthFeed): Chain {
  const seen = async <T>(call: Promise<T>, failed?: (r: T) => string | undefined): Promise<T> => {
    const started = Date.now();
    try {
      const r = await call;
      const why = failed?.(r);
      if (why) feed.fail(why, started);
      else feed.ok(started);
      return r;
    } catch (e) {
      feed.fail(e, started);
      throw e;
    }
  };
  const watched: Chain = {
    description: chain.description,
    getLatestBlockhash: (): Promise<Blockhash> => seen(chain.getLatestBlockhash()),
    getBlockHeight: () => seen(chain.getBlockHeight()),
    isBlockhashValid: (b) => seen(chain.isBlockhashValid(b)),
    preflight: (tx): Promise<SimulationResult> => seen(chain.preflight(tx)),
    getAccounts: (keys) => seen(chain.getAccounts(keys)),
    getMinimumBalanceForRentExemption: (n) => chain.getMinimumBalanceForRentExemption(n),
    getUnixTimestamp: () => chain.getUnixTimestamp(),
    // A node that had the transaction and said no answered; one never reached, or lost, did not.
    send: (tx, opts?: SendOptions) =>
      seen(chain.send(tx, opts), (r) =>
        !r.ok && r.reached !== "refused" && r.reached ? r.error : undefined,
      ),
    getSignatureStatus: (sig, hint?: StatusHint) => chain.getSignatureStatus(sig, hint),
    ping: () => chain.ping(),
    close: () => chain.close(),
  };
  const unsigned = chain.simulateUnsigned?.bind(chain);
  if (unsigned) watched.simulateUnsigned = (tx, watch) => seen(unsigned(tx, watch));
  return watched;
}

/** A signer that reports whether the signer service answered: a refusal is an answer. */
export function watchSigner(signer: Signer, feed: HealthFeed): Signer {
  return {
    get publicKey() {
      return signer.publicKey;
    },
    async sign(tx, context) {
      const started = Date.now();
      try {
        await signer.sign(tx, context);
        feed.ok(started);
      } catch (e) {
        if (e instanceof SignerRefusal) feed.ok(started);
        else feed.fail(e, started);
        throw e;
      }
    },
  };
}

/**
 * A bundle port that reports whether the block engine answered: a bundle taken or refused is an
 * answer; one that reached no engine, or whose fate is open, is not. Tip accounts served from the
 * client's cache say nothing about the engine, so only a failed listing counts.
 */
export function watchBundles(port: BundlePort, feed: HealthFeed): BundlePort {
  return {
    description: port.description,
    async getTipAccounts() {
      const started = Date.now();
      try {
        return await port.getTipAccounts();
      } catch (e) {
        feed.fail(e, started);
        throw e;
      }
    },
    async sendBundle(txs, opts) {
      const started = Date.now();
      const r = await port.sendBundle(txs, opts);
      if (r.ok || r.reached === "refused") feed.ok(started);
      else feed.fail(r.error, started);
      return r;
    },
    // A status left unknown may be the chain's blockhash check failing: the probe judges the engine.
    getBundleStatus: (bundleId, hint) => port.getBundleStatus(bundleId, hint),
    close: () => port.close(),
  };
}
