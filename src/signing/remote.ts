/**
 * The remote adapter of the signer port: the key lives in the signer service (`npm run signer`); this
 * process holds none. SIGNER_URL is `unix:///path/to/signer.sock` or `https://host:port` (mutual TLS:
 * SIGNER_CA to trust the signer's certificate, SIGNER_CLIENT_CERT and SIGNER_CLIENT_KEY to present
 * ours). One long-lived connection, requests multiplexed by id (../protocol.ts); a lost connection is
 * re-opened on the next request. The maker's public key is the signer's active key, read at start.
 */
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { PublicKey, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { type SignContext, type Signer, SignerRefusal, type V2SignContext } from "./port.ts";
import { type ClaimedLevelsWire, lineReader, type SignerResponse } from "./protocol.ts";

export interface RemoteSignerSettings {
  url: string;
  /** PEM files, for https:// only. */
  caFile?: string;
  clientCertFile?: string;
  clientKeyFile?: string;
  /** Per request, ms (default 2,000). */
  timeoutMs?: number;
}

type Endpoint =
  | { kind: "unix"; path: string }
  | { kind: "tls"; host: string; port: number; ca: Buffer; cert: Buffer; key: Buffer };

/** Parses SIGNER_URL and reads the TLS files; throws naming the setting at fault. */
function signerEndpoint(s: RemoteSignerSettings): Endpoint {
  let url: URL;
  try {
    url = new URL(s.url);
  } catch {
    throw new Error(`SIGNER_URL: ${s.url}: not a URL (unix:///path/to/socket or https://host:port)`);
  }
  if (url.protocol === "unix:") {
    if (!url.pathname || url.pathname === "/") throw new Error(`SIGNER_URL: ${s.url}: no socket path`);
    return { kind: "unix", path: decodeURIComponent(url.pathname) };
  }
  if (url.protocol === "https:") {
    const read = (file: string | undefined, setting: string) => {
      if (!file) throw new Error(`${setting}: required with an https:// SIGNER_URL (mutual TLS)`);
      try {
        return readFileSync(file);
      } catch (e) {
        throw new Error(
          `${setting}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? "read failed"}`,
        );
      }
    };
    return {
      kind: "tls",
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || 443),
      ca: read(s.caFile, "SIGNER_CA"),
      cert: read(s.clientCertFile, "SIGNER_CLIENT_CERT"),
      key: read(s.clientKeyFile, "SIGNER_CLIENT_KEY"),
    };
  }
  throw new Error(`SIGNER_URL: ${s.url}: use unix:///path/to/socket or https://host:port`);
}

interface Pending {
  resolve(r: SignerResponse): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export class RemoteSigner implements Signer {
  readonly description: string;
  #publicKey: PublicKey | undefined;
  #issuerKey: PublicKey | undefined;
  #v2ExpirySeconds: number | undefined;
  #socket: Socket | undefined;
  #connecting: Promise<Socket> | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #timeoutMs: number;
  #closed = false;

  private constructor(
    private readonly endpoint: Endpoint,
    timeoutMs: number,
  ) {
    this.#timeoutMs = timeoutMs;
    this.description =
      endpoint.kind === "unix"
        ? `remote (unix:${endpoint.path})`
        : `remote (mTLS ${endpoint.host}:${endpoint.port})`;
  }

  /** Connects and reads the signer's active key; throws when the signer cannot be reached. */
  static async connect(settings: RemoteSignerSettings): Promise<RemoteSigner> {
    const signer = new RemoteSigner(signerEndpoint(settings), settings.timeoutMs ?? 2_000);
    try {
      const r = await signer.request({ op: "keys" });
      if (!r.ok || !("active" in r)) throw new Error(`the signer did not name its key: ${JSON.stringify(r)}`);
      signer.#publicKey = new PublicKey(r.active);
      if (r.issuer) signer.#issuerKey = new PublicKey(r.issuer);
      signer.#v2ExpirySeconds = r.v2ExpirySeconds;
    } catch (e) {
      signer.close();
      throw e;
    }
    return signer;
  }

  get publicKey(): PublicKey {
    return this.#publicKey as PublicKey;
  }

  /** How far ahead an RFQ v2 swap's expire_at may be for the signer to sign it (s), read at start. */
  get v2ExpirySeconds(): number | undefined {
    return this.#v2ExpirySeconds;
  }

  /** The signer's issuer key (SIGNER_ISSUER_KEYPAIR), read at start; undefined when it holds none. */
  get issuerKey(): PublicKey | undefined {
    return this.#issuerKey;
  }

  /**
   * A companion made by the signer service for a fill it co-signed for `quoteId`: it checks the fill,
   * the issuance caps in its own record, and signs the mint or burn with the issuer key it holds.
   */
  async companion(a: {
    quoteId: string;
    fill: VersionedTransaction;
    tipAccount: PublicKey;
  }): Promise<VersionedTransaction> {
    if (!this.#issuerKey) throw new Error(`the signer ${this.description} holds no issuer key`);
    const r = await this.request({
      op: "companion",
      quoteId: a.quoteId,
      transaction: Buffer.from(a.fill.serialize()).toString("base64"),
      tipAccount: a.tipAccount.toBase58(),
    });
    if (!r.ok) throw new SignerRefusal(r.code, r.context);
    if (!("companion" in r)) throw new Error("the signer answered a companion request without one");
    return VersionedTransaction.deserialize(Buffer.from(r.companion, "base64"));
  }

  /** The signer's keys as it advertises them now: the active one and every one it signs for. */
  async keys(): Promise<{ active: string; keys: string[] }> {
    const r = await this.request({ op: "keys" });
    if (!r.ok || !("active" in r)) throw new Error("the signer did not name its keys");
    return { active: r.active, keys: r.keys };
  }

  /**
   * Asks the signer to co-sign this fill for `context.quoteId`; adds the signature in place. Throws a
   * SignerRefusal with the signer's code when it refuses, an Error when it cannot be asked.
   */
  async sign(tx: VersionedTransaction, context?: SignContext | V2SignContext): Promise<void> {
    if (!context)
      throw new Error(
        "the remote signer signs fills and RFQ v2 swaps only (a quoteId or swapUuid is required)",
      );
    const transaction = Buffer.from(tx.serialize()).toString("base64");
    const r =
      "swapUuid" in context
        ? await this.request({
            op: "signV2",
            swapUuid: context.swapUuid,
            transaction,
            claimed: claimedWire(context.claimed),
          })
        : await this.request({ op: "sign", quoteId: context.quoteId, transaction });
    if (!r.ok) throw new SignerRefusal(r.code, r.context);
    if (!("signature" in r)) throw new Error("the signer answered a sign request without a signature");
    const maker = new PublicKey(r.maker);
    tx.addSignature(maker, bs58.decode(r.signature));
  }

  close(): void {
    this.#closed = true;
    this.#socket?.destroy();
    this.#failAll(new Error("the signer connection was closed"));
  }

  #failAll(e: Error): void {
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.reject(e);
    }
  }

