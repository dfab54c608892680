import { randomUUID } from "node:crypto";
import { RedisInventory } from "../../inventory/redis.ts";
import type { RedisClient } from "../../src/redis/client.ts";
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
        cleanup: async () => {
          for (const c of conns) c.disconnect();
        },
      };
    },
  });
}
