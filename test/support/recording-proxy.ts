/**
 * A recording HTTP proxy on loopback in front of a JSON-RPC server (the sandbox chain's): forwards every
 * request unchanged and keeps each request body, so a test can read exactly what a client sent its
 * RPC. It stands in for nothing: it only watches the wire.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordingProxy {
  url: string;
  /** Every request body received, in order (raw text as sent). */
  readonly bodies: string[];
  close(): Promise<void>;
}

export async function startRecordingProxy(upstream: string, port = 0): Promise<RecordingProxy> {
  const bodies: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    bodies.push(body.toString("utf8"));
    try {
      const answer = await fetch(`${upstream}${req.url ?? "/"}`, {
        method: req.method ?? "POST",
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        ...(req.method === "GET" || req.method === "HEAD" ? {} : { body }),
      });
      const out = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, {
        "content-type": answer.headers.get("content-type") ?? "application/json",
      });
      res.end(out);
    } catch {
      res.destroy();
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
