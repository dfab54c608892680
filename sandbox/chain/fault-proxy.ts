/**
 * A JSON-RPC proxy on loopback that stands in for the network path between the webhook and its RPC
 * node (`npm run chain`'s server here), or its block engine (the same server's `/api/v1/*`: the
 * request's path is kept), and that a test can cut. Faults:
 *
 *  - "pass":           forward every call (the default);
 *  - "refuse":         stop listening: new connections are refused (ECONNREFUSED), as when the node is
 *                      down; nothing reaches it. With `only`, the proxy goes down the moment one of
 *                      those methods arrives (that request is dropped unanswered, not forwarded);
 *  - "reset-before":   accept the request, then reset the connection without forwarding it: the
 *                      caller cannot tell whether it arrived (it did not);
 *  - "reset-after":    forward the request, let the node act on it, then reset the connection instead
 *                      of answering: the transaction was taken but the caller saw an error;
 *  - "blackhole":      accept the request and never answer (a stalled node);
 *  - "unavailable":    answer HTTP 503 without forwarding (an overloaded node or its load balancer).
 *
 * A fault applies to the JSON-RPC methods it is set for (`only`), or to every call. Open keep-alive
 * sockets are destroyed when the proxy starts refusing, as a restarted node would drop them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export type ProxyFault = "pass" | "refuse" | "reset-before" | "reset-after" | "blackhole" | "unavailable";

export interface FaultProxy {
  url: string;
  port: number;
  /** Sets the fault; `only` limits it to these JSON-RPC methods (every call otherwise). */
  set(fault: ProxyFault, only?: readonly string[]): Promise<void>;
  /** Calls seen per JSON-RPC method, and how many of them a fault hit. */
  readonly seen: Map<string, { calls: number; faulted: number }>;
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string, port = 0): Promise<FaultProxy> {
  let fault: ProxyFault = "pass";
  let only: ReadonlySet<string> | undefined;
  const seen = new Map<string, { calls: number; faulted: number }>();
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    let methods: string[] = [];
    try {
      const parsed = JSON.parse(body.toString()) as { method?: string } | { method?: string }[];
      methods = (Array.isArray(parsed) ? parsed : [parsed]).map((m) => String(m.method));
    } catch {}
    const hit = fault !== "pass" && (!only || methods.some((m) => only?.has(m)));
    for (const m of methods) {
      const s = seen.get(m) ?? { calls: 0, faulted: 0 };
      s.calls++;
      if (hit) s.faulted++;
      seen.set(m, s);
    }
    if (hit && fault === "refuse") {
      // Refusing only some methods: the node goes down as one of them arrives (nothing forwarded).
      void unlisten();
      return;
    }
    if (hit && fault === "reset-before") {
      req.socket.destroy();
      return;
    }
    if (hit && fault === "blackhole") return;
    if (hit && fault === "unavailable") {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("503 Service Unavailable");
      return;
    }
    let answer: Response;
    try {
      answer = await fetch(new URL(req.url ?? "/", upstream), {
        method: "POST",
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        body,
      });
    } catch {
      req.socket.destroy();
      return;
    }
    const text = await answer.text();
    if (hit && fault === "reset-after") {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, {
      "content-type": answer.headers.get("content-type") ?? "application/json",
    });
    res.end(text);
  };

  let server: Server | undefined;
  let boundPort = port;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((req, res) => void handle(req, res));
      s.on("connection", (sock) => {
        sockets.add(sock);
        sock.on("close", () => sockets.delete(sock));
      });
      s.once("error", reject);
      s.listen(boundPort, "127.0.0.1", () => {
        const addr = s.address();
        if (addr && typeof addr === "object") boundPort = addr.port;
        server = s;
        resolve();
      });
    });
  const unlisten = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      for (const sock of sockets) sock.destroy();
      if (!s) return resolve();
      s.close(() => resolve());
    });

  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${boundPort}`;
    },
    get port() {
      return boundPort;
    },
    seen,
    async set(next, methods) {
      only = methods ? new Set(methods) : undefined;
      if (next === "refuse" && !only) {
        fault = next;
        await unlisten();
        return;
      }
      fault = next;
      if (!server) await listen();
    },
    close: unlisten,
  };
}