  #open(): Promise<Socket> {
    if (this.#socket && !this.#socket.destroyed) return Promise.resolve(this.#socket);
    if (this.#connecting) return this.#connecting;
    const ep = this.endpoint;
    this.#connecting = new Promise<Socket>((resolve, reject) => {
      const socket: Socket =
        ep.kind === "unix"
          ? netConnect(ep.path)
          : tlsConnect({
              host: ep.host,
              port: ep.port,
              ca: ep.ca,
              cert: ep.cert,
              key: ep.key,
              minVersion: "TLSv1.3",
              ...(/^[\d.]+$|:/.test(ep.host) ? {} : { servername: ep.host }),
            });
      const ready = ep.kind === "unix" ? "connect" : "secureConnect";
      const feed = lineReader((line) => {
        let r: SignerResponse;
        try {
          r = JSON.parse(line) as SignerResponse;
        } catch {
          return;
        }
        const p = this.#pending.get(r.id);
        if (!p) return;
        this.#pending.delete(r.id);
        clearTimeout(p.timer);
        p.resolve(r);
      });
      socket.setNoDelay(true);
      socket.on("data", (chunk) => {
        if (!feed(chunk)) socket.destroy(new Error("the signer sent an over-long line"));
      });
      socket.once(ready, () => {
        this.#socket = socket;
        this.#connecting = undefined;
        resolve(socket);
      });
      socket.once("error", (e) => {
        this.#connecting = undefined;
        reject(new Error(`signer ${this.description}: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      });
      socket.once("close", () => {
        if (this.#socket === socket) this.#socket = undefined;
        this.#failAll(new Error(`signer ${this.description}: the connection closed`));
      });
    });
    return this.#connecting;
  }

  private async request(
    body:
      | { op: "keys" }
      | { op: "sign"; quoteId: string; transaction: string }
      | { op: "signV2"; swapUuid: string; transaction: string; claimed: ClaimedLevelsWire }
      | { op: "companion"; quoteId: string; transaction: string; tipAccount: string },
  ) {
    if (this.#closed) throw new Error("the signer connection was closed");
    const socket = await this.#open();
    const id = this.#nextId++;
    return new Promise<SignerResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`signer ${this.description}: no answer within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      socket.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }
}

/** The claimed level set as the wire carries it: bigints as decimal text. */
function claimedWire(c: V2SignContext["claimed"]): ClaimedLevelsWire {
  return {
    pair: c.pair,
    sequence: c.sequence.toString(),
    lotSizeBase: c.lotSizeBase.toString(),
    validUntilMs: c.validUntilMs,
    levels: c.levels.map((l) => ({ lots: l.lots.toString(), perLot: l.perLot.toString() })),
  };
}
