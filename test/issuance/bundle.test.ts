/**
 * The issuer's half of a permissioned fill (src/issuance/bundle.ts) against scripted ports: which tip
 * account is chosen, the order the companion and the fill land in (mint before the fill, burn after
 * it), the time the engine is given to send, and the refusal (code and the words the operator reads)
 * for each port that fails. The whole path, with the local bundle engine, is permissioned.test.ts.
 */
import { Keypair, type PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BundlePort, BundleSendResult } from "../../src/chain/bundle.ts";
import { type IssuanceBundle, prepareBundle, sendBundle } from "../../src/issuance/bundle.ts";
import type { CompanionMaker } from "../../src/issuance/companion.ts";
import type { IssuanceNeed, IssuedToken } from "../../src/issuance/policy.ts";
import type { IssuancePorts } from "../../src/issuance/ports.ts";

/** A stand-in transaction: the bundle code only orders and passes them on. */
const txNamed = (name: string) => ({ name }) as unknown as VersionedTransaction;
const FILL = txNamed("fill");
const COMPANION = txNamed("companion");
const TIPS = [0, 1, 2].map(() => Keypair.generate().publicKey);
const need = (direction: "mint" | "burn"): IssuanceNeed => ({
  issued: {} as IssuedToken,
  direction,
  amount: 100_000_000n,
});

interface Script {
  tips?: () => Promise<PublicKey[]>;
  make?: () => Promise<VersionedTransaction>;
  send?: () => Promise<BundleSendResult>;
}

/** Ports whose engine and companion maker answer as scripted; `calls` records what they were given. */
function ports(s: Script = {}) {
  const calls = {
    make: [] as Parameters<CompanionMaker["make"]>[0][],
    send: [] as { txs: readonly VersionedTransaction[]; timeoutMs: number | undefined }[],
  };
  const bundles = {
    description: "scripted",
    getTipAccounts: s.tips ?? (async () => TIPS),
    sendBundle: async (txs: readonly VersionedTransaction[], opts?: { timeoutMs?: number }) => {
      calls.send.push({ txs, timeoutMs: opts?.timeoutMs });
      return (s.send ?? (async () => ({ ok: true, bundleId: "bundle-1" }) as const))();
    },
  } as unknown as BundlePort;
  const companions: CompanionMaker = {
    issuer: Keypair.generate().publicKey,
    make: async (a) => {
      calls.make.push(a);
      return (s.make ?? (async () => COMPANION))();
    },
  };
  return { iss: { bundles, companions } as unknown as IssuancePorts, calls };
}

