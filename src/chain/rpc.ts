/**
 * RpcChain: the Chain port over Solana JSON-RPC (@solana/web3.js v1 Connection).
 *
 * The reads every fill makes (signature statuses, accounts, the clock, simulations) are plain JSON-RPC
 * calls with answers checked by rpc-read.ts, not `Connection`'s: it reads lamports as JavaScript
 * numbers, inexact past 2^53. They send what `Connection` sends for the same calls. The rest (sends,
 * blockhashes, rent, slot) goes through `Connection`.
 *
 * Reads go to the first URL. A transaction is sent to every URL at once (skipPreflight, maxRetries 0:
 * we do the retrying, the RPC node's own queue would outlive our interest) and re-sent every
 * `resendIntervalMs` until it lands or its blockhash expires; that is what gets a transaction
 * through a congested leader schedule. Every call has a timeout.
 *
 * Failures: `send`, `getSignatureStatus` and `ping` answer them as values (the interface has room
 * for them); the reads return data or throw a `ChainUnavailableError` naming the call.
 *
 * An ambiguous send is not a refusal: when no endpoint took the transaction but at least one failed
 * after the request may have gone out (a connection reset, a timeout, a proxy's 5xx), `send` looks for
 * the signature on every endpoint and sends the same bytes again (the chain takes one signature once)
 * until one takes it, it is found, or the caller's time is up. Only then is it a failure, saying
 * whether the transaction reached no node ("no"), was refused ("refused"), or is unknown ("unknown").
 */
