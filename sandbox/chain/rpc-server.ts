/**
 * The LocalChain behind a Solana JSON-RPC 2.0 HTTP endpoint, so that anything speaking Solana RPC
 * (our RpcChain, web3.js scripts, the operator simulator) can use the local chain over a socket.
 *
 * It implements the methods @solana/web3.js v1 `Connection` calls on our paths, with the same
 * envelopes (`{context:{slot}, value}`) and error codes as a mainnet RPC node:
 * -32002 preflight (simulation) failure, -32003 signature verification failure, -32602 invalid
 * params, -32601 unknown method. Only base64 account data is served (web3.js asks for base64).
 *
 * It also serves a Jito-style block engine's API over the local bundle engine
 * (src/chain/local/bundle-engine.ts), so the production bundle client runs unchanged against it:
 * POST `/api/v1/bundles` (and `/api/v1/<method>`, as Jito serves them) answers `sendBundle`
 * (`[[tx, ...], {"encoding": "base64" | "base58"}]`, base58 by default, as Jito), `getTipAccounts`,
 * `getInflightBundleStatuses` and `getBundleStatuses` (up to 5 ids each), with Jito's envelopes.
 *
 * Listen on loopback only: it can mint SOL (`requestAirdrop`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PublicKey, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { MAX_BUNDLE_TRANSACTIONS } from "../../src/chain/bundle.ts";
import { LocalBundleEngine } from "../../src/chain/local/bundle-engine.ts";
import type { LandedTransaction, LocalChain, TokenBalanceEntry } from "../../src/chain/local/index.ts";
import { readMint, readTokenAccount } from "../../src/chain/local/spl-state.ts";

export interface RpcServerOptions {
  host?: string;
  port?: number;
  /** Largest request body, bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** The bundle engine behind `/api/v1/*` (default: a new one over `chain`). */
  bundles?: LocalBundleEngine;
}

export interface RpcServer {
  readonly url: string;
  /** The block engine API's base URL (BUNDLE_URL): the same server, `/api/v1/bundles` beneath it. */
  readonly bundleUrl: string;
  readonly bundles: LocalBundleEngine;
  readonly server: Server;
  close(): Promise<void>;
}

