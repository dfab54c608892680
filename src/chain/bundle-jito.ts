/**
 * JitoBundleClient: the bundle port (bundle.ts) over a Jito-style block engine's JSON-RPC API, at one
 * or more engine URLs (BUNDLE_URL, comma-separated, like RPC_URL). Each method is POSTed where Jito's
 * own client sends it: `<engine>/api/v1/bundles` (sendBundle), `<engine>/api/v1/getTipAccounts`,
 * `<engine>/api/v1/getInflightBundleStatuses`, `<engine>/api/v1/getBundleStatuses`. A URL's query
 * (e.g. `?uuid=` for an authenticated engine) is kept.
 *
 * - sendBundle: params `[[base64 tx, ...], {"encoding": "base64"}]`, to every engine at once; the first
 *   id an engine answers is the result. When none answers with an id the failure says whether the
 *   bundle reached no engine ("no"), was refused ("refused"), or may have arrived ("unknown", with the
 *   id to look it up by).
 * - getTipAccounts: from the first engine that answers, cached (`tipCacheMs`).
 * - getBundleStatus: `getInflightBundleStatuses` on every engine (Landed anywhere wins, else the first
 *   engine, in order, that knows it: Pending or Failed), then `getBundleStatuses` (landed bundles, with
 *   their `err`); a bundle not landed is "expired" once `hint.blockhash` is no longer valid on the
 *   chain; "unknown" when no engine answered at all (then nothing is known, expired blockhash or not).
 *
 * Expected failures (timeouts, refused connections, error answers) are values naming the engine;
 * getTipAccounts, which has no room for one, throws a BundleEngineUnavailableError.
 */
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import {
  type BundlePort,
  type BundleSendResult,
  type BundleStatus,
  bundleIdOf,
  MAX_BUNDLE_TRANSACTIONS,
} from "./bundle.ts";
import type { Chain, SendOptions, StatusHint } from "./interface.ts";
import { causeCodes, redactUrl, UNREACHED_CODES } from "./rpc.ts";

export interface JitoBundleClientOptions {
  /** Block engine URLs (scheme, host, optional path prefix and query); all are sent to. */
  urls: readonly string[];
  /** The chain, asked whether a bundle's blockhash is still valid. */
  chain: Pick<Chain, "isBlockhashValid">;
  /** Per call, ms (default 5,000). */
  timeoutMs?: number;
  /** How long the tip accounts are cached, ms (default 10 minutes). */
  tipCacheMs?: number;
  /** Injected clock, ms. */
  now?: () => number;
}

/** getTipAccounts could not be answered by any engine. */
class BundleEngineUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleEngineUnavailableError";
  }
}

/** One engine's answer to a call: the result, or why not (and whether the request may have arrived). */
type CallResult =
  | { ok: true; result: unknown }
  | { ok: false; error: string; kind: "unreached" | "refused" | "ambiguous" };

/** The path Jito's own client posts each method to, under `/api/v1`. */
const METHOD_PATH: Record<string, string> = {
  sendBundle: "bundles",
  getTipAccounts: "getTipAccounts",
  getInflightBundleStatuses: "getInflightBundleStatuses",
  getBundleStatuses: "getBundleStatuses",
};

class Engine {
  readonly name: string;
  private readonly base: URL;
  /** The URL's path before `/api/v1` ("" for most engines). */
  private readonly prefix: string;

