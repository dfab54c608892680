/**
 * The simulator's outbound HTTP: keep-alive pools from node:http (the operator holds connections
 * open to every maker; a new TCP handshake per quote would eat the 250 ms budget on a real network).
 * Failures are values: a timeout or a refused connection is an answer the caller decides on.
 */
import http from "node:http";

export type HttpResult =
  | { ok: true; status: number; body: string; headers: http.IncomingHttpHeaders }
  | { ok: false; error: "timeout" | "network"; detail: string };

export interface HttpRequestOptions {
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange (connect, send, read the body) must finish within this. */
  timeoutMs: number;
  /** Largest body read; a larger answer is a network error (a maker is not a file server). */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY = 1 << 20;

/** A keep-alive HTTP/1.1 client; one per simulator, shared by all webhooks. */
export class HttpClient {
  readonly agent: http.Agent;

  constructor(opts: { maxSockets?: number } = {}) {
    this.agent = new http.Agent({
      keepAlive: true,
      keepAliveMsecs: 10_000,
      maxSockets: opts.maxSockets ?? 256,
      maxFreeSockets: opts.maxSockets ?? 256,
      scheduling: "lifo",
    });
  }

  request(url: string | URL, opts: HttpRequestOptions): Promise<HttpResult> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: HttpResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.body !== undefined) {
        headers["content-type"] ??= "application/json";
        headers["content-length"] = String(Buffer.byteLength(opts.body));
      }
      let req: http.ClientRequest;
      try {
        req = http.request(url, { method: opts.method, headers, agent: this.agent });
      } catch (e) {
        resolve({ ok: false, error: "network", detail: (e as Error).message });
        return;
      }
      const timer = setTimeout(() => {
        finish({ ok: false, error: "timeout", detail: `no answer within ${opts.timeoutMs} ms` });
        req.destroy();
      }, opts.timeoutMs);
      const limit = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > limit) {
            finish({ ok: false, error: "network", detail: `body larger than ${limit} bytes` });
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on("end", () =>
          finish({
            ok: true,
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            headers: res.headers,
          }),
        );
        res.on("error", (e) => finish({ ok: false, error: "network", detail: e.message }));
      });
      req.on("error", (e) => finish({ ok: false, error: "network", detail: e.message }));
      req.end(opts.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
