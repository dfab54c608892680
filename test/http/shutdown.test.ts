/**
 * Graceful shutdown of the real entry point (`node --import tsx src/main.ts`, paper setup, signals to
 * node itself) as a load balancer sees it: after SIGTERM /ready is 503 "draining" at once, new
 * connections are still served during SHUTDOWN_DRAIN_MS, answers carry `Connection: close`, a request
 * in flight at the signal is answered, and the process exits 0 soon after the drain. A second
 * SIGTERM exits 1 with a line naming what was cut. Times are bounds with wide margins, not speed.
 */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tooling/processes.ts";
import { logLines, startWebhook, type WebhookProcess } from "../support/process.ts";
import { quoteBody } from "../support/quotes.ts";

const DRAIN_MS = 1_500;

async function ready(url: string, w: WebhookProcess): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    if (w.proc.exitCode !== null) throw new Error(`webhook exited early:\n${w.stderr()}\n${w.stdout()}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) return;
    } catch {}
    if (Date.now() > until) throw new Error("webhook not ready within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A raw keep-alive connection: `request` writes one HTTP/1.1 request (optionally holding back the last
 * bytes of its body) and resolves with the status line and headers of the answer.
 */
function rawConnection(port: number) {
  const socket = connect(port, "127.0.0.1");
  let buffer = "";
  let waiting: ((head: string) => void) | undefined;
  let closed = false;
  socket.on("data", (d) => {
    buffer += d.toString();
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0 || !waiting) return;
    const head = buffer.slice(0, end);
    const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
    if (buffer.length < end + 4 + len) return;
    buffer = buffer.slice(end + 4 + len);
    const w = waiting;
    waiting = undefined;
    w(head);
  });
  socket.on("close", () => {
    closed = true;
  });
  return {
    get closed() {
      return closed;
    },
    closedPromise: new Promise<void>((resolve) => socket.on("close", () => resolve())),
    /** Sends everything but the last `holdBack` bytes; `finish()` sends them. */
    send(method: string, path: string, body = "", holdBack = 0) {
      const head =
        `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-start: ${Date.now()}\r\nx-request-timeout: 250\r\n\r\n`;
      const all = head + body;
      const answer = new Promise<string>((resolve) => {
        waiting = resolve;
      });
      socket.write(all.slice(0, all.length - holdBack));
      return { answer, finish: () => socket.write(all.slice(all.length - holdBack)) };
    },
    end: () => socket.destroy(),
  };
}

describe("SIGTERM", () => {
  it("drains: /ready 503 at once, new connections served with Connection: close, in-flight answered, exit 0", {
    timeout: 90_000,
  }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const w = startWebhook({ PORT: String(port), HOST: "127.0.0.1", SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
    try {
      await ready(url, w);
      // A keep-alive connection that has already been used, and a request whose body is still arriving.
      const kept = rawConnection(port);
      expect((await kept.send("GET", "/health").answer).split("\r\n")[0]).toMatch(/ 200 /);
      const slow = rawConnection(port);
      const inFlight = slow.send("POST", "/quote", JSON.stringify(quoteBody()), 5);

      const signalAt = Date.now();
      w.proc.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 150));

      const readyAnswer = await fetch(`${url}/ready`);
      expect(readyAnswer.status).toBe(503);
      expect(await readyAnswer.json()).toMatchObject({ status: "draining" });
      expect(readyAnswer.headers.get("connection")).toBe("close");

      // A new connection during the drain is still served.
      const fresh = await fetch(`${url}/tokens`);
      expect(fresh.status).toBe(200);

      // The kept-alive connection gets its answer, then is closed by the server.
      const head = await kept.send("GET", "/health").answer;
      expect(head).toMatch(/ 200 /);
      expect(head.toLowerCase()).toContain("connection: close");
      await kept.closedPromise;

      // The request in flight at the signal completes after the drain began.
      await new Promise((r) => setTimeout(r, DRAIN_MS / 2));
      inFlight.finish();
      const slowHead = await inFlight.answer;
      expect(slowHead).toMatch(/ (200|404) /);

      const exit = await w.exited;
      expect(exit.code).toBe(0);
      expect(exit.atMs - signalAt).toBeGreaterThanOrEqual(DRAIN_MS - 50);
      expect(exit.atMs - signalAt).toBeLessThan(DRAIN_MS + 5_000);
      const msgs = logLines(w.stdout()).map((l) => l.msg);
      expect(msgs).toContain("shut down cleanly");
      slow.end();
    } finally {
      w.proc.kill("SIGKILL");
    }
  });

  it("exits 1 on a second SIGTERM, naming the requests it cut", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const w = startWebhook({ PORT: String(port), HOST: "127.0.0.1", SHUTDOWN_DRAIN_MS: "20000" });
    try {
      await ready(url, w);
      const slow = rawConnection(port);
      slow.send("POST", "/quote", JSON.stringify(quoteBody()), 5);
      await new Promise((r) => setTimeout(r, 200));
      w.proc.kill("SIGTERM");
      // A second signal as a person sends it: well after the first (DUPLICATE_SIGNAL_MS).
      await new Promise((r) => setTimeout(r, 1_000));
      w.proc.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code).toBe(1);
      const forced = logLines(w.stdout()).find((l) => l.reason === "second SIGTERM");
      expect(forced?.msg).toMatch(/cut 1 request\(s\) in flight \(1 POST \/quote\)/);
      slow.end();
    } finally {
      w.proc.kill("SIGKILL");
    }
  });
});
