import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RedisInventory } from "../../inventory/redis.ts";
import { RedisReservations } from "../../inventory/reservations/redis.ts";
import type { RedisClient } from "../../src/redis/client.ts";
import { MINT } from "../support/config.ts";
import { fileRedisOn, topologies } from "../support/redis.ts";
import { inventoryContract } from "./contract.ts";

for (const topology of topologies()) {
  const { prefix } = fileRedisOn(topology);
  inventoryContract(`redis (${topology.name})`, {
    setup(world) {
      // Each instance has its own connection, as separate webhook processes would.
      const run = `${prefix}${randomUUID()}:`;
      const config = {
        ...world.config,
        file: { ...world.config.file, redisPrefix: run },
      };
      const conns: RedisClient[] = [];
      return {
        instance: () => {
          const conn = topology.connect();
          conns.push(conn);
          return new RedisInventory(conn, { ...world.options(), config });
        },
        store: () => {
          const conn = topology.connect();
          conns.push(conn);
          return new RedisReservations(conn, world.maker.publicKey.toBase58(), `${run}inv:`);
        },
        cleanup: async () => {
          for (const c of conns) c.disconnect();
        },
      };
    },
  });
}

for (const topology of topologies()) {
  const { prefix } = fileRedisOn(topology);
  describe(`the reservation state's Redis keys (${topology.name})`, () => {
    it("keeps balances, reservations and their indexes under the documented keys, one maker's under one hash tag", async () => {
      // The layout in reservations/redis.ts: what a restarted (or upgraded) instance reads back.
      const conn = topology.connect();
      try {
        const p = `${prefix}${randomUUID()}:`;
        const s = new RedisReservations(conn, "M", p);
        const key = (name: string) => `${p}{M}:${name}`;
        await s.setBalances(1_000, 5n, new Map([[MINT.USDC, 9n]]));
        await s.reserve({
          quoteId: "a",
          outMint: MINT.USDC,
          outAmount: 2n,
          inMint: MINT.SOL,
          inAmount: 3n,
          expiresAtMs: 2_000,
          nowMs: 1_000,
          bufferOut: 0n,
        });
        await s.reserve({
          quoteId: "b",
          outMint: MINT.USDC,
          outAmount: 1n,
          expiresAtMs: 3_000,
          nowMs: 1_000,
          bufferOut: 0n,
        });
        await s.commit("b", 4_000);
        expect(await conn.hgetall(key("bal"))).toEqual({ [MINT.USDC]: "9" });
        expect(await conn.hgetall(key("meta"))).toEqual({ at: "1000", lamports: "5" });
        expect(await conn.hgetall(key("res"))).toEqual({ [MINT.USDC]: "3" });
        expect(await conn.hgetall(key("inc"))).toEqual({ [MINT.SOL]: "3" });
        expect(await conn.hgetall(key("rec"))).toEqual({
          a: `${MINT.USDC} 2 ${MINT.SOL} 3 2000 open`,
          b: `${MINT.USDC} 1 - 0 3000 committed`,
        });
        expect(await conn.zrange(key("exp"), 0, -1, "WITHSCORES")).toEqual(["a", "2000"]);
        expect(await conn.zrange(key("cmt"), 0, -1, "WITHSCORES")).toEqual(["b", "4000"]);
      } finally {
        conn.disconnect();
      }
    });
  });
}
