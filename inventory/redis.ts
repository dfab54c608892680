/**
 * The Redis-backed Inventory: production, shared by every instance. Balances and reservations live in
 * Redis under the maker's hash tag (see reservations/redis.ts); a restarted instance picks up every open
 * reservation from there, and expired ones are swept by the next script that runs.
 */
import type { Cluster, Redis } from "ioredis";
import { redisKeys } from "../config/load.ts";
import { type InventoryOptions, ReservationInventory } from "./reservations/inventory.ts";
import { RedisReservations } from "./reservations/redis.ts";

export class RedisInventory extends ReservationInventory {
  /** `prefix` defaults to the config's `<redisPrefix>inv:` ("rfq:inv:"). */
  constructor(
    redis: Redis | Cluster,
    opts: InventoryOptions,
    prefix = redisKeys(opts.config.file).inventory,
  ) {
    super(new RedisReservations(redis, opts.maker.toBase58(), prefix), opts);
  }
}
