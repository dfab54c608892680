/**
 * Issue 61, finding 7: `npm run sandbox` could not run beside anything. Its own RFQ_V2_PORT reached the
 * webhook, which refused it as a near miss of RFQ_V2_URL (exit 78, and the sandbox printed only "see
 * webhook.log"); without it the stand-in took 8092, so a second sandbox could not start; and it had no
 * smart-account taker. Here two `npm run sandbox` (the maker's command, through npm) start at the same
 * time on one machine, each with its own --dir and ports (one with --port-base 0, the other with
 * RFQ_V2_PORT and WEBHOOK_PORT set in its environment), each with its own throwaway Redis; both are
 * healthy, each manifest lists a funded smart-account taker; and a webhook that refuses to start has its
 * refusal line printed by the sandbox.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcCall } from "../../src/chain/rpc-read.ts";
import { freePort, REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

const root = fileTempDir("side-by-side");

interface Run {
  proc: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** `npm run sandbox -- <args>` in its own process group, with no REDIS_URL (a throwaway Redis each). */
function sandbox(args: string[], env: Record<string, string> = {}): Run {
  const base = { ...process.env };
  delete base.REDIS_URL;
  delete base.REDIS_CLUSTER_NODES;
  const proc = spawn("npm", ["run", "--silent", "sandbox", "--", ...args], {
    cwd: REPO_ROOT,
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  proc.stdout?.on("data", (d) => {
    out += d;
  });
  proc.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  return { proc, out: () => out, exited };
}

async function untilReady(run: Run, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!run.out().includes("sandbox ready")) {
    if (run.proc.exitCode !== null) throw new Error(`sandbox exited ${run.proc.exitCode}:\n${run.out()}`);
    if (Date.now() > until) throw new Error(`sandbox not ready within ${timeoutMs} ms:\n${run.out()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Ctrl-C to the whole group (npm, tsx, the sandbox); resolves with npm's exit code. */
async function stop(run: Run): Promise<number | null> {
  if (run.proc.exitCode !== null || run.proc.signalCode !== null || !run.proc.pid) return run.proc.exitCode;
  process.kill(-run.proc.pid, "SIGINT");
  const timer = setTimeout(() => run.proc.pid && process.kill(-run.proc.pid, "SIGKILL"), 30_000);
  const code = await run.exited;
  clearTimeout(timer);
  return code;
}

interface Manifest {
  chainUrl: string;
  webhookUrl: string;
  webhookAdminUrl: string;
  operatorUrl: string;
  rfqV2?: { url: string };
  smartAccounts?: {
    name: string;
    vault: string;
    settings: string;
    members: { pubkey: string; keypair: string }[];
  }[];
}

describe("finding 7: two sandboxes side by side", () => {
  const dirA = join(root, "a");
  const dirB = join(root, "b");
  let a: Run;
  let b: Run;
  let rfqV2Port = 0;
  let webhookPort = 0;
  beforeAll(async () => {
    [rfqV2Port, webhookPort] = [await freePort(), await freePort()];
    a = sandbox(["--dir", dirA, "--port-base", "0"]);
    // The sandbox's own variables: they move its ports and never reach the webhook.
    b = sandbox(["--dir", dirB, "--port-base", "0"], {
      RFQ_V2_PORT: String(rfqV2Port),
      WEBHOOK_PORT: String(webhookPort),
    });
    await Promise.all([untilReady(a, 300_000), untilReady(b, 300_000)]);
  }, 320_000);
  afterAll(async () => {
    await Promise.all([a && stop(a), b && stop(b)]);
  }, 60_000);

  it("both start and are healthy, on ports of their own", async () => {
    const [ma, mb] = [dirA, dirB].map(
      (d) => JSON.parse(readFileSync(join(d, "stack.json"), "utf8")) as Manifest,
    );
    for (const m of [ma, mb] as Manifest[]) {
      expect((await fetch(`${m.webhookAdminUrl}/ready`)).status).toBe(200);
      expect((await fetch(`${m.operatorUrl}/operator/webhooks`)).status).toBe(200);
      const health = await fetch(`${m.chainUrl}/health`);
      expect(health.status).toBe(200);
    }
    const urls = (m: Manifest) => [m.chainUrl, m.webhookUrl, m.webhookAdminUrl, m.operatorUrl, m.rfqV2?.url];
    const all = [...urls(ma as Manifest), ...urls(mb as Manifest)];
    expect(new Set(all).size).toBe(all.length);
    expect(mb?.rfqV2?.url).toContain(`:${rfqV2Port}`);
    expect(mb?.webhookUrl).toContain(`:${webhookPort}`);
    // No refusal: the webhook never saw the sandbox's own RFQ_V2_PORT.
    expect(readFileSync(join(dirB, "webhook.log"), "utf8")).not.toContain("RFQ_V2_PORT");
  });

  it("each lists a smart-account taker in stack.json, its vault funded on its own chain, its members' keypairs on disk", async () => {
    for (const d of [dirA, dirB]) {
      const m = JSON.parse(readFileSync(join(d, "stack.json"), "utf8")) as Manifest;
      const sa = m.smartAccounts?.[0];
      expect(sa?.name).toBe("squads");
      expect(sa?.members).toHaveLength(2);
      for (const member of sa?.members ?? [])
        expect(JSON.parse(readFileSync(member.keypair, "utf8"))).toHaveLength(64);
      const balance = (await rpcCall(m.chainUrl, "getBalance", [sa?.vault], 5_000)) as { value: number };
      expect(balance.value).toBeGreaterThan(0);
    }
  });

  it("Ctrl-C stops each sandbox and everything it started", { timeout: 90_000 }, async () => {
    const ms = [dirA, dirB].map((d) => JSON.parse(readFileSync(join(d, "stack.json"), "utf8")) as Manifest);
    await Promise.all([stop(a), stop(b)]);
    const answers = async (url: string) => {
      try {
        await fetch(url, { signal: AbortSignal.timeout(1_000) });
        return true;
      } catch {
        return false;
      }
    };
    for (const m of ms) {
      for (const url of [`${m.webhookAdminUrl}/health`, `${m.chainUrl}/health`]) {
        const until = Date.now() + 30_000;
        while ((await answers(url)) && Date.now() < until) await new Promise((r) => setTimeout(r, 250));
        expect(await answers(url), url).toBe(false);
      }
    }
  });
});

describe("finding 7: a webhook that refuses to start", () => {
  it("has its refusal line printed by the sandbox, not only the log's path", {
    timeout: 300_000,
  }, async () => {
    // A typo of one of the webhook's settings: it refuses to start, naming the setting.
    const run = sandbox(["--dir", join(root, "refused"), "--port-base", "0"], { RFQ_V2_URLL: "oops" });
    const code = await run.exited;
    expect(code).not.toBe(0);
    expect(run.out()).toContain("webhook exited (code 78)");
    expect(run.out()).toMatch(/its last lines:\n[\s\S]*RFQ_V2_URLL: not a setting of this service/);
  });
});
