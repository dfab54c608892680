/**
 * A minimal HTTP/1.1 keep-alive client on raw sockets, for the load generator only. node:http costs
 * a few hundred microseconds of CPU per request on the client side, which on a small machine steals
 * the very core the webhook needs; writing prebuilt request bytes and reading just the status line,
 * Content-Length and body costs a fraction of that. One request per connection at a time (no
 * pipelining, as the operator's client does); connections are opened on demand up to a cap and
 * reused LIFO, never after an answer that says `Connection: close` (a draining webhook's). Supports
 * exactly what the webhook answers with: Content-Length or chunked bodies.
 */
import net from "node:net";

export interface RawResponse {
  status: number;
  body: Buffer;
}

export type RawResult =
  | { ok: true; res: RawResponse }
  | { ok: false; error: "timeout" | "network"; detail: string };

interface Pending {
  resolve: (r: RawResult) => void;
  timer: NodeJS.Timeout;
}

const CRLFCRLF = Buffer.from("\r\n\r\n");

class Conn {
  readonly socket: net.Socket;
  #buf: Buffer = Buffer.alloc(0);
  #pending: Pending | undefined;
  #headerEnd = -1;
  #status = 0;
  #contentLength = -1;
  #chunked = false;
  /** The answer said `Connection: close`: the server closes this connection after it. */
  #closing = false;
  dead = false;

  readonly #onDead: (c: Conn) => void;

  constructor(host: string, port: number, onFree: (c: Conn) => void, onDead: (c: Conn) => void) {
    this.#onDead = onDead;
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.on("data", (d: Buffer) => {
      if (this.dead) return;
      this.#buf = this.#buf.length ? Buffer.concat([this.#buf, d]) : d;
      this.#parse(onFree);
    });
    this.socket.on("error", (e) => this.#die(e.message));
    this.socket.on("close", () => this.#die("connection closed"));
  }

  /** Fails the request in flight, if any, and takes this connection out of the pool for good. */
  #die(why: string): void {
    if (this.dead) return;
    this.dead = true;
    this.#fail("network", why);
    this.socket.destroy();
    this.#onDead(this);
  }

  send(bytes: Buffer, timeoutMs: number, resolve: (r: RawResult) => void): void {
    const timer = setTimeout(() => {
      this.#fail("timeout", `no answer within ${timeoutMs} ms`);
      // The answer may still come; this connection cannot be trusted to be in step any more.
      this.#die("timed out");
    }, timeoutMs);
    this.#pending = { resolve, timer };
    this.socket.write(bytes);
  }

  #fail(error: "timeout" | "network", detail: string): void {
    const p = this.#pending;
    if (!p) return;
    this.#pending = undefined;
    clearTimeout(p.timer);
    p.resolve({ ok: false, error, detail });
  }

  #parse(onFree: (c: Conn) => void): void {
    if (this.#headerEnd < 0) {
      const i = this.#buf.indexOf(CRLFCRLF);
      if (i < 0) return;
      this.#headerEnd = i + 4;
      const head = this.#buf.subarray(0, i).toString("latin1");
      this.#status = Number(head.slice(9, 12));
      const lower = head.toLowerCase();
      const cl = lower.indexOf("\r\ncontent-length:");
      // Content-Length may be the last header (@hono/node-server 2.x sends it last): then no CRLF
      // follows it inside `head`, and the value runs to the end.
      const clEnd = lower.indexOf("\r\n", cl + 17);
      this.#contentLength =
        cl >= 0 ? Number.parseInt(lower.slice(cl + 17, clEnd < 0 ? undefined : clEnd), 10) : -1;
      this.#chunked = lower.includes("\r\ntransfer-encoding: chunked");
      this.#closing = lower.includes("\r\nconnection: close");
    }
    let body: Buffer | undefined;
    let consumed = 0;
    if (this.#contentLength >= 0) {
      if (this.#buf.length - this.#headerEnd < this.#contentLength) return;
      body = this.#buf.subarray(this.#headerEnd, this.#headerEnd + this.#contentLength);
      consumed = this.#headerEnd + this.#contentLength;
    } else if (this.#chunked) {
      const parts: Buffer[] = [];
      let at = this.#headerEnd;
      for (;;) {
        const eol = this.#buf.indexOf("\r\n", at);
        if (eol < 0) return;
        const size = Number.parseInt(this.#buf.subarray(at, eol).toString("latin1"), 16);
        if (this.#buf.length < eol + 2 + size + 2) return;
        if (size === 0) {
          consumed = eol + 4;
          break;
        }
        parts.push(this.#buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      return; // an answer without a length: wait for close (handled as a network error)
    }
    const status = this.#status;
    this.#buf = this.#buf.subarray(consumed);
    this.#headerEnd = -1;
    const p = this.#pending;
    this.#pending = undefined;
    if (p) {
      clearTimeout(p.timer);
      p.resolve({ ok: true, res: { status, body } });
    }
    // As HTTP/1.1 clients do (the operator's among them): a connection the server is closing is not
    // used again (a request written on it meanwhile would fail as no answer).
    if (this.#closing) this.#die("closed by the server after its answer");
    else onFree(this);
  }
}

interface Queued {
  bytes: Buffer;
  timeoutMs: number;
  resolve: (r: RawResult) => void;
}

export class RawHttpPool {
  readonly #host: string;
  readonly #port: number;
  readonly #max: number;
  readonly #idle: Conn[] = [];
  readonly #all = new Set<Conn>();
  readonly #queue: Queued[] = [];
  #closed = false;

  constructor(url: URL, maxConnections: number) {
    this.#host = url.hostname;
    this.#port = Number(url.port || 80);
    this.#max = maxConnections;
  }

  get connections(): number {
    return this.#all.size;
  }

  /** Sends prebuilt request bytes; queued (the wait counts) when every connection is busy. */
  request(bytes: Buffer, timeoutMs: number): Promise<RawResult> {
    return new Promise((resolve) => {
      const c = this.#take();
      if (c) c.send(bytes, timeoutMs, resolve);
      else this.#queue.push({ bytes, timeoutMs, resolve });
    });
  }

  #take(): Conn | undefined {
    if (this.#closed) return undefined;
    while (this.#idle.length) {
      const c = this.#idle.pop() as Conn;
      if (!c.dead) return c;
    }
    if (this.#all.size >= this.#max) return undefined;
    const c = new Conn(
      this.#host,
      this.#port,
      (free) => this.#release(free),
      (dead) => {
        this.#all.delete(dead);
        this.#drain();
      },
    );
    this.#all.add(c);
    return c;
  }

  /** Serves queued requests on new connections (after a connection died while others wait). */
  #drain(): void {
    while (this.#queue.length) {
      const c = this.#take();
      if (!c) return;
      const next = this.#queue.shift() as Queued;
      c.send(next.bytes, next.timeoutMs, next.resolve);
    }
  }

  #release(c: Conn): void {
    const next = this.#queue.shift();
    if (next) c.send(next.bytes, next.timeoutMs, next.resolve);
    else this.#idle.push(c);
  }

  close(): void {
    this.#closed = true;
    for (const c of this.#all) c.socket.destroy();
    this.#all.clear();
    this.#idle.length = 0;
  }
}