  constructor(url: string) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new Error(`BUNDLE_URL: not a URL: ${redactUrl(url)}`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new Error(`BUNDLE_URL: ${redactUrl(url)}: http or https only`);
    }
    // "https://engine", "https://engine/api/v1" and "https://engine/api/v1/bundles" all name the engine.
    this.prefix = u.pathname.replace(/\/+$/, "").replace(/\/api\/v1(\/bundles)?$/, "");
    this.base = u;
    this.name = redactUrl(url);
  }

  url(method: string): string {
    const u = new URL(this.base.href);
    u.pathname = `${this.prefix}/api/v1/${METHOD_PATH[method] ?? "bundles"}`;
    return u.href;
  }

  async call(method: string, params: unknown[], timeoutMs: number): Promise<CallResult> {
    let res: Response;
    try {
      res = await fetch(this.url(method), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const codes = causeCodes(e);
      const name = (e as { name?: unknown }).name;
      if (name === "TimeoutError" || name === "AbortError") {
        return { ok: false, error: `${this.name}: no answer within ${timeoutMs} ms`, kind: "ambiguous" };
      }
      const unreached = codes.some((c) => UNREACHED_CODES.has(c));
      const msg = e instanceof Error ? e.message : String(e);
      return {
        ok: false,
        error: `${this.name}: ${unreached ? "unreachable" : "failed"}: ${msg}${codes.length ? ` (${codes.join(", ")})` : ""}`,
        kind: unreached ? "unreached" : "ambiguous",
      };
    }
    let body: { result?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
    let text = "";
    try {
      text = await res.text();
      body = JSON.parse(text) as typeof body;
    } catch {
      body = undefined;
    }
    if (body?.error) {
      const msg = typeof body.error.message === "string" ? body.error.message : JSON.stringify(body.error);
      return { ok: false, error: `${this.name}: ${method} refused: ${msg}`, kind: "refused" };
    }
    if (!res.ok) {
      // A 429 is a refusal (rate limit); another status without a JSON-RPC error leaves it open.
      const status = `HTTP ${res.status} ${res.statusText}`.trim();
      return {
        ok: false,
        error: `${this.name}: ${method}: ${status}${text ? `: ${text.slice(0, 200)}` : ""}`,
        kind: res.status === 429 || (res.status >= 400 && res.status < 500) ? "refused" : "ambiguous",
      };
    }
    if (!body || !("result" in body)) {
      return { ok: false, error: `${this.name}: ${method}: no result in the answer`, kind: "ambiguous" };
    }
    return { ok: true, result: body.result };
  }
}

interface InflightValue {
  bundle_id?: unknown;
  status?: unknown;
  landed_slot?: unknown;
}

interface BundleStatusValue {
  bundle_id?: unknown;
  slot?: unknown;
  err?: unknown;
}

function values(result: unknown): unknown[] {
  const v = (result as { value?: unknown } | null)?.value;
  return Array.isArray(v) ? v : [];
}

function slotOf(v: unknown): bigint | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
}

export class JitoBundleClient implements BundlePort {
  readonly description: string;
  private readonly engines: Engine[];
  private readonly chain: Pick<Chain, "isBlockhashValid">;
  private readonly timeoutMs: number;
  private readonly tipCacheMs: number;
  private readonly now: () => number;
  private tips: { accounts: PublicKey[]; at: number } | undefined;

  constructor(opts: JitoBundleClientOptions) {
    if (opts.urls.length === 0) throw new Error("BUNDLE_URL: at least one block engine URL");
    this.engines = opts.urls.map((u) => new Engine(u));
    this.chain = opts.chain;
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.tipCacheMs = opts.tipCacheMs ?? 600_000;
    this.now = opts.now ?? Date.now;
    const extra = this.engines.length - 1;
    this.description = `jito ${this.engines[0]?.name}${extra > 0 ? ` (+${extra} engines)` : ""}`;
  }

