/**
 * Fault: the RPC stalls, answers 503, drops connections, through the proxy in front of the local
 * chain's JSON-RPC server (sandbox/chain/fault-proxy.ts), with no swap traffic at all: the webhook's
 * fill-path health (src/health/fill-path.ts) must see each fault on its own probes and turn quotes
 * into fast 404s `RPC_UNAVAILABLE` (counted in rfq_no_quote_total, /ready naming `fill.rpc`, one log
 * line entering and one leaving), then price again within a second of the RPC answering again.
 * The block engine (BUNDLE_URL, behind its own proxy) the same way, for the quotes that need it only
 * (an issued token minted with its fill): `BUNDLE_UNAVAILABLE`, other pairs priced throughout.
 * Figures: how long each fault took to be seen, the slowest 404 while it lasted, time to recover.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ProxyFault } from "../../sandbox/chain/fault-proxy.ts";
import { startPostgres } from "../../tooling/processes.ts";
import { MINT } from "../support/config.ts";
import { logLines } from "../support/process.ts";
import { report } from "./load.ts";
import { API_KEY, type FaultStack, faultStack, metric, quoteRequest } from "./stack.ts";

let stack: FaultStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** One quote as the operator sends it (`body`: a small USDC -> SOL by default): its status, message and time. */
async function quote(
  s: FaultStack,
  body: Record<string, unknown> = quoteRequest(),
): Promise<{ status: number; message: string; ms: number }> {
  const t0 = Date.now();
  const res = await fetch(`${s.url}/quote`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": API_KEY,
      "x-request-start": String(t0),
      "x-request-timeout": "250",
    },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { message?: string };
  return { status: res.status, message: answer.message ?? "", ms: Date.now() - t0 };
}