interface JsonRpcRequest {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/** A JSON-RPC error answer (thrown inside a handler, turned into the `error` member). */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const INVALID_PARAMS = -32602;
const SOLANA_VERSION = { "solana-core": "2.2.0", "feature-set": 0 };
const SLOTS_PER_EPOCH = 432_000n;

function param<T>(params: unknown[], i: number, what: string, check: (v: unknown) => v is T): T {
  const v = params[i];
  if (!check(v)) throw new RpcError(INVALID_PARAMS, `Invalid params: ${what}`);
  return v;
}

const isString = (v: unknown): v is string => typeof v === "string";
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

function pubkey(s: string): PublicKey {
  try {
    return new PublicKey(s);
  } catch {
    throw new RpcError(INVALID_PARAMS, `Invalid param: Invalid pubkey ${JSON.stringify(s)}`);
  }
}

function config(params: unknown[], i: number): Record<string, unknown> {
  const c = params[i];
  return c && typeof c === "object" && !Array.isArray(c) ? (c as Record<string, unknown>) : {};
}

function requireBase64(cfg: Record<string, unknown>): void {
  const encoding = cfg.encoding ?? "base64";
  if (encoding !== "base64") {
    throw new RpcError(INVALID_PARAMS, `Invalid params: the local chain serves encoding "base64" only`);
  }
}

function decodeTransaction(encoded: string, cfg: Record<string, unknown>): VersionedTransaction {
  const encoding = cfg.encoding ?? "base58";
  try {
    const bytes =
      encoding === "base64"
        ? Buffer.from(encoded, "base64")
        : encoding === "base58"
          ? bs58.decode(encoded)
          : undefined;
    if (!bytes) throw new Error(`unsupported encoding ${String(encoding)}`);
    return VersionedTransaction.deserialize(bytes);
  } catch (e) {
    throw new RpcError(INVALID_PARAMS, `invalid transaction: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Answers JSON-RPC calls against one LocalChain. */
export class LocalRpcHandler {
  constructor(private readonly chain: LocalChain) {}

  private context(): { slot: number } {
    return { slot: Number(this.chain.blockHeight()) };
  }

  private envelope<T>(value: T): { context: { slot: number; apiVersion: string }; value: T } {
    return { context: { ...this.context(), apiVersion: SOLANA_VERSION["solana-core"] }, value };
  }

  private accountJson(key: PublicKey) {
    const acc = this.chain.svm.getAccount(key);
    if (!acc) return null;
    return {
      data: [Buffer.from(acc.data).toString("base64"), "base64"],
      executable: acc.executable,
      lamports: Number(acc.lamports),
      owner: acc.owner.toBase58(),
      rentEpoch: 0,
      space: acc.data.length,
    };
  }

  /** One call; throws RpcError for error answers. */
  handle(method: string, params: unknown[]): unknown {
    const chain = this.chain;
    switch (method) {
      case "getHealth":
        return "ok";
      case "getVersion":
        return SOLANA_VERSION;
      case "getSlot":
      case "getBlockHeight":
        return Number(chain.blockHeight());
      case "getEpochInfo": {
        const height = chain.blockHeight();
        return {
          absoluteSlot: Number(height),
          blockHeight: Number(height),
          epoch: Number(height / SLOTS_PER_EPOCH),
          slotIndex: Number(height % SLOTS_PER_EPOCH),
          slotsInEpoch: Number(SLOTS_PER_EPOCH),
        };
      }
      case "getLatestBlockhash": {
        const { blockhash, lastValidBlockHeight } = chain.latestBlockhash();
        return this.envelope({ blockhash, lastValidBlockHeight: Number(lastValidBlockHeight) });
      }
      case "isBlockhashValid":
        return this.envelope(chain.blockhashValid(param(params, 0, "blockhash", isString)));
      case "getMinimumBalanceForRentExemption": {
        const len = param(params, 0, "data length", isNumber);
        return Number(chain.svm.minimumBalanceForRentExemption(BigInt(Math.max(0, Math.floor(len)))));
      }
      case "getBalance":
        return this.envelope(
          Number(chain.svm.getBalance(pubkey(param(params, 0, "pubkey", isString))) ?? 0n),
        );
      case "getAccountInfo": {
        requireBase64(config(params, 1));
        chain.syncClock();
        return this.envelope(this.accountJson(pubkey(param(params, 0, "pubkey", isString))));
      }
      case "getMultipleAccounts": {
        requireBase64(config(params, 1));
        const keys = param(params, 0, "pubkeys", isStringArray);
        if (keys.length > 100) throw new RpcError(INVALID_PARAMS, "Too many inputs provided; max 100");
        chain.syncClock();
        return this.envelope(keys.map((k) => this.accountJson(pubkey(k))));
      }
      case "getTokenAccountBalance": {
        const key = pubkey(param(params, 0, "pubkey", isString));
        const acc = chain.svm.getAccount(key);
        const token = acc ? readTokenAccount(key, acc, acc.owner) : undefined;
        const mint =
          token && acc ? readMint(token.mint, chain.svm.getAccount(token.mint), acc.owner) : undefined;
        if (!token || !mint) throw new RpcError(INVALID_PARAMS, "Invalid param: not a Token account");
        const amount = token.amount.toString();
        const ui = formatUnits(token.amount, mint.decimals);
        return this.envelope({ amount, decimals: mint.decimals, uiAmount: Number(ui), uiAmountString: ui });
      }
      case "requestAirdrop": {
        const key = pubkey(param(params, 0, "pubkey", isString));
        const lamports = param(params, 1, "lamports", isNumber);
        const res = chain.airdrop(key, BigInt(Math.floor(lamports)));
        if (!res.ok) throw new RpcError(-32600, `airdrop failed: ${res.error}`);
        return res.signature;
      }
      case "getSignatureStatuses": {
        const sigs = param(params, 0, "signatures", isStringArray);
        if (sigs.length > 256) throw new RpcError(INVALID_PARAMS, "Too many inputs provided; max 256");
        return this.envelope(
          sigs.map((s) => {
            const rec = chain.landed(s);
            if (!rec) return null;
            const err = rec.state === "failed" ? rec.errJson : null;
            // One chain, no forks: a landed transaction is final at once.
            return {
              slot: Number(rec.slot),
              confirmations: null,
              err,
              status: err === null ? { Ok: null } : { Err: err },
              confirmationStatus: "finalized",
            };
          }),
        );
      }
      case "simulateTransaction": {
        const cfg = config(params, 1);
        const tx = decodeTransaction(param(params, 0, "transaction", isString), cfg);
        // `accounts.addresses`: the post-state of those accounts, base64, as a validator reports it.
        const wanted = (cfg.accounts as { addresses?: unknown } | undefined)?.addresses;
        const watch = Array.isArray(wanted) ? wanted.map((a) => new PublicKey(String(a))) : undefined;
        const sim = chain.simulate(tx, {
          sigVerify: cfg.sigVerify === true,
          replaceRecentBlockhash: cfg.replaceRecentBlockhash === true,
          ...(watch ? { watch } : {}),
        });
        return this.envelope({
          err: sim.errJson,
          logs: sim.error && sim.logs.length === 0 ? [`local chain: ${sim.error}`] : sim.logs,
          accounts: sim.post
            ? sim.post.map((a) =>
                a
                  ? {
                      lamports: Number(a.lamports),
                      owner: a.owner.toBase58(),
                      data: [Buffer.from(a.data).toString("base64"), "base64"],
                      executable: a.executable,
                      rentEpoch: 0,
                      space: a.data.length,
                    }
                  : null,
              )
            : null,
          unitsConsumed: Number(sim.unitsConsumed),
          returnData: null,
        });
      }
      case "getSignaturesForAddress": {
        // Newest first, as a validator answers; `limit` (default and most 1,000) as there.
        const address = pubkey(param(params, 0, "address", isString));
        const limit = Math.min(1_000, Number((config(params, 1) as { limit?: unknown }).limit ?? 1_000));
        return chain
          .transactionsFor(address)
          .reverse()
          .slice(0, limit)
          .map((t) => ({
            signature: t.signature,
            slot: Number(t.slot),
            err: t.errJson,
            memo: null,
            blockTime: null,
            confirmationStatus: "finalized",
          }));
      }
      case "getTransaction": {
        const t = chain.transaction(param(params, 0, "signature", isString));
        if (!t) return null;
        return {
          slot: Number(t.slot),
          blockTime: null,
          transaction:
            config(params, 1).encoding === "base64"
              ? [Buffer.from(t.tx.serialize()).toString("base64"), "base64"]
              : transactionJson(t.tx),
          meta: transactionMetaJson(t),
          version: t.tx.version === "legacy" ? "legacy" : 0,
        };
      }
      case "sendTransaction":
        return this.sendTransaction(params);
      default:
        throw new RpcError(-32601, "Method not found");
    }
  }

  private sendTransaction(params: unknown[]): string {
    const cfg = config(params, 1);
    const tx = decodeTransaction(param(params, 0, "transaction", isString), cfg);
    if (cfg.skipPreflight !== true) {
      const sim = this.chain.simulate(tx, { sigVerify: true });
      if (sim.errJson !== null) {
        if (sim.errJson === "SignatureFailure") {
          throw new RpcError(-32003, "Transaction signature verification failure");
        }
        throw new RpcError(
          -32002,
          `Transaction simulation failed: ${sim.error ?? JSON.stringify(sim.errJson)}`,
          {
            err: sim.errJson,
            logs: sim.logs,
            accounts: null,
            unitsConsumed: Number(sim.unitsConsumed),
            returnData: null,
          },
        );
      }
    }
    const out = this.chain.submit(tx);
    if (out.kind !== "dropped") return out.signature;
    switch (out.reason) {
      case "signature":
        // Mainnet RPC nodes verify signatures before forwarding, preflight or not.
        throw new RpcError(-32003, "Transaction signature verification failure");
      case "blockhash":
      case "rejected":
        // With skipPreflight a node forwards the transaction and the leader drops it: the caller gets
        // the signature and the transaction never lands.
        return out.signature;
      default:
        throw new RpcError(-32002, `Transaction simulation failed: ${out.error}`, {
          err: "InvalidProgramForExecution",
          logs: [`local chain: ${out.error}`],
          accounts: null,
          unitsConsumed: 0,
          returnData: null,
        });
    }
  }

  /** One JSON-RPC request object to its response object. */
  respond(req: JsonRpcRequest): Record<string, unknown> {
    return respondWith(req, (method, params) => this.handle(method, params));
  }
}

/** Jito's limit on ids per status query. */
const MAX_STATUS_IDS = 5;

/** Answers a Jito-style block engine's JSON-RPC calls against one LocalBundleEngine. */
export class LocalBundleHandler {
  constructor(private readonly engine: LocalBundleEngine) {}

  private ids(params: unknown[]): string[] {
    const ids = param(params, 0, "bundle ids", isStringArray);
    if (ids.length === 0) throw new RpcError(INVALID_PARAMS, "Invalid params: no bundle ids");
    if (ids.length > MAX_STATUS_IDS) {
      throw new RpcError(INVALID_PARAMS, `Invalid params: at most ${MAX_STATUS_IDS} bundle ids`);
    }
    return ids;
  }

  private envelope<T>(value: T): { context: { slot: number }; value: T } {
    return { context: { slot: Number(this.engine.chain.blockHeight()) }, value };
  }

  /** One call; throws RpcError for error answers. */
  handle(method: string, params: unknown[]): unknown {
    switch (method) {
      case "getTipAccounts":
        return this.engine.tipAccounts.map((k) => k.toBase58());
      case "sendBundle": {
        const encoded = param(params, 0, "transactions", isStringArray);
        if (encoded.length === 0 || encoded.length > MAX_BUNDLE_TRANSACTIONS) {
          throw new RpcError(
            INVALID_PARAMS,
            `bundle must contain 1 to ${MAX_BUNDLE_TRANSACTIONS} transactions, got ${encoded.length}`,
          );
        }
        const cfg = config(params, 1);
        const txs = encoded.map((t) => decodeTransaction(t, cfg));
        const out = this.engine.submitBundle(txs);
        if (out.kind === "refused") throw new RpcError(INVALID_PARAMS, out.error);
        return out.bundleId;
      }
      case "getInflightBundleStatuses":
        return this.envelope(
          this.ids(params).map((id) => {
            const rec = this.engine.record(id);
            return {
              bundle_id: id,
              status: rec?.state === "landed" ? "Landed" : rec?.state === "failed" ? "Failed" : "Invalid",
              landed_slot: rec?.state === "landed" ? Number(rec.slot) : null,
            };
          }),
        );
      case "getBundleStatuses":
        // Landed bundles only, as Jito: any other id is null.
        return this.envelope(
          this.ids(params).map((id) => {
            const rec = this.engine.record(id);
            if (rec?.state !== "landed") return null;
            return {
              bundle_id: id,
              transactions: rec.signatures,
              slot: Number(rec.slot),
              // One chain, no forks: a landed bundle is final at once.
              confirmation_status: "finalized",
              err: { Ok: null },
            };
          }),
        );
      default:
        throw new RpcError(-32601, "Method not found");
    }
  }

  respond(req: JsonRpcRequest): Record<string, unknown> {
    return respondWith(req, (method, params) => this.handle(method, params));
  }
}

/** One JSON-RPC request object to its response object, calls answered by `handle`. */
function respondWith(
  req: JsonRpcRequest,
  handle: (method: string, params: unknown[]) => unknown,
): Record<string, unknown> {
  const id = req.id ?? null;
  if (req.jsonrpc !== "2.0" || typeof req.method !== "string") {
    return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid request" } };
  }
  const params = Array.isArray(req.params) ? req.params : [];
  try {
    return { jsonrpc: "2.0", id, result: handle(req.method, params) };
  } catch (e) {
    if (e instanceof RpcError) {
      const error: Record<string, unknown> = { code: e.code, message: e.message };
      if (e.data !== undefined) error.data = e.data;
      return { jsonrpc: "2.0", id, error };
    }
    return {
      jsonrpc: "2.0",
      id,
      error: { code: -32603, message: `Internal error: ${(e as Error).message}` },
    };
  }
}

/** Smallest units to a decimal string ("1.5"), as the RPC's `uiAmountString`. */
export function formatUnits(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, "0");
  const whole = s.slice(0, -decimals);
  const frac = s.slice(-decimals).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}

function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the JSON-RPC server for `chain` (default 127.0.0.1:8899; port 0 picks a free one). */
export async function startRpcServer(chain: LocalChain, opts: RpcServerOptions = {}): Promise<RpcServer> {
  const handler = new LocalRpcHandler(chain);
  const bundles = opts.bundles ?? new LocalBundleEngine(chain);
  const bundleHandler = new LocalBundleHandler(bundles);
  const limit = opts.maxBodyBytes ?? 1_048_576;
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    if (req.method !== "POST") {
      reply(res, 405, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "POST JSON-RPC only" } });
      return;
    }
    let body: string | undefined;
    try {
      body = await readBody(req, limit);
    } catch {
      return;
    }
    if (body === undefined) {
      reply(res, 413, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "request too large" } });
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      reply(res, 200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      return;
    }
    // The block engine's API lives under /api/v1 (Jito: /api/v1/bundles, /api/v1/getTipAccounts, ...).
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const h = path.startsWith("/api/v1/") ? bundleHandler : handler;
    if (Array.isArray(parsed)) {
      reply(
        res,
        200,
        parsed.map((r) => h.respond((r ?? {}) as JsonRpcRequest)),
      );
    } else {
      reply(res, 200, h.respond((parsed ?? {}) as JsonRpcRequest));
    }
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 8899, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url,
    bundleUrl: url,
    bundles,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A landed transaction's `meta` as a validator's RPC answers `getTransaction`: what the local chain
 * measured when it ran it (fee, compute units, lamports and token balances of every account key before
 * and after, logs), no inner instructions recorded, no rewards, no loaded addresses.
 */
function transactionMetaJson(t: LandedTransaction): Record<string, unknown> {
  const m = t.meta;
  const tokens = (list: TokenBalanceEntry[]) =>
    list.map((b) => {
      const ui = Number(b.amount) / 10 ** b.decimals;
      return {
        accountIndex: b.accountIndex,
        mint: b.mint,
        owner: b.owner,
        programId: b.programId,
        uiTokenAmount: {
          amount: b.amount.toString(),
          decimals: b.decimals,
          uiAmount: b.amount === 0n ? null : ui,
          uiAmountString: formatUnits(b.amount, b.decimals),
        },
      };
    });
  return {
    err: t.errJson,
    status: t.errJson === null ? { Ok: null } : { Err: t.errJson },
    fee: m ? Number(m.fee) : 0,
    preBalances: m ? m.preBalances.map(Number) : [],
    postBalances: m ? m.postBalances.map(Number) : [],
    innerInstructions: [],
    logMessages: m ? m.logMessages : [],
    preTokenBalances: m ? tokens(m.preTokenBalances) : [],
    postTokenBalances: m ? tokens(m.postTokenBalances) : [],
    rewards: [],
    loadedAddresses: { writable: [], readonly: [] },
    computeUnitsConsumed: m ? Number(m.computeUnitsConsumed) : 0,
  };
}

/** A transaction in the RPC's "json" encoding (the default of getTransaction). */
function transactionJson(tx: VersionedTransaction): Record<string, unknown> {
  const m = tx.message;
  return {
    signatures: tx.signatures.map((sig) => bs58.encode(sig)),
    message: {
      header: m.header,
      accountKeys: m.staticAccountKeys.map((k) => k.toBase58()),
      recentBlockhash: m.recentBlockhash,
      instructions: m.compiledInstructions.map((ci) => ({
        programIdIndex: ci.programIdIndex,
        accounts: [...ci.accountKeyIndexes],
        data: bs58.encode(ci.data),
        stackHeight: null,
      })),
      ...(m.version === 0
        ? {
            addressTableLookups: m.addressTableLookups.map((l) => ({
              accountKey: l.accountKey.toBase58(),
              writableIndexes: [...l.writableIndexes],
              readonlyIndexes: [...l.readonlyIndexes],
            })),
          }
        : {}),
    },
  };
}