const args = (direction: "mint" | "burn") => ({
  need: need(direction),
  fill: FILL,
  makerTokenAccount: Keypair.generate().publicKey,
  quoteId: "quote-1",
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("prepareBundle", () => {
  it("lands a mint before the fill and a burn after it, tipping the account drawn from the engine's list", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.99);
    const { iss, calls } = ports();
    const mint = await prepareBundle(iss, args("mint"), 1_000);
    expect(mint).toEqual({ ok: true, bundle: { txs: [COMPANION, FILL], tipAccount: TIPS[2] } });
    const burn = await prepareBundle(iss, args("burn"), 1_000);
    expect(burn).toEqual({ ok: true, bundle: { txs: [FILL, COMPANION], tipAccount: TIPS[2] } });
    expect(calls.make[0]?.tipAccount).toBe(TIPS[2]);
    expect(calls.make[0]?.quoteId).toBe("quote-1");
    expect(calls.make[0]?.fill).toBe(FILL);
  });

  it("draws each tip account in turn as the random draw moves across the list", async () => {
    const { iss } = ports();
    const drawn: (PublicKey | undefined)[] = [];
    for (const r of [0, 0.34, 0.67]) {
      vi.spyOn(Math, "random").mockReturnValue(r);
      const p = await prepareBundle(iss, args("mint"), 1_000);
      drawn.push(p.ok ? p.bundle.tipAccount : undefined);
    }
    expect(drawn).toEqual(TIPS);
  });

  it("refuses ISSUANCE_UNAVAILABLE, saying so, when the engine lists no tip account", async () => {
    const { iss, calls } = ports({ tips: async () => [] });
    expect(await prepareBundle(iss, args("mint"), 1_000)).toEqual({
      ok: false,
      refusal: {
        code: "ISSUANCE_UNAVAILABLE",
        context: "the bundle engine's tip accounts could not be read (it listed none); not sent",
      },
    });
    expect(calls.make).toHaveLength(0);
  });

  it("refuses ISSUANCE_UNAVAILABLE with the engine's error when the tip accounts cannot be read", async () => {
    const { iss } = ports({
      tips: async () => {
        throw new Error("engine down");
      },
    });
    expect(await prepareBundle(iss, args("mint"), 1_000)).toEqual({
      ok: false,
      refusal: {
        code: "ISSUANCE_UNAVAILABLE",
        context: "the bundle engine's tip accounts could not be read (engine down); not sent",
      },
    });
  });

  it("does not ask the engine for tip accounts with no time left", async () => {
    const tips = vi.fn(async () => TIPS);
    const { iss } = ports({ tips });
    const p = await prepareBundle(iss, args("mint"), 0);
    expect(p.ok).toBe(false);
    expect(!p.ok && p.refusal.context).toBe(
      "the bundle engine's tip accounts could not be read (no time left in the swap budget); not sent",
    );
    expect(tips).not.toHaveBeenCalled();
  });

  it.each(["mint", "burn"] as const)(
    "refuses COMPANION_UNAVAILABLE, naming the %s, when the companion cannot be signed",
    async (direction) => {
      const { iss } = ports({
        make: async () => {
          throw new Error("signer refused");
        },
      });
      expect(await prepareBundle(iss, args(direction), 1_000)).toEqual({
        ok: false,
        refusal: {
          code: "COMPANION_UNAVAILABLE",
          context: `the ${direction} transaction could not be signed: signer refused; not sent`,
        },
      });
    },
  );
});

describe("sendBundle", () => {
  const bundle: IssuanceBundle = { txs: [COMPANION, FILL], tipAccount: TIPS[0] as PublicKey };

  it("sends the bundle's transactions in order, giving the engine the step's time less the margin, and returns its id", async () => {
    const { iss, calls } = ports();
    expect(await sendBundle(iss, bundle, 1_000, 250)).toEqual({ ok: true, bundleId: "bundle-1" });
    expect(calls.send).toEqual([{ txs: [COMPANION, FILL], timeoutMs: 750 }]);
  });

  it("gives the engine no time, not a negative one, when the margin exceeds the step's time", async () => {
    const { iss, calls } = ports();
    await sendBundle(iss, bundle, 100, 250);
    expect(calls.send[0]?.timeoutMs).toBe(0);
  });

  it("refuses BUNDLE_FAILED with the engine's words when it does not accept the bundle", async () => {
    const { iss } = ports({ send: async () => ({ ok: false, error: "tip too small" }) });
    expect(await sendBundle(iss, bundle, 1_000, 250)).toEqual({
      ok: false,
      refusal: { code: "BUNDLE_FAILED", context: "the bundle was not accepted: tip too small" },
    });
  });

  it("refuses BUNDLE_FAILED, saying the engine did not answer, when the send fails or has no time", async () => {
    const { iss } = ports({
      send: async () => {
        throw new Error("socket hang up");
      },
    });
    expect(await sendBundle(iss, bundle, 1_000, 250)).toEqual({
      ok: false,
      refusal: {
        code: "BUNDLE_FAILED",
        context: "the bundle engine did not answer in time (socket hang up)",
      },
    });
    expect(await sendBundle(ports().iss, bundle, 0, 250)).toEqual({
      ok: false,
      refusal: {
        code: "BUNDLE_FAILED",
        context: "the bundle engine did not answer in time (no time left in the swap budget)",
      },
    });
  });
});