import {
  Connection,
  type PublicKey,
  SendTransactionError,
  SYSVAR_CLOCK_PUBKEY,
  type VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import type {
  AccountSnapshot,
  Blockhash,
  Chain,
  SendOptions,
  SendResult,
  SignatureStatus,
  SimulationResult,
  StatusHint,
  UnsignedSimulation,
} from "./interface.ts";
import {
  accountInfoOf,
  accountsOf,
  rpcCall,
  type SimulationAnswer,
  simulationOf,
  statusErrorOf,
  statusesOf,
} from "./rpc-read.ts";

export interface RpcChainOptions {
  /** JSON-RPC URLs; the first is read from, all are sent to. */
  urls: readonly string[];
  /** Per call, ms (default 5,000). */
  timeoutMs?: number;
  /** Re-send period for transactions in flight, ms (default 2,000). */
  resendIntervalMs?: number;
  /** Transactions tracked for re-sending at most (default 10,000); the oldest are dropped first. */
  maxInFlight?: number;
  /** Told of every failed call (timeout, transport error, error answer), by method: the error counter. */
  onError?: (method: string) => void;
  /** Called after each JSON-RPC call that answered (rfq_rpc_up). */
  onOk?: (method: string) => void;
}

/** A read that failed or timed out. */
export class ChainUnavailableError extends Error {
  constructor(call: string, cause: unknown) {
    super(`chain ${call} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "ChainUnavailableError";
  }
}

/** Splits a list of URLs (`RPC_URL`, `BUNDLE_URL`: "https://a,https://b"); blanks are ignored. */
export function parseUrlList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Scheme, host and port only: RPC URLs often carry an API key in the path or query. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "<invalid url>";
  }
}

/**
 * Asks one endpoint for a blockhash with a plain JSON-RPC call; undefined when it answers, otherwise
 * the cause in one line (connection refused, HTTP status, the node's error). For start-up checks,
 * where web3.js' own error text hides the network cause.
 */
export async function probeRpcEndpoint(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getLatestBlockhash", params: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return `HTTP ${res.status} ${res.statusText}`.trim();
    const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
    if (body.error) return `JSON-RPC error: ${body.error.message ?? JSON.stringify(body.error)}`;
    return body.result === undefined ? "no result in the JSON-RPC answer" : undefined;
  } catch (e) {
    const parts: string[] = [];
    for (let cur: unknown = e, i = 0; cur && i < 4; cur = (cur as { cause?: unknown }).cause, i++) {
      const c = cur as { code?: unknown; message?: unknown; name?: unknown };
      if (c.name === "TimeoutError") parts.push(`no answer within ${timeoutMs} ms`);
      else parts.push([c.code, c.message].filter((x) => typeof x === "string").join(" "));
    }
    return parts.filter(Boolean).join(": ");
  }
}

interface InFlight {
  raw: Buffer;
  blockhash: string;
}

/** A send to one endpoint that failed, and what that says about the transaction. */
interface SendFailure {
  ok: false;
  error: string;
  /** "unreached": no connection was made; "refused": the node answered no; "ambiguous": it may have it. */
  kind: "unreached" | "refused" | "ambiguous";
}

/** Codes that mean the request never left this machine (so the transaction cannot have arrived). */
export const UNREACHED_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** Pause between sends after an ambiguous failure, ms. */
const AMBIGUOUS_RETRY_MS = 250;

/** The `code` of an error and of its causes, outermost first. */
export function causeCodes(e: unknown): string[] {
  const codes: string[] = [];
  for (let cur: unknown = e, i = 0; cur && i < 5; cur = (cur as { cause?: unknown }).cause, i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  return codes;
}

/** The error and its network cause in one line ("fetch failed" alone says nothing). */
function causeText(e: unknown): string {
  const codes = causeCodes(e);
  const msg = errMessage(e);
  return codes.length && !codes.every((c) => msg.includes(c)) ? `${msg} (${codes.join(", ")})` : msg;
}

/**
 * A node that answered with a JSON-RPC error had the bytes and refused them (web3.js throws a
 * SendTransactionError); a connection that was never made means nothing was sent; anything else (a
 * reset or close after the request was written, a timeout, a proxy's 5xx) leaves it open.
 */
function sendFailureKind(e: unknown): SendFailure["kind"] {
  if (e instanceof SendTransactionError) return "refused";
  if (causeCodes(e).some((c) => UNREACHED_CODES.has(c))) return "unreached";
  return "ambiguous";
}

const MAX_ACCOUNTS_PER_CALL = 100;
const MAX_STATUSES_PER_CALL = 256;

function timeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class RpcChain implements Chain {
  readonly description: string;
  private readonly read: Connection;
  private readonly senders: Connection[];
  /** The endpoint reads go to; the swap path's per-fill reads are plain calls to it (rpc-read.ts). */
  private readonly readUrl: string;
  private readonly timeoutMs: number;
  private readonly maxInFlight: number;
  private readonly onError: ((method: string) => void) | undefined;
  private readonly onOk: ((method: string) => void) | undefined;
  private readonly inFlight = new Map<string, InFlight>();
  /** Signatures whose blockhash expired while we were re-sending them. */
  private readonly expired = new Set<string>();
  private readonly rentCache = new Map<number, bigint>();
  private readonly timer: NodeJS.Timeout;
  private ticking = false;

  constructor(opts: RpcChainOptions) {
    if (opts.urls.length === 0) throw new Error("RpcChain needs at least one URL");
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.maxInFlight = opts.maxInFlight ?? 10_000;
    this.onError = opts.onError;
    this.onOk = opts.onOk;
    const timeoutMs = this.timeoutMs;
    // The abort signal ends the HTTP request itself; the race in `call` bounds everything else.
    const fetchWithTimeout = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) =>
      fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    this.senders = opts.urls.map(
      (url) =>
        new Connection(url, {
          commitment: "confirmed",
          disableRetryOnRateLimit: true,
          fetch: fetchWithTimeout as unknown as typeof fetch,
        }),
    );
    this.read = this.senders[0] as Connection;
    this.readUrl = opts.urls[0] as string;
    const extra = opts.urls.length - 1;
    this.description = `rpc ${redactUrl(opts.urls[0] as string)}${extra > 0 ? ` (+${extra} send endpoints)` : ""}`;
    this.timer = setInterval(() => void this.tick(), opts.resendIntervalMs ?? 2_000);
    this.timer.unref();
  }

  /** Bounds one JSON-RPC call by the timeout and reports its outcome (counted failure, or success). */
  private bounded<T>(p: Promise<T>, what: string, ms = this.timeoutMs): Promise<T> {
    return timeout(p, ms, what).then(
      (v) => {
        this.onOk?.(what);
        return v;
      },
      (e: unknown) => {
        this.onError?.(what);
        throw e;
      },
    );
  }

  private async call<T>(what: string, f: () => Promise<T>): Promise<T> {
    try {
      return await this.bounded(f(), what);
    } catch (e) {
      throw new ChainUnavailableError(what, e);
    }
  }

  async getLatestBlockhash(): Promise<Blockhash> {
    const r = await this.call("getLatestBlockhash", () => this.read.getLatestBlockhash("confirmed"));
    return { blockhash: r.blockhash, lastValidBlockHeight: BigInt(r.lastValidBlockHeight) };
  }

  async getBlockHeight(): Promise<bigint> {
    return BigInt(await this.call("getBlockHeight", () => this.read.getBlockHeight("processed")));
  }

  // Blockhash checks and the pre-flight run against the newest (processed) bank: a blockhash the
  // operator fetched a moment ago may not be confirmed yet, and the leader executes on that bank.
  async isBlockhashValid(blockhash: string): Promise<boolean> {
    const r = await this.call("isBlockhashValid", () =>
      this.read.isBlockhashValid(blockhash, { commitment: "processed" }),
    );
    return r.value;
  }

  /** simulateTransaction with the params `Connection.simulateTransaction` sends for a VersionedTransaction. */
  private simulate(tx: VersionedTransaction, config: Record<string, unknown>): Promise<SimulationAnswer> {
    const encoded = Buffer.from(tx.serialize()).toString("base64");
    return this.call("simulateTransaction", () =>
      this.readCall("simulateTransaction", [encoded, { ...config, encoding: "base64" }]).then(simulationOf),
    );
  }

  /** One plain JSON-RPC call to the read endpoint, bounded by the per-call timeout. */
  private readCall(method: string, params: readonly unknown[]): Promise<unknown> {
    return rpcCall(this.readUrl, method, params, this.timeoutMs);
  }

  async preflight(tx: VersionedTransaction): Promise<SimulationResult> {
    const r = await this.simulate(tx, {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment: "processed",
    });
    if (r.error === undefined) return { ok: true, unitsConsumed: r.unitsConsumed, logs: r.logs };
    return { ok: false, error: r.error, logs: r.logs };
  }

  async simulateUnsigned(tx: VersionedTransaction, watch: readonly PublicKey[]): Promise<UnsignedSimulation> {
    const r = await this.simulate(tx, {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment: "processed",
      accounts: { encoding: "base64", addresses: watch.map((k) => k.toBase58()) },
    });
    const logs = r.logs;
    if (r.error !== undefined) return { ok: false, error: r.error, logs };
    const post = r.accounts;
    if (!post || post.length !== watch.length) {
      return { ok: false, error: "the node returned no post-state for the watched accounts", logs };
    }
    return { ok: true, unitsConsumed: r.unitsConsumed, logs, post };
  }

  async getAccounts(keys: PublicKey[]): Promise<(AccountSnapshot | null)[]> {
    const chunks: PublicKey[][] = [];
    for (let i = 0; i < keys.length; i += MAX_ACCOUNTS_PER_CALL)
      chunks.push(keys.slice(i, i + MAX_ACCOUNTS_PER_CALL));
    const results = await Promise.all(
      chunks.map((chunk) =>
        this.call("getMultipleAccounts", () =>
          this.readCall("getMultipleAccounts", [
            chunk.map((k) => k.toBase58()),
            { encoding: "base64", commitment: "confirmed" },
          ]).then((r) => accountsOf(r, chunk.length)),
        ),
      ),
    );
    return results.flat();
  }

  async getMinimumBalanceForRentExemption(dataLength: number): Promise<bigint> {
    const cached = this.rentCache.get(dataLength);
    if (cached !== undefined) return cached;
    const lamports = BigInt(
      await this.call("getMinimumBalanceForRentExemption", () =>
        this.read.getMinimumBalanceForRentExemption(dataLength),
      ),
    );
    this.rentCache.set(dataLength, lamports);
    return lamports;
  }

  async getUnixTimestamp(): Promise<bigint> {
    const clock = await this.call("getAccountInfo(clock)", () =>
      this.readCall("getAccountInfo", [
        SYSVAR_CLOCK_PUBKEY.toBase58(),
        { encoding: "base64", commitment: "confirmed" },
      ]).then(accountInfoOf),
    );
    if (!clock || clock.data.length < 40)
      throw new ChainUnavailableError("getAccountInfo(clock)", "no clock sysvar");
    // Clock sysvar: slot u64, epoch_start_timestamp i64, epoch u64, leader_schedule_epoch u64,
    // unix_timestamp i64 at offset 32.
    return Buffer.from(clock.data.buffer, clock.data.byteOffset, clock.data.byteLength).readBigInt64LE(32);
  }

  async send(tx: VersionedTransaction, opts: SendOptions = {}): Promise<SendResult> {
    const first = tx.signatures[0];
    if (!first || first.every((b) => b === 0))
      return { ok: false, error: "transaction is not signed by its fee payer", reached: "refused" };
    const signature = bs58.encode(first);
    let raw: Buffer;
    try {
      raw = Buffer.from(tx.serialize());
    } catch (e) {
      return { ok: false, error: `cannot serialize: ${errMessage(e)}`, reached: "refused" };
    }
    const deadline = Date.now() + (opts.timeoutMs ?? this.timeoutMs);
    const entry = { raw, blockhash: tx.message.recentBlockhash };
    let results = await this.broadcast(raw, this.timeoutMs);
    let attempts = 1;
    // Once one attempt may have delivered it, later clean refusals no longer prove it was not taken.
    let ambiguous = false;
    // Every distinct error over all the attempts, in the order first seen: the last attempt alone
    // may only show its own (short) timeout, not why the endpoints failed.
    const seen = new Set<string>();
    for (;;) {
      if (results.some((r) => r.ok)) {
        this.track(signature, entry);
        return { ok: true, signature };
      }
      const failures = results.filter((r): r is SendFailure => !r.ok);
      const errors = failures.map((r) => r.error).join("; ");
      for (const f of failures) seen.add(f.error);
      ambiguous ||= failures.some((r) => r.kind === "ambiguous");
      if (!ambiguous) {
        // Every endpoint either was never reached or answered no: nothing is on its way.
        return failures.every((r) => r.kind === "unreached")
          ? { ok: false, error: `did not reach any RPC endpoint: ${errors}`, reached: "no" }
          : { ok: false, error: errors, reached: "refused" };
      }
      // The request may have arrived before the failure: look for the signature everywhere, then send
      // the same bytes again (same signature: the chain takes it once), until the time is up.
      const left = deadline - Date.now();
      const found =
        left > 0 ? await this.lookEverywhere(signature, Math.min(this.timeoutMs, left)) : undefined;
      if (found?.state === "failed") {
        return { ok: false, error: `landed and failed: ${found.error}`, reached: "refused" };
      }
      if (found) {
        this.track(signature, entry);
        return { ok: true, signature };
      }
      const wait = Math.min(AMBIGUOUS_RETRY_MS, deadline - Date.now());
      if (wait <= 0) {
        return {
          ok: false,
          error: `not found on any RPC endpoint after ${attempts} send(s): ${[...seen].join("; ")}`,
          reached: "unknown",
        };
      }
      await new Promise((r) => setTimeout(r, wait));
      results = await this.broadcast(raw, Math.max(1, Math.min(this.timeoutMs, deadline - Date.now())));
      attempts++;
    }
  }

  /**
   * The signature's status on every endpoint (any commitment: "processed" is already on the chain);
   * the first one found, or undefined where no endpoint knows it (or none answered).
   */
  private async lookEverywhere(
    signature: string,
    ms: number,
  ): Promise<{ state: "seen" } | { state: "failed"; error: string } | undefined> {
    const answers = await Promise.all(
      this.senders.map(async (c) => {
        try {
          const r = await this.bounded(
            rpcCall(
              c.rpcEndpoint,
              "getSignatureStatuses",
              [[signature], { searchTransactionHistory: false }],
              ms,
            ),
            "getSignatureStatuses",
            ms,
          );
          return statusErrorOf(r);
        } catch {
          return undefined;
        }
      }),
    );
    const seen = answers.find((a) => a?.found);
    if (!seen?.found) return undefined;
    return seen.error !== undefined ? { state: "failed", error: seen.error } : { state: "seen" };
  }

  /** Sends the bytes to every endpoint at once; one answer per endpoint. */
  private broadcast(raw: Buffer, ms: number): Promise<(SendResult | SendFailure)[]> {
    return Promise.all(
      this.senders.map(async (c): Promise<SendResult | SendFailure> => {
        try {
          const signature = await this.bounded(
            c.sendRawTransaction(raw, { skipPreflight: true, maxRetries: 0 }),
            "sendTransaction",
            ms,
          );
          return { ok: true, signature };
        } catch (e) {
          return {
            ok: false,
            error: `${redactUrl(c.rpcEndpoint)}: ${causeText(e)}`,
            kind: sendFailureKind(e),
          };
        }
      }),
    );
  }

  private track(signature: string, entry: InFlight): void {
    this.expired.delete(signature);
    this.inFlight.set(signature, entry);
    while (this.inFlight.size > this.maxInFlight) {
      const oldest = this.inFlight.keys().next().value;
      if (oldest === undefined) break;
      this.inFlight.delete(oldest);
    }
  }

  async getSignatureStatus(signature: string, hint?: StatusHint): Promise<SignatureStatus> {
    try {
      const [status] = (await this.fetchStatuses([signature])) ?? [];
      if (status) return status;
      if (this.expired.has(signature)) return { state: "expired" };
      // Not being re-sent here (a failed send, or a fill resumed after a restart): the hint's blockhash
      // still tells when it can no longer land.
      const blockhash = this.inFlight.get(signature)?.blockhash ?? hint?.blockhash;
      if (!blockhash) return { state: "pending" };
      const valid = await this.bounded(
        this.read.isBlockhashValid(blockhash, { commitment: "confirmed" }),
        "isBlockhashValid",
      );
      if (valid.value) return { state: "pending" };
      // The blockhash is gone; look once more in case it landed just before expiring.
      const [again] = (await this.fetchStatuses([signature])) ?? [];
      if (again) return again;
      this.inFlight.delete(signature);
      this.expired.add(signature);
      return { state: "expired" };
    } catch (e) {
      return { state: "unknown", error: errMessage(e) };
    }
  }

  /** Landed statuses (confirmed or failed) by signature; undefined entries are not landed yet. */
  private async fetchStatuses(signatures: string[]): Promise<(SignatureStatus | undefined)[]> {
    const r = await this.bounded(
      this.readCall("getSignatureStatuses", [signatures, { searchTransactionHistory: false }]),
      "getSignatureStatuses",
    );
    return statusesOf(r, signatures.length);
  }

  /** One re-send round now (the timer runs it every `resendIntervalMs`). */
  resendPending(): Promise<void> {
    return this.tick();
  }

  /** One re-send round: drop what landed or expired, send the rest again. */
  private async tick(): Promise<void> {
    if (this.ticking || this.inFlight.size === 0) return;
    this.ticking = true;
    try {
      const signatures = [...this.inFlight.keys()];
      for (let i = 0; i < signatures.length; i += MAX_STATUSES_PER_CALL) {
        const batch = signatures.slice(i, i + MAX_STATUSES_PER_CALL);
        const statuses = await this.fetchStatuses(batch);
        const validity = new Map<string, boolean>();
        for (const [j, signature] of batch.entries()) {
          const entry = this.inFlight.get(signature);
          if (!entry) continue;
          if (statuses[j]) {
            this.inFlight.delete(signature);
            continue;
          }
          let valid = validity.get(entry.blockhash);
          if (valid === undefined) {
            valid = (
              await this.bounded(
                this.read.isBlockhashValid(entry.blockhash, { commitment: "confirmed" }),
                "isBlockhashValid",
              )
            ).value;
            validity.set(entry.blockhash, valid);
          }
          if (!valid) {
            this.inFlight.delete(signature);
            this.expired.add(signature);
            continue;
          }
          void this.broadcast(entry.raw, this.timeoutMs);
        }
      }
      // Bound the expired set like the in-flight map.
      while (this.expired.size > this.maxInFlight) {
        const oldest = this.expired.values().next().value;
        if (oldest === undefined) break;
        this.expired.delete(oldest);
      }
    } catch {
      // An RPC hiccup: the next round tries again.
    } finally {
      this.ticking = false;
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.bounded(this.read.getSlot("confirmed"), "getSlot");
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.inFlight.clear();
  }

  /** Transactions still being re-sent (for tests and metrics). */
  inFlightCount(): number {
    return this.inFlight.size;
  }
}