/** Quotes every 25 ms until `until` says stop (or 15 s); every answer seen. */
async function quoteUntil(
  s: FaultStack,
  until: (q: { status: number; message: string }) => boolean,
  body: () => Record<string, unknown> = quoteRequest,
): Promise<{ answers: { status: number; message: string; ms: number }[]; at: number }> {
  const answers: { status: number; message: string; ms: number }[] = [];
  const end = Date.now() + 15_000;
  for (;;) {
    const q = await quote(s, body());
    answers.push(q);
    if (until(q) || Date.now() > end) return { answers, at: Date.now() };
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * One outage: `cut` it, quote until the first 404 naming `reason`, then 10 more (each a fast 404 with
 * the reason, counted, /ready's `fill.<dependency>` false), `restore` it, and quote until priced.
 * Returns the figures; `restore` resolves at the moment the dependency answers again. With `only`,
 * the dependency is on some fills' path only: `body` asks for one of those, and a quote for any other
 * pair is priced throughout; /ready lists the condition `fill.<dependency>` and stays 200.
 */
async function outage(
  s: FaultStack,
  o: {
    reason: string;
    dependency: string;
    /** Names the outage in a failed assertion. */
    what: string;
    cut: () => Promise<void>;
    restore: () => Promise<void>;
    only?: { body: () => Record<string, unknown> };
  },
): Promise<string> {
  const body = o.only?.body ?? quoteRequest;
  const before = await metric(s, "rfq_no_quote_total", { reason: o.reason });
  await o.cut();
  const cutAt = Date.now();
  const down = await quoteUntil(s, (q) => q.status === 404 && q.message.includes(o.reason), body);
  const seenMs = down.at - cutAt;
  const held: { status: number; message: string; ms: number }[] = [];
  const others: { status: number; message: string; ms: number }[] = [];
  for (let i = 0; i < 10; i++) {
    held.push(await quote(s, body()));
    if (o.only) others.push(await quote(s));
  }
  const ready = await fetch(`${s.opsUrl}/ready`);
  const readyBody = (await ready.json()) as {
    checks?: Record<string, boolean>;
    conditions?: Record<string, string>;
  };
  const counted = (await metric(s, "rfq_no_quote_total", { reason: o.reason })) - before;

  await o.restore();
  const backAt = Date.now();
  const back = await quoteUntil(s, (q) => q.status === 200, body);
  const recoveredMs = back.at - backAt;

  expect(held.map((q) => q.status)).toEqual(held.map(() => 404));
  expect(held.every((q) => q.message.includes(o.reason))).toBe(true);
  expect(Math.max(...held.map((q) => q.ms))).toBeLessThan(250);
  expect(counted).toBeGreaterThanOrEqual(held.length);
  if (o.only) {
    // The other pairs are filled without it: priced throughout, and the instance stays in rotation.
    expect(
      others.map((q) => q.status),
      `${o.what}: other pairs' quotes`,
    ).toEqual(others.map(() => 200));
    expect(ready.status).toBe(200);
    expect(readyBody.conditions?.[`fill.${o.dependency}`]).toContain(o.reason);
  } else {
    expect(ready.status).toBe(503);
    expect(readyBody.checks?.[`fill.${o.dependency}`]).toBe(false);
  }
  expect(back.answers.at(-1)?.status).toBe(200);
  // The contract's figure: priced again within one second of the dependency answering.
  expect(recoveredMs, `${o.what}: first priced quote after recovery (ms)`).toBeLessThan(1_000);
  return (
    `seen in ${seenMs} ms; slowest 404 while down ${Math.max(...held.map((q) => q.ms))} ms; ` +
    `first priced quote ${recoveredMs} ms after recovery`
  );
}

/** One line entering and one leaving per outage, not one per quote. */
function expectOneLineEach(s: FaultStack, outages: number): void {
  const lines = logLines(s.webhook.stdout());
  const entered = lines.filter((l) => String(l.msg).startsWith("fill path: dependency failing"));
  const left = lines.filter((l) => String(l.msg).startsWith("fill path: dependency answering again"));
  expect(entered.length).toBe(outages);
  expect(left.length).toBe(outages);
}

describe("fault: a dependency of the fill failing with no swap traffic", () => {
  it("turns quotes into fast RPC_UNAVAILABLE 404s while the RPC stalls, answers 503 or drops connections, and prices again within 1 s of recovery", {
    timeout: 180_000,
  }, async () => {
    const s = await faultStack({ env: { LOG_LEVEL: "info" } });
    stack = s;
    expect((await quote(s)).status).toBe(200);
    const faults: ProxyFault[] = ["blackhole", "unavailable", "reset-before"];
    const figures: Record<string, string> = {};
    for (const fault of faults) {
      figures[fault] = await outage(s, {
        reason: "RPC_UNAVAILABLE",
        dependency: "rpc",
        what: `RPC ${fault}`,
        cut: () => s.proxy.set(fault),
        restore: () => s.proxy.set("pass"),
      });
    }
    report("the RPC failing with no swap traffic", figures);
    expectOneLineEach(s, faults.length);
  });

  it("turns quotes into fast SIGNER_UNAVAILABLE 404s while the signer service is down, and prices again within 1 s of its restart", {
    timeout: 180_000,
  }, async () => {
    const s = await faultStack({ env: { LOG_LEVEL: "info" }, signer: true });
    stack = s;
    expect((await quote(s)).status).toBe(200);
    const signer = s.signer as NonNullable<FaultStack["signer"]>;
    const figures: Record<string, string> = {};
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      figures[`signer ${signal} and restart`] = await outage(s, {
        reason: "SIGNER_UNAVAILABLE",
        dependency: "signer",
        what: `signer ${signal}`,
        cut: () => signer.stop(signal),
        // Resolves once its socket is there: the signer answers from then on.
        restore: () => signer.start(),
      });
    }
    report("the signer service restarted", figures);
    expectOneLineEach(s, 2);
  });

  it("turns quotes into fast LEDGER_UNAVAILABLE 404s while PostgreSQL is stopped, and prices again within 1 s of its start", {
    timeout: 180_000,
  }, async () => {
    const pg = await startPostgres();
    try {
      const s = await faultStack({ env: { LOG_LEVEL: "info", LEDGER: "on", DATABASE_URL: pg.url } });
      stack = s;
      expect((await quote(s)).status).toBe(200);
      const figures = {
        "PostgreSQL stopped and started": await outage(s, {
          reason: "LEDGER_UNAVAILABLE",
          dependency: "ledger",
          what: "PostgreSQL stopped",
          cut: async () => pg.halt(),
          // pg_ctl start -w returns once the server accepts connections.
          restore: async () => pg.resume(),
        }),
      };
      report("the ledger's PostgreSQL stopped", figures);
      expectOneLineEach(s, 1);
    } finally {
      await stack?.close();
      stack = undefined;
      await pg.stop();
    }
  });

  it("turns quotes of the issued token (minted with the fill in a bundle) into fast BUNDLE_UNAVAILABLE 404s while the block engine stalls, answers 503 or drops connections, other pairs priced throughout, and prices it again within 1 s of recovery", {
    timeout: 180_000,
  }, async () => {
    const s = await faultStack({ env: { LOG_LEVEL: "info" }, issuedToken: true });
    stack = s;
    const bundleProxy = s.bundleProxy as NonNullable<FaultStack["bundleProxy"]>;
    // 10 TBILL bought with USDC: the maker holds none, so it is minted in the fill's bundle.
    const buy = () =>
      quoteRequest({ tokenIn: MINT.USDC, tokenOut: s.issuedMint, amount: "10000000", quoteType: "exactOut" });
    expect((await quote(s, buy())).status).toBe(200);
    const faults: ProxyFault[] = ["blackhole", "unavailable", "reset-before"];
    const figures: Record<string, string> = {};
    for (const fault of faults) {
      figures[fault] = await outage(s, {
        reason: "BUNDLE_UNAVAILABLE",
        dependency: "bundle",
        what: `block engine ${fault}`,
        cut: () => bundleProxy.set(fault),
        restore: () => bundleProxy.set("pass"),
        only: { body: buy },
      });
    }
    report("the block engine failing with no swap traffic", figures);
    expectOneLineEach(s, faults.length);
  });
});