  async getTipAccounts(): Promise<PublicKey[]> {
    if (this.tips && this.now() - this.tips.at < this.tipCacheMs) return [...this.tips.accounts];
    const errors: string[] = [];
    for (const engine of this.engines) {
      const r = await engine.call("getTipAccounts", [], this.timeoutMs);
      if (!r.ok) {
        errors.push(r.error);
        continue;
      }
      try {
        if (!Array.isArray(r.result) || r.result.length === 0) throw new Error("not a list of accounts");
        const accounts = r.result.map((a) => new PublicKey(String(a)));
        this.tips = { accounts, at: this.now() };
        return [...accounts];
      } catch (e) {
        errors.push(`${engine.name}: getTipAccounts: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    throw new BundleEngineUnavailableError(`no block engine listed its tip accounts: ${errors.join("; ")}`);
  }

  /**
   * Whether an engine answers now: its tip accounts asked afresh (the cache bypassed), resolved by
   * the first engine that lists them, thrown when none does. The fill path's health probe.
   */
  async probe(): Promise<void> {
    const asked = this.engines.map(async (e) => {
      const r = await e.call("getTipAccounts", [], this.timeoutMs);
      if (!r.ok) throw new Error(r.error);
      if (!Array.isArray(r.result) || r.result.length === 0) throw new Error(`${e.name}: no tip accounts`);
    });
    try {
      await Promise.any(asked);
    } catch (e) {
      const why = (e as AggregateError).errors.map((x: Error) => x.message).join("; ");
      throw new BundleEngineUnavailableError(`no block engine answered: ${why}`);
    }
  }

  async sendBundle(txs: readonly VersionedTransaction[], opts: SendOptions = {}): Promise<BundleSendResult> {
    if (txs.length === 0 || txs.length > MAX_BUNDLE_TRANSACTIONS) {
      return {
        ok: false,
        error: `bundle: ${txs.length} transactions, 1 to ${MAX_BUNDLE_TRANSACTIONS}`,
        reached: "no",
      };
    }
    const encoded = txs.map((tx) => Buffer.from(tx.serialize()).toString("base64"));
    const timeoutMs = Math.min(opts.timeoutMs ?? this.timeoutMs, this.timeoutMs);
    const results = await Promise.all(
      this.engines.map((e) => e.call("sendBundle", [encoded, { encoding: "base64" }], timeoutMs)),
    );
    const errors: string[] = [];
    for (const [i, r] of results.entries()) {
      if (r.ok && typeof r.result === "string" && r.result.length > 0)
        return { ok: true, bundleId: r.result };
      errors.push(r.ok ? `${this.engines[i]?.name}: sendBundle: no bundle id in the answer` : r.error);
    }
    const kinds = results.map((r) => (r.ok ? "ambiguous" : r.kind));
    const error = errors.join("; ");
    if (kinds.includes("ambiguous"))
      return { ok: false, error, reached: "unknown", bundleId: bundleIdOf(txs) };
    if (kinds.includes("refused")) return { ok: false, error, reached: "refused" };
    return { ok: false, error, reached: "no" };
  }

  async getBundleStatus(bundleId: string, hint?: StatusHint): Promise<BundleStatus> {
    const errors: string[] = [];
    let answered = false;
    const inflight = await Promise.all(
      this.engines.map((e) => e.call("getInflightBundleStatuses", [[bundleId]], this.timeoutMs)),
    );
    let known: BundleStatus | undefined;
    for (const [i, r] of inflight.entries()) {
      const name = this.engines[i]?.name;
      if (!r.ok) {
        errors.push(r.error);
        continue;
      }
      answered = true;
      const v = values(r.result).find((x) => (x as InflightValue | null)?.bundle_id === bundleId) as
        | InflightValue
        | undefined;
      switch (v?.status) {
        case "Landed": {
          const slot = slotOf(v.landed_slot);
          if (slot !== undefined) return { state: "landed", slot };
          break;
        }
        case "Pending":
          known ??= { state: "pending" };
          break;
        case "Failed":
          known ??= {
            state: "failed",
            error: `${name}: bundle failed (not forwarded or a transaction failed)`,
          };
          break;
      }
    }
    if (known?.state === "failed") return known;

    // Past the in-flight look-back (5 minutes) only getBundleStatuses knows a landed bundle.
    const landed = await Promise.all(
      this.engines.map((e) => e.call("getBundleStatuses", [[bundleId]], this.timeoutMs)),
    );
    for (const [i, r] of landed.entries()) {
      if (!r.ok) {
        errors.push(r.error);
        continue;
      }
      answered = true;
      const v = values(r.result).find((x) => (x as BundleStatusValue | null)?.bundle_id === bundleId) as
        | BundleStatusValue
        | undefined;
      if (!v) continue;
      const slot = slotOf(v.slot) ?? 0n;
      const err = v.err;
      const ok = err === null || err === undefined || (typeof err === "object" && "Ok" in (err as object));
      if (ok) return { state: "landed", slot };
      return {
        state: "failed",
        error: `${this.engines[i]?.name}: bundle landed with error ${JSON.stringify(err)}`,
      };
    }

    // No engine answered: whether it landed is not known, whatever its blockhash says.
    if (!answered) return { state: "unknown", error: `no block engine answered: ${errors.join("; ")}` };
    if (hint?.blockhash) {
      try {
        if (!(await this.chain.isBlockhashValid(hint.blockhash))) return { state: "expired" };
      } catch (e) {
        return (
          known ?? {
            state: "unknown",
            error: `chain isBlockhashValid failed: ${e instanceof Error ? e.message : String(e)}`,
          }
        );
      }
    }
    if (known) return known;
    return { state: "pending" };
  }

  async close(): Promise<void> {}
}
