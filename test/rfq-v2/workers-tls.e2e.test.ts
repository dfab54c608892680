/**
 * The RFQ v2 channel as production runs it, through the sandbox stack (startStack): the webhook as its
 * own process with WORKERS=2 (src/http/cluster.ts: a primary and two workers over one Redis) and the
 * operator's stand-in serving TLS with a certificate from a throwaway CA made with openssl at test time
 * (test/support/tls.ts), which the webhook's gRPC client trusts through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH
 * (grpc-js's roots file) as a maker behind its own CA would (the operator's edge has a public certificate). Shown: levels streamed over TLS and a swap
 * co-signed and landed; exactly one worker streaming while both answer /quote from the one inventory;
 * and `POST /admin/pause` (to whichever worker the primary passes it) stopping the stream, the
 * operator's held set expiring within 10 s of it (measured: the stand-in's EXPIRED).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Stack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { MINT } from "../support/config.ts";
import { logLines } from "../support/process.ts";
import { bidWalk, liveLevels, solUsdcBid, startRfqV2Stack } from "../support/rfq-v2.ts";
import { makeTestPki } from "../support/tls.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("rfq-v2-workers-tls");
const ADMIN_API_KEY = "admin-key-for-the-workers-tls-test";
const SOL = 1_000_000_000n;
let stack: Stack;

beforeAll(async () => {
  const pki = makeTestPki(dir, "rfq-v2");
  stack = await startRfqV2Stack(dir, {
    rfqV2Tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert },
    webhookAdminApiKey: ADMIN_API_KEY,
    // Two workers need the shared state outside the process: no embedded ledger. Every quote logged
    // at info (with its worker), so the test sees which worker answered.
    webhookEnv: { WORKERS: "2", LEDGER: "off", LOG_QUOTE_SAMPLE: "1" },
    // 300 SOL on hand (below SOL/USDC's 500 SOL maximum): the inventory bounds what is offered.
    makerInventory: {
      SOL: 300n * SOL,
      USDC: 10_000_000n * 10n ** 6n,
      USDT: 10_000_000n * 10n ** 6n,
      JUP: 10n ** 13n,
    },
    takers: [{ name: "t", sol: 20n * SOL, tokens: { USDC: 40_000_000_000n } }],
  });
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

const log = () => logLines(readFileSync(`${stack.dir}/webhook.log`, "utf8"));

/** A quote on a connection of its own (the primary hands connections to the workers in turn). */
function quote(amount: bigint): Promise<{ status: number; message: string; requestId: string }> {
  const requestId = randomUUID();
  const body = JSON.stringify({
    requestId,
    quoteId: randomUUID(),
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amount: amount.toString(),
    quoteType: "exactOut",
    protocol: "v1",
    feeBps: 0,
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${stack.webhookUrl}/quote`,
      {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          connection: "close",
          "x-request-start": String(Date.now()),
          "x-request-timeout": "10000",
        },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            message: String(JSON.parse(text).message ?? ""),
            requestId,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Which worker logged the quote `requestId` (LOG_QUOTE_SAMPLE=1 logs every quote with its worker). */
async function workerOf(requestId: string): Promise<number> {
  for (const until = Date.now() + 5_000; Date.now() < until; ) {
    const line = log().find((l) => l.requestId === requestId);
    if (line) return Number(line.worker);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no log line for quote ${requestId}`);
}

describe("the RFQ v2 channel in production's shape: TLS to the operator, WORKERS=2", () => {
  it("streams over TLS to the https:// endpoint (a throwaway CA the webhook trusts) and lands a swap co-signed on it, exactly as the levels say", async () => {
    expect(stack.rfqV2!.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const inAmount = 10_000_000n; // 10 USDC
    const walk = bidWalk(await liveLevels(stack, MINT.SOL, MINT.USDC), inAmount);
    const taker = stack.takers[0]!.keypair;
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const before = await client.balances(taker.publicKey, [MINT.SOL, MINT.USDC]);
    const r = await stack.rfqV2!.standIn.offerSwap(
      solUsdcBid({ makerId: stack.rfqV2!.makerId, taker, inAmount, timeoutMs: 30_000 }),
    );
    expect(r).toMatchObject({ ok: true, signature: expect.any(String) });
    const after = await client.balances(taker.publicKey, [MINT.SOL, MINT.USDC]);
    expect(after[MINT.USDC]! - before[MINT.USDC]!).toBe(-walk.spent);
    expect(after[MINT.SOL]! - before[MINT.SOL]!).toBe(walk.out);
  });

  it("with WORKERS=2 exactly one worker streams, and both answer /quote from the one inventory (a v2 swap's SOL is gone for both)", async () => {
    await liveLevels(stack, MINT.SOL, MINT.USDC);
    const v2 = stack.rfqV2!;
    expect(v2.standIn.openQuoteStreams(v2.makerId)).toBe(1);
    const connected = log().filter((l) => l.msg === "rfq v2: connected");
    expect(connected.length).toBeGreaterThanOrEqual(1);
    expect(new Set(connected.map((l) => l.worker))).toEqual(new Set([1]));

    // Both workers quote 150 SOL out of the 300 on hand.
    const offered = await Promise.all(Array.from({ length: 6 }, () => quote(150n * SOL)));
    expect(offered.map((q) => q.status)).toEqual(Array(6).fill(200));
    expect(new Set(await Promise.all(offered.map((q) => workerOf(q.requestId))))).toEqual(new Set([1, 2]));

    // The streaming worker co-signs a v2 swap of about 200 SOL (36,200 USDC at about 180.25) ...
    const swap = await v2.standIn.offerSwap(
      solUsdcBid({
        makerId: v2.makerId,
        taker: stack.takers[0]!.keypair,
        inAmount: 36_200_000_000n,
        timeoutMs: 30_000,
      }),
    );
    expect(swap).toMatchObject({ ok: true });
    // ... and, once the other worker has read the shared reservations (inventory.syncMs, 250 ms),
    // neither offers those 150 SOL any more, each naming the same amount left.
    let declined = await Promise.all(Array.from({ length: 6 }, () => quote(150n * SOL)));
    for (const until = Date.now() + 5_000; Date.now() < until && declined.some((q) => q.status !== 404); ) {
      await new Promise((r) => setTimeout(r, 250));
      declined = await Promise.all(Array.from({ length: 6 }, () => quote(150n * SOL)));
    }
    expect(declined.map((q) => q.status)).toEqual(Array(6).fill(404));
    expect(new Set(await Promise.all(declined.map((q) => workerOf(q.requestId))))).toEqual(new Set([1, 2]));
    const available = declined.map(
      (q) => /^no quote: 150000000000 SOL asked, (\d+) available/.exec(q.message)?.[1],
    );
    expect(available[0]).toBeDefined();
    expect(BigInt(available[0]!)).toBeLessThan(100n * SOL);
    expect(new Set(available)).toEqual(new Set([available[0]]));
    // Still one stream: the second worker never connected.
    expect(v2.standIn.openQuoteStreams(v2.makerId)).toBe(1);
  });

  it("POST /admin/pause stops the stream at once, whichever worker takes it: the operator's held SOL/USDC set expires within 10 s of the pause (its EXPIRED)", {
    timeout: 40_000,
  }, async () => {
    const v2 = stack.rfqV2!;
    await liveLevels(stack, MINT.SOL, MINT.USDC);
    const res = await fetch(`${stack.webhookAdminUrl}/admin/pause`, {
      method: "POST",
      headers: { "x-admin-api-key": ADMIN_API_KEY, "content-type": "application/json" },
      body: JSON.stringify({ reason: "the workers-tls test" }),
    });
    // Paused when answered (the switch is in Redis, published to every worker): the window starts here.
    const pausedAt = Date.now();
    expect(res.status).toBe(200);
    const mark = v2.standIn.updates.length;
    const held = v2.standIn.liveSet(v2.makerId, MINT.SOL, MINT.USDC);
    expect(held).toBeDefined();
    expect(held!.quote.quote_expiry_time).toBe("10");
    // The held set's EXPIRED, when its validity (timestamp + 10 s) passes unreplaced.
    let expiredAt: number | undefined;
    for (const until = Date.now() + 15_000; Date.now() < until && expiredAt === undefined; ) {
      expiredAt = v2.standIn.updates.find(
        (u) => u.sequence === held!.quote.sequence_number && u.update.update_type === "UPDATE_TYPE_EXPIRED",
      )?.atMs;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(expiredAt).toBeDefined();
    // At most the 10 s validity; 0.1 s for the pause to reach the streaming worker and the stand-in's timer.
    expect(expiredAt! - pausedAt).toBeLessThanOrEqual(10_000 + 100);
    // Nothing was accepted after the pause: no set replaced the held one, for any pair.
    const after = v2.standIn.updates.slice(mark).map((u) => u.update.update_type);
    expect(after.filter((t) => t === "UPDATE_TYPE_NEW" || t === "UPDATE_TYPE_UPDATED")).toEqual([]);
  });
});
