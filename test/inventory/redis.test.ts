import { randomUUID } from "node:crypto";
import { RedisInventory } from "../../inventory/redis.ts";
import { fileRedis } from "../support/redis.ts";
import { inventoryContract } from "./contract.ts";

const { redis, prefix } = fileRedis();

inventoryContract("redis", {
  setup(world) {
    // Each instance has its own connection, as separate webhook processes would.
    const run = `${prefix}${randomUUID()}:`;
    const config = {
      ...world.config,
      file: { ...world.config.file, inventory: { ...world.config.file.inventory, redisPrefix: run } },
    };
    const conns: ReturnType<typeof redis.duplicate>[] = [];
    return {
      instance: () => {
        const conn = redis.duplicate();
        conns.push(conn);
        return new RedisInventory(conn, { ...world.options(), config });
      },
      cleanup: async () => {
        for (const c of conns) c.disconnect();
      },
    };
  },
});
