/**
 * The Redis-backed Inventory: production, shared by every instance. Balances and reservations live in
 * Redis under the maker's hash tag (see ledger-redis.ts); a restarted instance picks up every open
 * reservation from there, and expired ones are swept by the next script that runs.
 */
import type { Redis } from "ioredis";
import { type InventoryOptions, LedgerInventory } from "./ledger-inventory.ts";
import { RedisLedger } from "./ledger-redis.ts";

export class RedisInventory extends LedgerInventory {
  constructor(redis: Redis, opts: InventoryOptions) {
    super(new RedisLedger(redis, opts.maker.toBase58(), opts.config.file.inventory.redisPrefix), opts);
  }
}
