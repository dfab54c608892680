/**
 * Finding 4 of issue 47: `npm run report` while the webhook runs. The embedded ledger is open in one
 * process at a time, so the report used to refuse ("open in process N"); now it asks that webhook's
 * admin API (GET /admin/report) for the same report, or, without ADMIN_API_KEY, says exactly how.
 * The webhook is `npm start`'s entry point as its own process (paper setup, embedded ledger).
 */
import { describe, expect, it } from "vitest";
import { freePort } from "../../tooling/processes.ts";
import { npmRun } from "../support/npm-run.ts";
import { startWebhook } from "../support/process.ts";
import { fileTempDir } from "../support/tmp.ts";

describe("finding 4: npm run report reads a running webhook's embedded ledger", () => {
  it("asks the webhook's admin API with ADMIN_API_KEY, and without it names the command to run", {
    timeout: 180_000,
  }, async () => {
    const dataDir = fileTempDir("report-running");
    const [port, adminPort] = [await freePort(), await freePort()];
    const key = "admin-key-for-the-report-test";
    const w = startWebhook({
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_PORT: String(adminPort),
      DATA_DIR: dataDir,
      LEDGER: "on",
      ADMIN_API_KEY: key,
    });
    try {
      const until = Date.now() + 150_000;
      while (!/listening on/.test(w.stderr()) && Date.now() < until && w.proc.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      expect(w.stderr()).toMatch(/fill ledger: pglite/);
      const env = { DATA_DIR: dataDir, ADMIN_PORT: String(adminPort) };
      const today = new Date().toISOString().slice(0, 10);

      const asked = await npmRun("report", ["--format", "text"], { ...env, ADMIN_API_KEY: key });
      expect(asked.code).toBe(0);
      expect(asked.stderr).toContain(`(from the running webhook, process ${w.proc.pid}`);
      expect(asked.stdout).toContain(`Fill ledger report, ${today}T00:00:00.000Z`);

      const how = await npmRun("report", [], env);
      expect(how.code).toBe(69);
      expect(how.stderr).toContain(`is open in process ${w.proc.pid} (the webhook; one process at a time)`);
      expect(how.stderr).toContain(
        `curl -sf -H "X-ADMIN-API-KEY: $ADMIN_API_KEY" 'http://127.0.0.1:${adminPort}/admin/report?from=${today}&to=${today}&format=text'`,
      );
    } finally {
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  });
});
