/**
 * Fault: WORKERS=2, one worker killed (SIGKILL) under quote load. The primary logs the death, counts
 * it (`rfq_worker_restarts_total`), starts a new worker in its slot, and both serve again; quotes
 * keep being answered by the other worker meanwhile (the only failures allowed are the requests the
 * killed worker held: connection resets, never a 5xx or a late 200). The primary's /metrics sums the
 * workers' counters (every quote answered is counted once), and SIGTERM then drains both: exit 0.
 * The shared listener, which the primary holds, has the workers' LISTEN_BACKLOG.
 */
import { afterEach, describe, expect, it } from "vitest";
import { somaxconn } from "../../src/http/listener.ts";
import { kernelBacklog, logLines } from "../support/process.ts";
import { figures, QUOTE_RATE, quoteLoad, report } from "./load.ts";
import { type FaultStack, faultStack, metric } from "./stack.ts";

let stack: FaultStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const until = async (what: string, ok: () => Promise<boolean>, ms = 60_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not within ${ms} ms: ${what}`);
};

describe("fault: a worker dies under load (WORKERS=2)", () => {
  it("is restarted by the primary (logged, counted), the other keeps quoting, metrics sum both, SIGTERM drains both", {
    timeout: 180_000,
  }, async () => {
    const s = await faultStack({ drainMs: 1_000, env: { LOG_LEVEL: "info", WORKERS: "2" } });
    stack = s;
    await until(
      "two workers listening",
      async () => (await metric(s, "rfq_workers", { state: "listening" })) === 2,
    );
    const listening = logLines(s.webhook.stdout()).find((l) => l.msg === "all workers listening");
    const pids = (listening?.pids ?? []) as number[];
    expect(pids).toHaveLength(2);
    // The primary holds the shared listener, with the workers' LISTEN_BACKLOG (default 4096).
    expect(kernelBacklog(Number(new URL(s.url).port))).toBe(Math.min(4096, somaxconn() ?? 4096));

    // Warm-up answers, counted by the primary's aggregated /metrics exactly once each.
    const before = figures(await quoteLoad(s.url, { rate: QUOTE_RATE / 2, durationMs: 1_000 }));
    const counted = await metric(s, "rfq_quote_duration_seconds_count");
    expect(counted).toBe(before.sent);

    const load = quoteLoad(s.url, { rate: QUOTE_RATE / 2, durationMs: 4_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    process.kill(pids[0] as number, "SIGKILL");
    const answers = await load;
    const f = figures(answers);
    await until("the slot is served again", async () => {
      const up = await metric(s, "rfq_workers", { state: "listening" });
      return up === 2;
    });
    const restarts = await metric(s, "rfq_worker_restarts_total", { cause: "SIGKILL" });
    const logs = logLines(s.webhook.stdout());
    const died = logs.find((l) => String(l.msg).startsWith("worker 1 died (SIGKILL)"));
    const after = figures(await quoteLoad(s.url, { rate: QUOTE_RATE / 2, durationMs: 1_000 }));

    s.webhook.proc.kill("SIGTERM");
    const exit = await s.webhook.exited;
    report("a worker SIGKILLed under load (WORKERS=2)", {
      "answers by status while one died": f.byStatus,
      "late (>250 ms)": f.late,
      "restarts counted": restarts,
      "primary's line": String(died?.msg),
      "after the restart": after.byStatus,
      "exit code after SIGTERM": exit.code,
    });

    expect(died).toBeDefined();
    expect(restarts).toBe(1);
    expect(Object.keys(f.byStatus).filter((k) => k.startsWith("5"))).toEqual([]);
    // Most quotes are answered although one worker died mid-run; only what it held is lost.
    expect((f.byStatus["200"] ?? 0) / f.sent).toBeGreaterThan(0.8);
    expect(after.byStatus["200"]).toBe(after.sent);
    expect(exit.code).toBe(0);
  });
});
