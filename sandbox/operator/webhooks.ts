/**
 * The operator's view of registered makers: base URL, API key, and the token set read from their
 * GET /tokens and GET /permissioned-tokens every 10 minutes.
 *
 * Change detection copies the operator's (docs/contract.md, "GET /tokens"): the sorted union of both lists
 * is hashed, and the stored lists are replaced only when that hash changes. A mint that merely moves
 * from one list to the other leaves the hash alone and so is not seen until some other change to the
 * set, or a forced re-sync.
 */
import { createHash } from "node:crypto";
import { PublicKey } from "@solana/web3.js";
import type { HttpClient } from "./http-client.ts";

export interface WebhookRegistration {
  /** Short name for logs and reports. */
  name: string;
  /** e.g. http://127.0.0.1:8080/jupiter/rfq; endpoints are called relative to it. */
  baseUrl: string;
  apiKey?: string;
}

export interface Webhook extends WebhookRegistration {
  /** The supported set: the union of both lists at the last seen change. */
  tokens: ReadonlySet<string>;
  /** Mints that were on /permissioned-tokens at the last seen change. */
  permissioned: ReadonlySet<string>;
  /** Hash of the sorted union at the last seen change; undefined before the first successful read. */
  tokensHash?: string;
  lastSyncAtMs?: number;
  lastSyncError?: string;
}

export type SyncOutcome =
  | { kind: "changed"; hash: string }
  | { kind: "unchanged"; hash: string }
  | { kind: "failed"; error: string };

/** sha256 of the sorted union of both lists, as the operator hashes it. */
export function tokenSetHash(tokens: readonly string[], permissioned: readonly string[]): string {
  const union = [...new Set([...tokens, ...permissioned])].sort();
  return createHash("sha256").update(union.join(",")).digest("hex");
}

/** Joins a path onto a registered base URL, keeping the base's own path prefix. */
export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

const LIST_TIMEOUT_MS = 5_000;

function parseMintList(body: string): string[] | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!Array.isArray(raw)) return undefined;
  const out: string[] = [];
  for (const m of raw) {
    if (typeof m !== "string") return undefined;
    try {
      if (new PublicKey(m).toBase58() !== m) return undefined;
    } catch {
      return undefined;
    }
    out.push(m);
  }
  return out;
}

export interface WebhookRegistryOptions {
  http: HttpClient;
  now?: () => number;
  /** Refresh interval; the operator's is 10 minutes. */
  refreshIntervalMs?: number;
}

/** Registered makers and their token sets. */
export class WebhookRegistry {
  readonly #http: HttpClient;
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #hooks = new Map<string, Webhook>();
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: WebhookRegistryOptions) {
    this.#http = opts.http;
    this.#now = opts.now ?? Date.now;
    this.#intervalMs = opts.refreshIntervalMs ?? 10 * 60_000;
  }

  /** Registers (or re-registers) a maker; its tokens are empty until the first sync. */
  register(reg: WebhookRegistration): Webhook {
    const hook: Webhook = {
      ...reg,
      baseUrl: reg.baseUrl.replace(/\/+$/, ""),
      tokens: new Set(),
      permissioned: new Set(),
    };
    this.#hooks.set(reg.name, hook);
    return hook;
  }

  get(name: string): Webhook | undefined {
    return this.#hooks.get(name);
  }

  list(): Webhook[] {
    return [...this.#hooks.values()];
  }

  headersFor(hook: WebhookRegistration): Record<string, string> {
    return hook.apiKey ? { "x-api-key": hook.apiKey } : {};
  }

  /**
   * Reads both lists of one maker. `/tokens` must answer 200 with an array of addresses (otherwise the
   * sync fails and the previous set stays); a non-200 `/permissioned-tokens` reads as empty.
   * `force` replaces the stored lists even when the union's hash is unchanged (the operator's re-sync).
   */
  async sync(name: string, force = false): Promise<SyncOutcome> {
    const hook = this.#hooks.get(name);
    if (!hook) return { kind: "failed", error: `no webhook named ${name}` };
    const headers = this.headersFor(hook);
    const [open, perm] = await Promise.all([
      this.#http.request(endpointUrl(hook.baseUrl, "/tokens"), {
        method: "GET",
        headers,
        timeoutMs: LIST_TIMEOUT_MS,
      }),
      this.#http.request(endpointUrl(hook.baseUrl, "/permissioned-tokens"), {
        method: "GET",
        headers,
        timeoutMs: LIST_TIMEOUT_MS,
      }),
    ]);
    const fail = (error: string): SyncOutcome => {
      hook.lastSyncError = error;
      return { kind: "failed", error };
    };
    if (!open.ok) return fail(`/tokens: ${open.error}: ${open.detail}`);
    if (open.status !== 200) return fail(`/tokens: status ${open.status}`);
    const tokens = parseMintList(open.body);
    if (!tokens) return fail("/tokens: not a JSON array of base58 addresses");
    const permissioned = perm.ok && perm.status === 200 ? (parseMintList(perm.body) ?? []) : [];

    const hash = tokenSetHash(tokens, permissioned);
    hook.lastSyncAtMs = this.#now();
    hook.lastSyncError = undefined;
    if (!force && hook.tokensHash === hash) return { kind: "unchanged", hash };
    hook.tokens = new Set([...tokens, ...permissioned]);
    hook.permissioned = new Set(permissioned);
    hook.tokensHash = hash;
    return { kind: "changed", hash };
  }

  /** Syncs every maker once. */
  async syncAll(force = false): Promise<Map<string, SyncOutcome>> {
    const names = [...this.#hooks.keys()];
    const outcomes = await Promise.all(names.map((n) => this.sync(n, force)));
    return new Map(names.map((n, i) => [n, outcomes[i] as SyncOutcome]));
  }

  /** Starts the periodic refresh (the first one runs at once). */
  start(onSynced?: (outcomes: Map<string, SyncOutcome>) => void): Promise<Map<string, SyncOutcome>> {
    this.stop();
    const run = async () => {
      const outcomes = await this.syncAll();
      onSynced?.(outcomes);
      return outcomes;
    };
    this.#timer = setInterval(() => void run(), this.#intervalMs);
    this.#timer.unref();
    return run();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Makers that quote this pair: both mints in their supported set. */
  supporting(inputMint: string, outputMint: string): Webhook[] {
    return this.list().filter((h) => h.tokens.has(inputMint) && h.tokens.has(outputMint));
  }
}
