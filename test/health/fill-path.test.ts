/**
 * The fill path's health (src/health/fill-path.ts): when a dependency counts as failing and when it is
 * trusted again, driven by hand (a clock of our own, outcomes fed directly), and what the port
 * wrappers count as an answer. The real path (quotes turning into 404s while the RPC, the signer
 * service or PostgreSQL is down) is test/faults/fill-path.fault.ts.
 */
import { Keypair, type VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { BundlePort, BundleSendResult } from "../../src/chain/bundle.ts";
import type { Chain, SendResult } from "../../src/chain/interface.ts";
import {
  type Dependency,
  FAILING_PROBE_MS,
  FillPathHealth,
  IDLE_PROBE_MS,
  TRIP_AFTER_FAILURES,
  TRUST_AFTER_SUCCESSES,
  watchBundles,
  watchChain,
  watchSigner,
} from "../../src/health/fill-path.ts";
import { Conditions } from "../../src/observability/conditions.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { SignerRefusal } from "../../src/signing/port.ts";

function bed(probe: () => Promise<unknown> = async () => {}) {
  let t = 1_000_000;
  const health = new FillPathHealth({ log: createLogger("silent"), now: () => t });
  const rpc = health.track({ name: "rpc", what: "the RPC (test)", timeoutMs: 1_000, probe });
  return {
    health,
    rpc,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** A dependency that has been up: probed once, successfully. */
async function upAndRunning(b: ReturnType<typeof bed>): Promise<Dependency> {
  await b.rpc.probe();
  expect(b.health.refusal()).toBeUndefined();
  return b.rpc;
}

describe("fill path health: thresholds", () => {
  it("refuses until the first answer: nothing is quoted before a dependency was seen answering", async () => {
    const b = bed();
    expect(b.health.refusal()?.code).toBe("RPC_UNAVAILABLE");
    await b.rpc.probe();
    expect(b.health.refusal()).toBeUndefined();
  });

  it("trips after TRIP_AFTER_FAILURES failures in a row, not after one (a blip)", async () => {
    const b = bed();
    const rpc = await upAndRunning(b);
    rpc.fail(new Error("reset"));
    expect(b.health.refusal()).toBeUndefined();
    rpc.ok();
    rpc.fail(new Error("reset"));
    expect(b.health.refusal()).toBeUndefined();
    for (let i = 1; i < TRIP_AFTER_FAILURES; i++) rpc.fail(new Error("reset"));
    const r = b.health.refusal();
    expect(r?.code).toBe("RPC_UNAVAILABLE");
    expect(r?.context).toContain("the RPC (test) is not answering (reset)");
    expect(rpc.failing).toBe(true);
  });

  it("trusts again after TRUST_AFTER_SUCCESSES answers in a row; a failure between them starts the count again", async () => {
    const b = bed();
    const rpc = await upAndRunning(b);
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) rpc.fail(new Error("down"));
    for (let i = 1; i < TRUST_AFTER_SUCCESSES; i++) rpc.ok();
    rpc.fail(new Error("down again"));
    expect(b.health.refusal()?.context).toContain("down again");
    for (let i = 1; i < TRUST_AFTER_SUCCESSES; i++) rpc.ok();
    expect(b.health.refusal()).toBeDefined();
    rpc.ok();
    expect(b.health.refusal()).toBeUndefined();
  });

  it("ignores a failure of a call that started before a later-started call answered (a request stuck since the outage)", async () => {
    const b = bed();
    const rpc = await upAndRunning(b);
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) rpc.fail(new Error("down"));
    const stuckSince = 1_000_000 - 500;
    b.advance(100);
    rpc.ok();
    // The request stuck before the recovery times out now: it says nothing about the RPC now.
    rpc.fail(new Error("no answer within 1000 ms"), stuckSince);
    for (let i = 1; i < TRUST_AFTER_SUCCESSES; i++) rpc.ok();
    expect(b.health.refusal()).toBeUndefined();
    // Nor does a late answer of a call older than the latest failure.
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) rpc.fail(new Error("down again"));
    for (let i = 0; i < TRUST_AFTER_SUCCESSES; i++) rpc.ok(stuckSince);
    expect(b.health.refusal()?.context).toContain("down again");
  });

  it("probes when idle (not while the swap path's own calls feed it) and more often while failing", async () => {
    let probes = 0;
    const b = bed(async () => {
      probes++;
    });
    const rpc = await upAndRunning(b);
    probes = 0;
    b.advance(IDLE_PROBE_MS - 1);
    rpc.ok(); // a call of the swap path's
    b.advance(IDLE_PROBE_MS - 1);
    expect(rpc.tick()).toBeUndefined();
    b.advance(1);
    await rpc.tick();
    expect(probes).toBe(1);
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) rpc.fail(new Error("down"));
    b.advance(FAILING_PROBE_MS - 1);
    expect(rpc.tick()).toBeUndefined();
    b.advance(1);
    await rpc.tick();
    expect(probes).toBe(2);
  });

  it("counts a probe that does not answer within its timeout as a failure", async () => {
    const health = new FillPathHealth({ log: createLogger("silent") });
    let hang = false;
    const dep = health.track({
      name: "signer",
      what: "the signer service (test)",
      timeoutMs: 20,
      probe: () => (hang ? new Promise(() => {}) : Promise.resolve()),
    });
    await dep.probe();
    hang = true;
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) await dep.probe();
    expect(health.refusal()?.code).toBe("SIGNER_UNAVAILABLE");
    expect(health.refusal()?.context).toContain("no answer within 20 ms");
    expect(await Promise.all(health.readiness().map(([name, p]) => p().then((ok) => [name, ok])))).toEqual([
      ["fill.signer", false],
    ]);
  });
});

