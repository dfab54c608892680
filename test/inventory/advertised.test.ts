/**
 * /tokens and /permissioned-tokens follow the maker's real holdings on a local chain: ATA present,
 * balance at least minInventory, mint tradable. A move between the two lists alone is warned about.
 */
import { join } from "node:path";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import { AdvertisedTokenLists } from "../../inventory/advertised.ts";
import { FileAdvertisedStore } from "../../inventory/advertised-store/file.ts";
import type { AdvertisedStore } from "../../inventory/advertised-store/interface.ts";
import { RedisAdvertisedStore } from "../../inventory/advertised-store/redis.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import { creditToken } from "../../src/chain/local/seed.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { fileRedisOn, topologies } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";
import {
  logCapture,
  makeTransferFeeMint,
  makeWorld,
  removeAta,
  sortedUnionHash,
  type World,
  withExtraToken,
  withToken,
} from "./support.ts";

const redisStores = topologies().map((t) => ({ name: t.name, ...fileRedisOn(t) }));
const dir = fileTempDir("advertised");

const cleanups = cleanupsAfterEach();

async function advertise(w: World, store?: AdvertisedStore, startInventory = true) {
  const inventory = new MemoryInventory(w.options());
  cleanups.push(() => inventory.close());
  if (startInventory) await inventory.start();
  const { log, lines } = logCapture();
  const lists = new AdvertisedTokenLists(w.config, inventory, { ...(store ? { store } : {}), log });
  await lists.start();
  cleanups.push(() => lists.close());
  return { inventory, lists, lines };
}

describe("advertised token lists", () => {
  it("advertises every traded token the maker holds, split by the permissioned flag, with the union hash", async () => {
    const w = makeWorld(withToken("JUP", { permissioned: true }));
    const { lists } = await advertise(w);
    expect(lists.tokens()).toEqual([MINT.SOL, MINT.USDC, MINT.USDT]);
    expect(lists.permissionedTokens()).toEqual([MINT.JUP]);
    expect(lists.unionHash()).toBe(sortedUnionHash([MINT.SOL, MINT.USDC, MINT.USDT, MINT.JUP]));
  });

  it("drops a token whose ATA is missing, and brings it back once the ATA exists", async () => {
    const w = makeWorld();
    removeAta(w, MINT.USDT);
    const { inventory, lists } = await advertise(w);
    expect(lists.tokens()).not.toContain(MINT.USDT);
    expect(lists.reasons().find((r) => r.symbol === "USDT")!.why).toMatch(/no associated token account/);
    creditToken(w.chain, w.maker.publicKey, new PublicKey(MINT.USDT), 5_000_000n);
    await inventory.refresh();
    expect(lists.tokens()).toContain(MINT.USDT);
  });

  it("drops a token whose balance is below its minInventory until it is topped up", async () => {
    const w = makeWorld(withToken("JUP", { minInventory: "10000000" }), { inventory: { JUP: 9_999_999n } });
    const { inventory, lists } = await advertise(w);
    expect(lists.tokens()).not.toContain(MINT.JUP);
    creditToken(w.chain, w.maker.publicKey, new PublicKey(MINT.JUP), 1n);
    await inventory.refresh();
    expect(lists.tokens()).toContain(MINT.JUP);
  });

  it("never advertises a Token-2022 mint with a transfer fee", async () => {
    const fee = Keypair.generate();
    const w = makeWorld(withExtraToken(fee.publicKey.toBase58(), "FEE", TOKEN_2022_PROGRAM));
    await makeTransferFeeMint(w, fee, 25);
    const { lists } = await advertise(w);
    expect(lists.tokens()).not.toContain(fee.publicKey.toBase58());
    expect(lists.reasons().find((r) => r.symbol === "FEE")!.why).toMatch(/transfer fee of 25 bps/);
  });

  it("does not advertise a token no enabled pair trades", async () => {
    const w = makeWorld((f) => ({
      ...f,
      pairs: f.pairs.map((p) => (p.base === "JUP" ? { ...p, enabled: false } : p)),
    }));
    const { lists } = await advertise(w);
    expect(lists.tokens()).toEqual([MINT.SOL, MINT.USDC, MINT.USDT]);
  });

  describe.each<[string, () => AdvertisedStore]>([
    ["a file", () => new FileAdvertisedStore(join(dir, `${Math.random()}.json`))],
    ...redisStores.map(({ name, redis, prefix }): [string, () => AdvertisedStore] => [
      `Redis (${name})`,
      () => new RedisAdvertisedStore(redis, `${prefix}${Math.random()}:advertised`),
    ]),
  ])("remembered in %s", (_name, makeStore) => {
    it("warns that a forced re-sync is needed when a restart only moves a mint between the lists", async () => {
      const store = makeStore();
      const before = await advertise(makeWorld(), store);
      expect(before.lists.permissionedTokens()).toEqual([]);
      await before.lists.close();
      const after = await advertise(makeWorld(withToken("JUP", { permissioned: true })), store);
      expect(after.lists.permissionedTokens()).toEqual([MINT.JUP]);
      expect(after.lists.unionHash()).toBe(before.lists.unionHash());
      const warn = after.lines.find((l) => l.level === 40);
      expect(warn?.msg).toMatch(/forced re-sync/);
    });

    it("logs an ordinary change without the re-sync warning", async () => {
      const store = makeStore();
      await advertise(makeWorld(), store);
      const w = makeWorld();
      removeAta(w, MINT.JUP);
      const after = await advertise(w, store);
      expect(after.lines.some((l) => l.level === 40)).toBe(false);
      expect(after.lines.find((l) => l.msg === "advertised tokens changed")).toMatchObject({
        removed: [MINT.JUP],
      });
    });

    it("serves the last published lists until the maker's holdings have been read", async () => {
      const store = makeStore();
      const first = await advertise(makeWorld(), store);
      const notYet = await advertise(makeWorld(), store, false);
      expect(notYet.lists.tokens()).toEqual(first.lists.tokens());
      expect(notYet.lists.unionHash()).toBe(first.lists.unionHash());
    });
  });
});
