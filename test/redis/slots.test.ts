/**
 * Every multi-key operation keeps its keys in one cluster slot. Statically, from the key builders the
 * stores use (for arbitrary ids and prefixes): the quote store's put and release scripts, the
 * inventory reservations' scripts, the issuance usage's reserve and release scripts, the fill journal's settle script, the signer service's record-and-spend script. Against the real test cluster: the slot
 * function agrees with CLUSTER KEYSLOT, and a multi-key command across slots is refused (CROSSSLOT),
 * which is what makes the suites' cluster runs (test/support/redis.ts `topologies`) fail on a new one.
 */
import fc from "fast-check";
import { Cluster } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { issuanceKeys } from "../../inventory/issuance/redis.ts";
import { reservationKeys } from "../../inventory/reservations/redis.ts";
import { journalKeys } from "../../src/journal/redis.ts";
import { quoteKeys } from "../../src/quote-store/redis.ts";
import { signerKeys } from "../../src/signer/service/limits.ts";
import { takerKeys } from "../../src/toxicity/redis.ts";
import { clusterNodes } from "../support/redis.ts";
import { keySlot } from "../support/slot.ts";

const oneSlot = (keys: string[]) => new Set(keys.map(keySlot)).size === 1;
// Ids as the service makes them (UUIDs, base58) and anything else without braces; prefixes as configured.
const id = fc.oneof(
  fc.uuid(),
  fc.string({ minLength: 1, maxLength: 64 }).filter((s) => !/[{}]/.test(s)),
);
const prefix = fc.constantFrom("rfq:", "rfq:quote:", "rfq:inv:", "rfq:swap:", "test:x:", "");

describe("multi-key operations stay in one slot (key builders)", () => {
  it("puts a quote, its claim and its outcome in one slot, whatever the quoteId", () => {
    fc.assert(fc.property(prefix, id, (p, q) => oneSlot(Object.values(quoteKeys(p, q)))));
    expect(oneSlot(Object.values(quoteKeys("rfq:quote:", "q-1")))).toBe(true);
  });

  it("puts all seven ledger keys of one maker in one slot", () => {
    fc.assert(fc.property(prefix, id, (p, maker) => oneSlot(reservationKeys(p, maker))));
    expect(reservationKeys("rfq:inv:", "M")).toHaveLength(7);
  });

  it("puts the signer service's replay record and the token's minute and day windows in one slot", () => {
    const mint = fc.string({ minLength: 32, maxLength: 44 }).filter((s) => !/[{}]/.test(s));
    fc.assert(
      fc.property(prefix, id, mint, fc.integer({ min: 0, max: 2 ** 45 }), (p, hash, m, now) =>
        oneSlot(Object.values(signerKeys(p, hash, m, now))),
      ),
    );
    expect(oneSlot(Object.values(signerKeys("rfq:signer:", "hash", "mint", Date.now())))).toBe(true);
  });

  it("puts the journal's pending hash and fee list in one slot", () => {
    fc.assert(fc.property(prefix, (p) => oneSlot(Object.values(journalKeys(p)))));
    expect(oneSlot(Object.values(journalKeys("rfq:swap:")))).toBe(true);
  });

  it("puts the toxic-flow controls' three taker lists in one slot (they are re-read in one MULTI)", () => {
    fc.assert(
      fc.property(prefix, (p) => {
        const { channel: _c, ...lists } = takerKeys(p);
        return oneSlot(Object.values(lists));
      }),
    );
    expect(Object.keys(takerKeys("rfq:tox:"))).toEqual(["flags", "deny", "allow", "channel"]);
  });

  it("puts the issuance reservations and every day's totals in one slot (the reserve and release scripts)", () => {
    const day = fc
      .date({ min: new Date(0), max: new Date(2 ** 42), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    fc.assert(
      fc.property(prefix, day, (p, d) => {
        const k = issuanceKeys(p);
        return oneSlot([k.res, k.day(d)]);
      }),
    );
    expect(oneSlot([issuanceKeys("rfq:iss:").res, issuanceKeys("rfq:iss:").day("2026-11-23")])).toBe(true);
  });

  it("spreads different quotes over different slots (the tag is the quoteId, not a constant)", () => {
    const slots = new Set(
      Array.from({ length: 200 }, (_, i) => keySlot(quoteKeys("rfq:quote:", `q${i}`).quote)),
    );
    expect(slots.size).toBeGreaterThan(150);
  });
});

const nodes = clusterNodes();
describe.skipIf(!nodes)("the test cluster enforces one slot per multi-key command", () => {
  const cluster = new Cluster(nodes ?? []);
  afterAll(() => cluster.disconnect());

  it("computes the same slot as CLUSTER KEYSLOT", async () => {
    const keys = [
      "rfq:ctl:paused",
      "rfq:ctl:pairs",
      "rfq:quote:{abc}:q",
      "a{}b",
      "{}{x}",
      "x{y}z{w}",
      "é{ü}",
    ];
    for (const k of keys) expect(keySlot(k), k).toBe(await cluster.cluster("KEYSLOT", k));
  });

  it("refuses a MULTI, a script and an MGET whose keys are in different slots", async () => {
    const [a, b] = ["rfq:ctl:paused", "rfq:ctl:pairs"];
    expect(keySlot(a)).not.toBe(keySlot(b));
    await expect(cluster.multi().get(a).hgetall(b).exec()).rejects.toThrow(/slot|CROSSSLOT/i);
    await expect(cluster.eval("return 1", 2, a, b)).rejects.toThrow(/CROSSSLOT/);
    await expect(cluster.mget(a, b)).rejects.toThrow(/CROSSSLOT/);
  });
});
