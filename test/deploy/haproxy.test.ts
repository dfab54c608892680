/**
 * deploy/haproxy/haproxy.cfg, run by a real HAProxy (Debian's `haproxy`) exactly as shipped, its
 * settings through the environment (tooling/haproxy.ts):
 *
 * - in front of a webhook stand-in that holds quotes until told (so that its quote slots and the queue
 *   fill on cue): the quote past maxconn + queue is refused at once with the webhook's own 404 and
 *   never forwarded; one that waits out the queue timeout gets the same 404, never HAProxy's 503; a
 *   /swap passes while every quote slot is taken;
 * - in front of a webhook found by name (a DNS stand-in for compose's): when the name moves to a new
 *   address, as compose recreating the webhook's container moves it, requests follow within seconds;
 * - in front of the real webhook (the sandbox stack, and an operator simulator registered with the
 *   proxy's address): a swap lands end to end through it, and its refusal is byte for byte the
 *   webhook's own OVERLOADED answer.
 *
 * Without haproxy on the PATH these tests are skipped, except when REQUIRE_HAPROXY=1 (CI sets it in
 * .ci/run, after installing the package): then they fail, so CI can never pass them by not running them.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorChainOverRpc } from "../../sandbox/operator/rpc-chain.ts";
import { type OperatorServer, startOperator } from "../../sandbox/operator/server.ts";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { OVERLOADED_MESSAGE } from "../../src/http/shed.ts";
import {
  HAPROXY_CONFIG,
  haproxyVersion,
  PROXY_DEFAULTS,
  type ProxyHandle,
  proxyEnv,
  startHaproxy,
} from "../../tooling/haproxy.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { startDnsStandIn } from "../support/dns.ts";
import { landSmallSwap } from "../support/land.ts";
import { fileTempDir } from "../support/tmp.ts";

const available = haproxyVersion() !== undefined;
const required = process.env.REQUIRE_HAPROXY === "1";
const OVERLOADED = { message: OVERLOADED_MESSAGE };

/** The raw answer the file sends for a refused quote: status line, headers, body. */
function overloadedFile(): { status: number; headers: Record<string, string>; body: string } {
  const raw = readFileSync(join(REPO_ROOT, "deploy/haproxy/overloaded.http"), "utf8");
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

const post = (url: string, body = "{}") =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });

/** A webhook stand-in: quotes are held until `release()`; everything else is answered at once. */
class HoldingWebhook {
  readonly server: Server;
  readonly held: ServerResponse[] = [];
  quotesSeen = 0;
  swapsSeen = 0;

  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on("end", () => {
        if (req.url?.endsWith("/quote")) {
          this.quotesSeen++;
          this.held.push(res);
          return;
        }
        if (req.url?.endsWith("/swap")) this.swapsSeen++;
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  release(): void {
    for (const res of this.held.splice(0)) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"quoted":true}');
    }
  }

  /** Counts afresh and sends one quote through `url`, resolved once the stand-in holds it. */
  async holdOne(url: string): Promise<{ first: Promise<Response> }> {
    this.quotesSeen = 0;
    const first = post(url);
    await this.waitForQuotes(1);
    return { first };
  }

