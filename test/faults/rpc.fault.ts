/**
 * Fault: the chain RPC cut and restored around fills, through the proxy in front of the local chain's
 * JSON-RPC server (sandbox/chain/fault-proxy.ts).
 *
 *  1. the RPC takes a fill's transaction and the connection is reset before the answer: the webhook
 *     answers `accepted` (it looked the signature up) and the fill lands and settles;
 *  2. the RPC refuses connections: a fill is rejected honestly within 25 s, nothing signed reaches
 *     the chain, /ready names the chain;
 *  3. the RPC is back: the next fill is accepted; time to recover printed.
 * Figures: fills accepted, landed on the chain, settled by the webhook (rfq_fills_total).
 */
import { PublicKey } from "@solana/web3.js";
import { afterEach, describe, expect, it } from "vitest";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import { report } from "./load.ts";
import { type FaultStack, faultStack, metric, postSwap, signedFill } from "./stack.ts";

let stack: FaultStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const JUP = new PublicKey(MINT.JUP);

async function settledFills(s: FaultStack, want: number, ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const n = await metric(s, "rfq_fills_total");
    if (n >= want || Date.now() > until) return n;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("fault: chain RPC cut and restored around fills", () => {
  it("accepts a fill the RPC took before resetting, rejects honestly while cut, recovers when back", {
    timeout: 180_000,
  }, async () => {
    const s = await faultStack();
    stack = s;
    const moved = (f: Awaited<ReturnType<typeof signedFill>>, before: bigint) =>
      before - tokenBalance(s.chain, f.taker.publicKey, JUP);

    // 1. Reset after the node took the transaction.
    const a = await signedFill(s);
    const aBefore = tokenBalance(s.chain, a.taker.publicKey, JUP);
    await s.proxy.set("reset-after", ["sendTransaction"]);
    const resetSwap = await postSwap(s, a.body);
    await s.proxy.set("pass");

    // 2. The RPC refuses connections.
    const b = await signedFill(s);
    const bBefore = tokenBalance(s.chain, b.taker.publicKey, JUP);
    await s.proxy.set("refuse");
    const cutAt = Date.now();
    const cutSwap = await postSwap(s, b.body);
    const readyCut = await fetch(`${s.url}/ready`);
    const readyCutBody = (await readyCut.json()) as { checks?: Record<string, boolean> };

    // 3. Back.
    await new Promise((r) => setTimeout(r, Math.max(0, cutAt + 3_000 - Date.now())));
    await s.proxy.set("pass");
    const backAt = Date.now();
    let recoveredMs = Number.NaN;
    let c: Awaited<ReturnType<typeof signedFill>> | undefined;
    let backSwap: Awaited<ReturnType<typeof postSwap>> | undefined;
    while (Date.now() - backAt < 30_000) {
      try {
        c = await signedFill(s);
        backSwap = await postSwap(s, c.body);
        if (backSwap.body.state === "accepted") {
          recoveredMs = Date.now() - backAt;
          break;
        }
      } catch {}
      await new Promise((r) => setTimeout(r, 200));
    }
    const settled = await settledFills(s, 2, 15_000);
    const landed = await metric(s, "rfq_fills_total", { outcome: "landed" });

    report("chain RPC cut and restored around fills", {
      "reset after the node took it": `${resetSwap.body.state} in ${resetSwap.ms} ms; JUP moved ${moved(a, aBefore)}`,
      "RPC refusing connections": `${JSON.stringify(cutSwap.body).slice(0, 160)} in ${cutSwap.ms} ms`,
      "/ready while cut": `${readyCut.status} ${JSON.stringify(readyCutBody.checks)}`,
      "first accepted fill after restore (ms)": recoveredMs,
      "fills accepted": [resetSwap, cutSwap, backSwap].filter((x) => x?.body.state === "accepted").length,
      "fills landed (rfq_fills_total landed)": landed,
      "fills settled (rfq_fills_total)": settled,
    });

    expect(resetSwap.body.state).toBe("accepted");
    expect(moved(a, aBefore)).toBe(1_000_000_000n);
    expect(cutSwap.status).toBe(200);
    expect(cutSwap.ms).toBeLessThan(25_000);
    expect(cutSwap.body.state).toBe("rejected");
    expect(cutSwap.body.txSignature).toBeUndefined();
    expect(moved(b, bBefore)).toBe(0n);
    expect(readyCut.status).toBe(503);
    expect(readyCutBody.checks?.chain).toBe(false);
    expect(backSwap?.body.state).toBe("accepted");
    expect(landed).toBe(2);
    expect(settled).toBe(2);
  });
});
