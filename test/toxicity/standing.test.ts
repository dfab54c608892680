/**
 * The shared taker lists (src/toxicity/): every instance sees a change through pub/sub without a
 * Redis round trip per read, a lost message is caught by the periodic reload, expiry is judged at read
 * time, lapsed entries are dropped when a list is next written, and the allow list beats everything.
 * Against a real Redis, single node and the three-master cluster (every write and read in one slot).
 */
import { Keypair } from "@solana/web3.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseFileConfig } from "../../config/load.ts";
import { toxicitySchema } from "../../config/schema.ts";
import { MemoryTakerStanding } from "../../src/toxicity/memory.ts";
import { RedisTakerStanding, takerKeys } from "../../src/toxicity/redis.ts";
import { defaultFileConfig } from "../support/config.ts";
import { fileRedisOn, topologies } from "../support/redis.ts";

const who = () => Keypair.generate().publicKey.toBase58();
const cfg = (over: Partial<{ deny: string[]; allow: string[] }> = {}) => toxicitySchema.parse(over);
const flag = (taker: string, untilMs: number) => ({
  taker,
  reason: "test",
  source: "admin" as const,
  atMs: Date.now(),
  untilMs,
});

async function eventually(check: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const topology of topologies()) {
  describe(`RedisTakerStanding (${topology.name})`, () => {
    const { redis, prefix } = fileRedisOn(topology);
    const open: RedisTakerStanding[] = [];
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });
    const instance = async (reloadMs = 60_000, config = cfg()) => {
      const s = new RedisTakerStanding(redis, config, { prefix: `${prefix}tox:`, reloadMs });
      await s.start();
      open.push(s);
      return s;
    };

    it("shows a flag written by one instance to another through pub/sub, long before its periodic reload", async () => {
      const [a, b] = [await instance(), await instance()];
      const t = who();
      await a.put("flags", flag(t, Date.now() + 60_000));
      expect(a.standing(t, Date.now()).kind).toBe("flagged");
      await eventually(() => b.standing(t, Date.now()).kind === "flagged", 1_000);
      expect(await a.remove("flags", t)).toBe(true);
      await eventually(() => b.standing(t, Date.now()).kind === "none", 1_000);
      expect(await a.remove("flags", t)).toBe(false);
    });

    it("catches up on a change whose message it missed at its periodic reload", async () => {
      const b = await instance(200);
      const t = who();
      // Written by hand, no PUBLISH: only the reload can see it.
      await redis.hset(
        takerKeys(`${prefix}tox:`).deny,
        t,
        JSON.stringify({ reason: "by hand", atMs: Date.now() }),
      );
      expect(b.standing(t, Date.now()).kind).toBe("none");
      await eventually(() => b.standing(t, Date.now()).kind === "denied", 2_000);
      expect(b.standing(t, Date.now())).toMatchObject({ kind: "denied", entry: { reason: "by hand" } });
    });

    it("judges expiry at read time and drops lapsed entries when the list is next written", async () => {
      const a = await instance();
      const [old, fresh] = [who(), who()];
      const now = Date.now();
      await a.put("flags", flag(old, now + 500));
      expect(a.standing(old, now).kind).toBe("flagged");
      expect(a.standing(old, now + 501).kind).toBe("none");
      expect(a.list(now + 501).flags).toEqual([]);
      await new Promise((r) => setTimeout(r, 600));
      await a.put("flags", flag(fresh, Date.now() + 60_000));
      const kept = await redis.hkeys(takerKeys(`${prefix}tox:`).flags);
      expect(kept).toEqual([fresh]);
    });
  });
}

describe("taker standing, whatever the adapter", () => {
  it("lets the allow list beat the deny list and a flag, and keeps config entries out of reach of remove", async () => {
    const [allowed, denied] = [who(), who()];
    const s = new MemoryTakerStanding(cfg({ allow: [allowed], deny: [denied] }));
    await s.put("flags", flag(allowed, Date.now() + 60_000));
    await s.put("deny", { ...flag(allowed, Date.now() + 60_000) });
    expect(s.standing(allowed, Date.now()).kind).toBe("allowed");
    expect(s.standing(denied, Date.now()).kind).toBe("denied");
    expect(await s.remove("deny", denied)).toBe(false);
    expect(s.standing(denied, Date.now()).kind).toBe("denied");
    expect(s.isConfigured("deny", denied)).toBe(true);
  });

  it("refuses a configuration that puts one taker on both lists, naming it", () => {
    const t = who();
    const file = (toxicity: Record<string, unknown>) => () =>
      parseFileConfig({ ...defaultFileConfig(), toxicity });
    expect(file({ deny: [t] })).not.toThrow();
    expect(file({ deny: [t], allow: [t] })).toThrow(/toxicity\.deny\.0: \S+ is also in toxicity\.allow/);
    expect(file({ enabled: true, widenBy: 5 })).toThrow(
      /toxicity\.widenBy: unknown key \(did you mean "widenBps"\?\)/,
    );
  });
});