  async waitForQuotes(n: number): Promise<void> {
    const until = Date.now() + 5_000;
    while (this.quotesSeen < n) {
      if (Date.now() > until) throw new Error(`the stand-in saw ${this.quotesSeen} quotes, expected ${n}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

describe.skipIf(!available && !required)(
  "HAProxy in front of the webhook (REQUIRE_HAPROXY=1 makes a missing haproxy fail)",
  () => {
    const dir = fileTempDir("haproxy");

    it("haproxy is on the PATH", () => {
      expect(available, "haproxy not found: sudo apt-get install -y haproxy").toBe(true);
    });

    it("`haproxy -c` accepts the shipped file with the defaults docker-compose.yml gives it", () => {
      const compose = readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8");
      expect(compose).toContain(
        `PROXY_WEBHOOK_MAXCONN: \${PROXY_WEBHOOK_MAXCONN:-${PROXY_DEFAULTS.maxconn}}`,
      );
      expect(compose).toContain(`PROXY_QUOTE_QUEUE: \${PROXY_QUOTE_QUEUE:-${PROXY_DEFAULTS.queue}}`);
      expect(compose).toContain(`PROXY_QUOTE_QUEUE_MS: \${PROXY_QUOTE_QUEUE_MS:-${PROXY_DEFAULTS.queueMs}}`);
      const r = spawnSync("haproxy", ["-c", "-f", HAPROXY_CONFIG], {
        encoding: "utf8",
        env: { ...process.env, ...proxyEnv(":8080", "127.0.0.1:8090", "127.0.0.1:8405", PROXY_DEFAULTS) },
      });
      expect(`${r.stdout}${r.stderr}`).toContain("Configuration file is valid");
      expect(r.status).toBe(0);
    });

    describe("before a webhook stand-in that holds every quote (one slot, a queue of one)", () => {
      let hook: HoldingWebhook;
      let proxy: ProxyHandle;
      let quoteUrl: string;

      beforeAll(async () => {
        hook = new HoldingWebhook();
        const addr = await hook.listen();
        proxy = await startHaproxy(addr, join(dir, "stand-in.log"), { maxconn: 1, queue: 1, queueMs: 100 });
        quoteUrl = `${proxy.url}/jupiter/rfq/quote`;
      });
      afterAll(async () => {
        hook?.release();
        await proxy?.child.stop();
        await new Promise((r) => hook?.server.close(r));
      });

      it("refuses the quote past the slot and the queue at once with the webhook's own 404, never forwarding it", async () => {
        const { first } = await hook.holdOne(quoteUrl);
        const queued = post(quoteUrl);
        // The queued quote is in HAProxy's queue before the next one arrives.
        await new Promise((r) => setTimeout(r, 30));
        const refused = await post(quoteUrl);
        expect(refused.status).toBe(404);
        expect(refused.headers.get("content-type")).toBe("application/json");
        expect(await refused.json()).toEqual(OVERLOADED);
        expect(hook.quotesSeen).toBe(1);
        // Counted where the README says: requests to the backend `shed`.
        const metrics = await (await fetch(proxy.metricsUrl)).text();
        expect(metrics).toMatch(/^haproxy_backend_http_requests_total\{proxy="shed"\} 1$/m);
        hook.release();
        expect((await first).status).toBe(200);
        // The queued quote reaches the webhook once the slot frees (held, then released).
        await hook.waitForQuotes(2);
        hook.release();
        expect((await queued).status).toBe(200);
      });

      it("answers a quote that waited out the queue timeout (100 ms) with the same 404, not HAProxy's 503", async () => {
        const { first } = await hook.holdOne(quoteUrl);
        const t0 = performance.now();
        const waited = await post(quoteUrl);
        const ms = performance.now() - t0;
        expect(waited.status).toBe(404);
        expect(await waited.json()).toEqual(OVERLOADED);
        expect(ms).toBeGreaterThanOrEqual(90);
        expect(hook.quotesSeen).toBe(1);
        hook.release();
        expect((await first).status).toBe(200);
      });

      it("forwards a /swap while the quote slot and queue are full: a swap is never queued behind quotes or refused", async () => {
        const { first } = await hook.holdOne(quoteUrl);
        const queued = post(quoteUrl);
        const swap = await post(`${proxy.url}/jupiter/rfq/swap`);
        expect(swap.status).toBe(200);
        expect(hook.swapsSeen).toBe(1);
        // Let both quotes finish: the queued one either waited out the queue (404) or reached the
        // stand-in after the first and is released by the next round.
        const releasing = setInterval(() => hook.release(), 10);
        try {
          expect((await first).status).toBe(200);
          expect([200, 404]).toContain((await queued).status);
        } finally {
          clearInterval(releasing);
        }
      });
    });

    it("follows a webhook found by name to its new address within seconds (compose recreating its container), for quotes and the rest", {
      timeout: 60_000,
    }, async () => {
      const dns = await startDnsStandIn();
      const name = "webhook.compose.test";
      const answering = (who: string) =>
        createServer((req, res) => {
          req.resume();
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ who }));
        });
      const first = answering("first");
      const second = answering("second");
      let proxy: ProxyHandle | undefined;
      try {
        await new Promise<void>((r) => first.listen(0, "127.0.0.1", r));
        const port = (first.address() as AddressInfo).port;
        // The same port at another address, as a recreated container keeps its port and not its IP.
        await new Promise<void>((r) => second.listen(port, "127.0.0.2", r));
        dns.set(name, "127.0.0.1");
        proxy = await startHaproxy(`${name}:${port}`, join(dir, "by-name.log"), PROXY_DEFAULTS, dns.addr);
        const url = proxy.url;
        const who = async () => {
          const [health, quote] = await Promise.all([
            fetch(`${url}/health`).then((r) => (r.ok ? r.json() : { who: r.status })),
            post(`${url}/jupiter/rfq/quote`).then((r) => (r.ok ? r.json() : { who: r.status })),
          ]);
          return [(health as { who: unknown }).who, (quote as { who: unknown }).who];
        };
        const until = async (want: string, ms: number) => {
          const end = Date.now() + ms;
          let seen: unknown[] = [];
          while (Date.now() < end) {
            seen = await who().catch((e: Error) => [e.message]);
            if (seen.every((w) => w === want)) return performance.now();
            await new Promise((r) => setTimeout(r, 100));
          }
          throw new Error(`not every request reached "${want}" within ${ms} ms (last: ${seen.join(", ")})`);
        };
        await until("first", 10_000);
        // The container is recreated: the old address stops answering, the name moves.
        const moved = performance.now();
        dns.set(name, "127.0.0.2");
        await new Promise((r) => first.close(r));
        const followed = await until("second", 10_000);
        // The file asks again every second (timeout resolve): within seconds, not at the next restart.
        expect(followed - moved).toBeLessThan(6_000);
        expect(dns.answered(name)).toBeGreaterThanOrEqual(2);
      } finally {
        await proxy?.child.stop();
        first.close();
        await new Promise((r) => second.close(r));
        await dns.close();
      }
    });

    describe("before the real webhook", () => {
      const apiKey = "haproxy-test-key-0123456789abcdef";
      let stack: Stack;
      let proxy: ProxyHandle;
      let operator: OperatorServer;

      beforeAll(async () => {
        stack = await startStack({
          dir: join(dir, "stack"),
          takers: [{ name: "p", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n } }],
          webhookLogLevel: "warn",
          webhookApiKey: apiKey,
        });
        proxy = await startHaproxy(new URL(stack.webhookUrl).host, join(dir, "webhook-proxy.log"));
        // A second operator simulator, registered with the proxy's address: every call it makes
        // (token lists, quote, swap) crosses HAProxy.
        operator = await startOperator({
          chain: operatorChainOverRpc(stack.chainUrl),
          webhooks: [{ name: "maker", baseUrl: `${proxy.url}${new URL(stack.webhookUrl).pathname}`, apiKey }],
          port: 0,
        });
      }, 180_000);
      afterAll(async () => {
        await operator?.close();
        await proxy?.child.stop();
        await stack?.close();
      });

      it("lands a swap end to end through it: the operator's token lists, quote and swap reach the webhook with their API key", async () => {
        expect(operator.firstSync.get("maker")?.kind).not.toBe("failed");
        expect(await landSmallSwap(new TakerClient(operator.url, stack.chainUrl), stack)).toBeDefined();
        const metrics = await (await fetch(proxy.metricsUrl)).text();
        expect(metrics).toMatch(/haproxy_backend_http_responses_total\{proxy="quotes",code="2xx"\} [1-9]/);
        expect(metrics).toMatch(/haproxy_backend_http_responses_total\{proxy="webhook",code="2xx"\} [1-9]/);
      });

      it("refuses in the webhook's own words: its OVERLOADED answer and the proxy's have the same status, content type and body", async () => {
        const sentAt = Date.now() - 160;
        const r = await fetch(`${stack.webhookUrl}/quote`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": apiKey,
            "x-request-start": String(sentAt),
            "x-request-timeout": "250",
          },
          body: "{}",
        });
        const own = { status: r.status, type: r.headers.get("content-type"), body: await r.text() };
        const file = overloadedFile();
        expect(own.status).toBe(404);
        expect(JSON.parse(own.body)).toEqual(OVERLOADED);
        expect(file.status).toBe(own.status);
        expect(file.headers["content-type"]).toBe(own.type);
        expect(file.body).toBe(own.body);
        expect(Number(file.headers["content-length"])).toBe(Buffer.byteLength(file.body));
      });
    });
  },
);
