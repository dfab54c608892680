/**
 * Fault: the fill ledger across a webhook SIGKILL in the middle of the load test's swap phase.
 *
 * Runs `npm run loadtest` (its own process, as an operator would: its stack starts Redis, the local
 * chain server, the webhook as a separate process with its embedded ledger, and the operator
 * simulator) with `--kill-webhook-at`: once that swap is in flight the webhook is SIGKILLed and
 * started again on the same data. The load test then waits for the fill journal to settle and drain,
 * stops the webhook and checks the ledger (sandbox/loadtest/ledger-check.ts) against the operator's
 * record of every /swap and against the chain's own transactions: one decision row per answered
 * /swap (none doubled, an acceptance for every cut /swap whose transaction landed), one landed fill
 * per landed maker transaction, and `npm run report`'s fees owed per mint equal to the fees the
 * chain's fills carry.
 *
 * LEDGER_FAULT_SWAPS (default 60) and LEDGER_FAULT_KILL_AT (default a third of them) size it; the
 * full `npm run loadtest -- --swaps 200 --kill-webhook-at 100` is the same check at the issue's size.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { LoadReport } from "../../sandbox/loadtest/report.ts";
import { startLoadtest } from "../support/process.ts";

const SWAPS = Number(process.env.LEDGER_FAULT_SWAPS ?? 60);
const KILL_AT = Number(process.env.LEDGER_FAULT_KILL_AT ?? Math.floor(SWAPS / 3));
const out = mkdtempSync(join(tmpdir(), "rfq-ledger-fault-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("fault: the fill ledger across a webhook SIGKILL in the swap phase", () => {
  it("holds one decision per /swap and one landed fill per landed transaction; the report's fees match the chain", {
    timeout: 420_000,
  }, async () => {
    const t0 = Date.now();
    const run = startLoadtest([
      "--rate",
      "50",
      "--duration",
      "2",
      "--warmup",
      "1",
      "--swaps",
      String(SWAPS),
      "--swap-concurrency",
      "4",
      "--kill-webhook-at",
      String(KILL_AT),
      "--log-level",
      "warn",
      "--out",
      out,
    ]);
    await run.exited;
    const dir = readdirSync(out).find((d) => d.startsWith("loadtest-"));
    expect(dir, run.stdout() + run.stderr()).toBeDefined();
    const report = JSON.parse(readFileSync(join(out, dir as string, "report.json"), "utf8")) as LoadReport;
    const ledger = report.ledger;
    console.log(
      `[ledger fault] ${Math.round((Date.now() - t0) / 1000)} s; kill ${JSON.stringify(report.kill)}; ` +
        `swaps ${JSON.stringify(report.swaps?.outcomes)}; ledger ${JSON.stringify(ledger?.figures)}`,
    );
    expect(report.kill?.atSwap).toBe(KILL_AT);
    expect(ledger?.problems).toEqual([]);
    expect(ledger?.ok).toBe(true);
    // The check had something to check: fills landed on both sides of the kill, fees were owed.
    expect(ledger?.figures.chainFills).toBeGreaterThan(KILL_AT);
    expect(ledger?.figures.ledgerLanded).toBe(ledger?.figures.chainFills);
    expect(Object.keys(ledger?.figures.feesByMint ?? {}).length).toBeGreaterThan(0);
    // The load test's own "fills" check (all but the swaps in flight at the kill landed) is not asked
    // for here: on a loaded machine some orders find no quote within the operator's 250 ms, which is
    // not what this scenario is about; the ledger must match the chain whatever landed.
    const checks = Object.fromEntries(report.checks.map((c) => [c.name, c]));
    expect(checks.ledger?.ok, checks.ledger?.detail).toBe(true);
  });
});