describe("fill path health: the bundle engine, on a bundled fill's path only", () => {
  it("refuses only a bundled fill while the bundle engine fails; /ready lists it as a condition that does not block, not as a check", async () => {
    const b = bed();
    await b.rpc.probe();
    const engine = b.health.track({
      name: "bundle",
      what: "the bundle engine (test)",
      timeoutMs: 1_000,
      probe: async () => {},
      bundledOnly: true,
    });
    await engine.probe();
    const conditions = new Conditions();
    b.health.report(conditions);
    expect(b.health.readiness().map(([name]) => name)).toEqual(["fill.rpc"]);
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) engine.fail(new Error("HTTP 503"));
    expect(b.health.refusal()).toBeUndefined();
    expect(b.health.refusal({ bundled: true })?.code).toBe("BUNDLE_UNAVAILABLE");
    conditions.refresh();
    expect(conditions.list()).toEqual([
      expect.objectContaining({
        name: "fill.bundle",
        blocksReady: false,
        detail: expect.stringContaining("HTTP 503"),
      }),
    ]);
    // The RPC is on every fill's path, a bundled one's too.
    for (let i = 0; i < TRUST_AFTER_SUCCESSES; i++) engine.ok();
    for (let i = 0; i < TRIP_AFTER_FAILURES; i++) b.rpc.fail(new Error("down"));
    expect(b.health.refusal({ bundled: true })?.code).toBe("RPC_UNAVAILABLE");
    conditions.refresh();
    expect(conditions.list()).toEqual([]);
  });
});

describe("fill path health: what the port wrappers count as an answer", () => {
  const tx = {} as VersionedTransaction;
  function fed() {
    const seen: string[] = [];
    return { seen, feed: { ok: () => seen.push("ok"), fail: () => seen.push("fail") } };
  }
  const chainAnswering = (send: SendResult, preflightThrows = false): Chain =>
    ({
      description: "test",
      send: async () => send,
      preflight: async () => {
        if (preflightThrows) throw new Error("fetch failed");
        return { ok: false, error: "custom program error", logs: [] };
      },
    }) as unknown as Chain;

  it("a send refused by a node is an answer; one that never reached it, or may have, is not", async () => {
    for (const [result, want] of [
      [{ ok: true, signature: "s" }, "ok"],
      [{ ok: false, error: "blockhash not found", reached: "refused" }, "ok"],
      [{ ok: false, error: "old adapter" }, "ok"],
      [{ ok: false, error: "ECONNREFUSED", reached: "no" }, "fail"],
      [{ ok: false, error: "reset", reached: "unknown" }, "fail"],
    ] as const) {
      const { seen, feed } = fed();
      await watchChain(chainAnswering(result), feed).send(tx);
      expect(seen, JSON.stringify(result)).toEqual([want]);
    }
  });

  it("a pre-flight that failed the fill is an answer; one that threw is not", async () => {
    const a = fed();
    await watchChain(chainAnswering({ ok: true, signature: "s" }), a.feed).preflight(tx);
    expect(a.seen).toEqual(["ok"]);
    const b = fed();
    await expect(
      watchChain(chainAnswering({ ok: true, signature: "s" }, true), b.feed).preflight(tx),
    ).rejects.toThrow("fetch failed");
    expect(b.seen).toEqual(["fail"]);
  });

  it("a signer's refusal is an answer; a signer that cannot be asked is not", async () => {
    const publicKey = Keypair.generate().publicKey;
    for (const [thrown, want] of [
      [undefined, "ok"],
      [new SignerRefusal("LIMIT_PER_FILL", "too big"), "ok"],
      [new Error("signer remote: ECONNREFUSED"), "fail"],
    ] as const) {
      const { seen, feed } = fed();
      const signer = watchSigner(
        {
          publicKey,
          sign: async () => {
            if (thrown) throw thrown;
          },
        },
        feed,
      );
      expect(signer.publicKey).toBe(publicKey);
      await Promise.resolve(signer.sign(tx, { quoteId: "q" })).catch(() => {});
      expect(seen).toEqual([want]);
    }
  });

  it("a bundle taken or refused by an engine is an answer; one that reached none, or may have, is not; a failed tip listing is not", async () => {
    for (const [result, want] of [
      [{ ok: true, bundleId: "b" }, "ok"],
      [{ ok: false, error: "bundle refused", reached: "refused" }, "ok"],
      [{ ok: false, error: "ECONNREFUSED", reached: "no" }, "fail"],
      [{ ok: false, error: "no answer within 1000 ms", reached: "unknown", bundleId: "b" }, "fail"],
    ] as const) {
      const { seen, feed } = fed();
      const port = {
        description: "test",
        sendBundle: async () => result as BundleSendResult,
      } as unknown as BundlePort;
      await watchBundles(port, feed).sendBundle([tx]);
      expect(seen, JSON.stringify(result)).toEqual([want]);
    }
    const { seen, feed } = fed();
    const port = {
      description: "test",
      getTipAccounts: async () => {
        throw new Error("no block engine listed its tip accounts");
      },
    } as unknown as BundlePort;
    await expect(watchBundles(port, feed).getTipAccounts()).rejects.toThrow("tip accounts");
    expect(seen).toEqual(["fail"]);
  });
});
