/**
 * Fault: the webhook killed (SIGKILL, no shutdown at all) with fills in flight, then started again.
 * Fills are posted together and the process is killed as soon as the first answer arrives: some were
 * answered, some cut mid-request. After the restart the cut ones are retried with the same bytes (as
 * the operator's retry would), the journal is resumed, and every fill is settled exactly once.
 *
 * Pass: no fill lands twice (each taker's balance moves by one fill at most); every answer (before the
 * kill, or to the retry after it) matches what the chain shows: a retry of a request cut after its
 * fill was sent is answered `accepted` once the restarted process has settled the resumed fill; the
 * restarted process settles every journaled fill.
 */
import { spawnSync } from "node:child_process";
import { PublicKey } from "@solana/web3.js";
import { afterEach, describe, expect, it } from "vitest";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import { report } from "./load.ts";
import { type FaultStack, faultStack, postSwap, signedFill } from "./stack.ts";

const FILLS = 6;
const JUP = new PublicKey(MINT.JUP);

let stack: FaultStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const pendingInJournal = (s: FaultStack) =>
  Number(
    spawnSync("redis-cli", ["-p", String(s.redis.port), "HLEN", "rfq:swap:{fills}:pending"], {
      encoding: "utf8",
    }).stdout.trim(),
  );

describe("fault: webhook killed with fills in flight", () => {
  it("settles every fill once after a restart; retries get one answer each", {
    timeout: 180_000,
  }, async () => {
    const s = await faultStack();
    stack = s;
    const fills = await Promise.all(Array.from({ length: FILLS }, () => signedFill(s)));
    const before = fills.map((f) => tokenBalance(s.chain, f.taker.publicKey, JUP));

    type First = { state: string } | { cut: string };
    let killed = false;
    const first: Promise<First>[] = fills.map((f) =>
      postSwap(s, f.body).then(
        (r) => {
          if (!killed) {
            killed = true;
            s.webhook.proc.kill("SIGKILL");
          }
          return { state: String(r.body.state) };
        },
        (e: Error) => ({ cut: e.message }),
      ),
    );
    const answers = await Promise.all(first);
    await s.webhook.exited;
    const journaledAtKill = pendingInJournal(s);

    await s.start();
    const restartAt = Date.now();
    // The restarted process resumes the journal; watch it empty while the cut requests are retried.
    const journalEmpty = (async () => {
      let pending = pendingInJournal(s);
      // A fill journaled but killed before its send never lands: it is settled when its blockhash
      // expires (150 blocks of 400 ms, 60 s), so the wait covers that with a margin.
      while (pending > 0 && Date.now() - restartAt < 90_000) {
        await new Promise((r) => setTimeout(r, 100));
        pending = pendingInJournal(s);
      }
      return { pending, ms: Date.now() - restartAt };
    })();
    const retried = await Promise.all(
      fills.map((f, i) => ("cut" in (answers[i] as First) ? postSwap(s, f.body) : undefined)),
    );
    const finalState = (i: number) => {
      const a = answers[i] as First;
      return "state" in a ? a.state : String(retried[i]?.body.state);
    };
    const { pending, ms: settledAfterMs } = await journalEmpty;
    const movedBy = fills.map(
      (f, i) => (before[i] as bigint) - tokenBalance(s.chain, f.taker.publicKey, JUP),
    );
    const landed = movedBy.filter((m) => m > 0n).length;

    report(`webhook killed with ${FILLS} fills in flight`, {
      "answered before the kill": answers.filter((a) => "state" in a).length,
      "cut by the kill": answers.filter((a) => "cut" in a).length,
      "fills in the journal at the kill": journaledAtKill,
      "retried after restart": retried
        .filter(Boolean)
        .map(
          (r) =>
            `${r?.body.state}${r?.body.rejectionReason ? `: ${String(r.body.rejectionReason).slice(0, 70)}` : ""}`,
        ),
      "final answers": fills.map((_, i) => finalState(i)),
      "fills landed on the chain": landed,
      "journal empty after restart (ms)": pending === 0 ? settledAfterMs : `still ${pending} pending`,
    });

    for (const [i, m] of movedBy.entries()) {
      expect([0n, 1_000_000_000n]).toContain(m); // at most one fill per taker
      // Every answer, before the kill or to the retry after it, is the truth about the fill.
      expect(m > 0n).toBe(finalState(i) === "accepted");
    }
    // Every journaled fill is settled by the restarted process.
    expect(pending).toBe(0);
  });
});
