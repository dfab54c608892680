/** The advertised-list store in Redis: one key (`<redisPrefix>advertised`), shared by every instance. */
import type { Cluster, Redis } from "ioredis";
import { type AdvertisedStore, type PublishedLists, parseLists } from "./interface.ts";

export class RedisAdvertisedStore implements AdvertisedStore {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly key = "rfq:advertised",
  ) {}
  async load(): Promise<PublishedLists | undefined> {
    return parseLists(await this.redis.get(this.key));
  }
  async save(lists: PublishedLists): Promise<void> {
    await this.redis.set(this.key, JSON.stringify(lists));
  }
}
