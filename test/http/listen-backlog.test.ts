/**
 * LISTEN_BACKLOG: PORT's accept queue. Past capacity the operator opens a connection per quote in
 * flight, in bursts, while the webhook is busy; with Node's default backlog (511) the kernel drops the
 * SYNs beyond it and each such quote waits for TCP's retransmit (1 s, then 3 s), a timeout instead of
 * the fast 404 the webhook would give once it reads the request. The real entry point runs as its
 * own process; it is stopped (SIGSTOP) so that nothing is accepted while the connections arrive, as a
 * process saturated past capacity accepts nothing for a while. Linux only (the kernel's accept queue,
 * /proc/sys/net/core/somaxconn, `ss` from iproute2).
 */
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { backlogWarning, somaxconn } from "../../src/http/listener.ts";
import { freePort } from "../../tooling/processes.ts";
import { kernelBacklog, logLines, startWebhook, type WebhookProcess } from "../support/process.ts";

/** 0 where unknown: the burst test is skipped. */
const cap = somaxconn() ?? 0;

/** More than Node's default backlog (511) holds, fewer than the default LISTEN_BACKLOG (4096). */
const BURST = 700;

async function started(env: Record<string, string>): Promise<{ w: WebhookProcess; port: number }> {
  const port = await freePort();
  const w = startWebhook({ PORT: String(port), HOST: "127.0.0.1", ...env });
  const end = Date.now() + 60_000;
  while (!logLines(w.stdout()).some((l) => l.msg === "listening")) {
    if (Date.now() > end) throw new Error(`the webhook did not start: ${w.stderr()}`);
    if (w.proc.exitCode !== null) throw new Error(`the webhook exited: ${w.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { w, port };
}

async function stopped(w: WebhookProcess): Promise<void> {
  w.proc.kill("SIGCONT");
  w.proc.kill("SIGTERM");
  await w.exited;
}

/**
 * Opens `n` connections at once to a webhook that accepts nothing meanwhile; how many completed the
 * handshake within `withinMs` (the rest had their SYN dropped and wait for the retransmit).
 */
async function connectedWhileStalled(w: WebhookProcess, port: number, n: number, withinMs: number) {
  w.proc.kill("SIGSTOP");
  const sockets: Socket[] = [];
  try {
    let connected = 0;
    for (let i = 0; i < n; i++) {
      const s = connect({ port, host: "127.0.0.1" });
      s.on("error", () => {});
      s.once("connect", () => connected++);
      sockets.push(s);
    }
    await new Promise((r) => setTimeout(r, withinMs));
    return connected;
  } finally {
    for (const s of sockets) s.destroy();
    w.proc.kill("SIGCONT");
  }
}

describe("the operator's listener's accept queue (LISTEN_BACKLOG)", () => {
  it.skipIf(cap < BURST)(
    `keeps a burst of ${BURST} connections opened while the webhook is stalled (default 4096), where Node's 511 drops the SYNs past it`,
    { timeout: 120_000 },
    async () => {
      const wide = await started({});
      let connectedWide: number;
      try {
        expect(kernelBacklog(wide.port)).toBe(Math.min(4096, cap));
        connectedWide = await connectedWhileStalled(wide.w, wide.port, BURST, 500);
      } finally {
        await stopped(wide.w);
      }
      const narrow = await started({ LISTEN_BACKLOG: "511" });
      let connectedNarrow: number;
      try {
        expect(kernelBacklog(narrow.port)).toBe(511);
        connectedNarrow = await connectedWhileStalled(narrow.w, narrow.port, BURST, 500);
      } finally {
        await stopped(narrow.w);
      }
      // Every one of them is in the queue, to be read (and priced or shed) once the process resumes.
      expect(connectedWide).toBe(BURST);
      // The accept queue holds backlog + 1; the rest would wait a second or more for their retransmit.
      expect(connectedNarrow).toBeLessThanOrEqual(512);
    },
  );

  it("warns, naming net.core.somaxconn and the fix, when the kernel cuts LISTEN_BACKLOG", () => {
    const cut = backlogWarning(4096, 128);
    expect(cut).toMatch(/LISTEN_BACKLOG 4096 is cut to 128 by net\.core\.somaxconn/);
    expect(cut).toMatch(/--sysctl net\.core\.somaxconn=4096/);
    expect(backlogWarning(4096, 4096)).toBeUndefined();
    expect(backlogWarning(511, 4096)).toBeUndefined();
    // No such file (not Linux): nothing to say.
    expect(backlogWarning(4096, undefined)).toBeUndefined();
  });
});
