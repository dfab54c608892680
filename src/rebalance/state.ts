/**
 * What the rebalancer remembers between passes, per token: when it last traded (the cooldown) and how
 * much USD it moved today (the daily notional cap, UTC days). In Redis when configured, so a restarted
 * or second rebalancer process sees the same limits; in memory otherwise (the paper setup).
 *
 * Notional is kept in micro-USD, rounded up: a cap is never exceeded by rounding.
 */

import type { Ratio } from "../../amounts/decimal.ts";
import type { RedisClient } from "../redis/client.ts";
import type { TokenTradeState } from "./plan.ts";

export interface RebalanceState {
  get(symbol: string, nowMs: number): Promise<TokenTradeState>;
  /** A trade was attempted at `nowMs` and may have moved `notionalUsd` (zero when it surely did not). */
  record(symbol: string, nowMs: number, notionalUsd: Ratio): Promise<void>;
}

const MICRO = 1_000_000n;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const toMicro = (r: Ratio) => (r.num * MICRO + r.den - 1n) / r.den;

export class MemoryRebalanceState implements RebalanceState {
  readonly #last = new Map<string, number>();
  readonly #micro = new Map<string, bigint>();

  async get(symbol: string, nowMs: number): Promise<TokenTradeState> {
    const last = this.#last.get(symbol);
    return {
      ...(last !== undefined ? { lastTradeAtMs: last } : {}),
      notionalTodayUsd: { num: this.#micro.get(`${symbol}|${utcDay(nowMs)}`) ?? 0n, den: MICRO },
    };
  }

  async record(symbol: string, nowMs: number, notionalUsd: Ratio): Promise<void> {
    this.#last.set(symbol, nowMs);
    const k = `${symbol}|${utcDay(nowMs)}`;
    this.#micro.set(k, (this.#micro.get(k) ?? 0n) + toMicro(notionalUsd));
  }
}

export class RedisRebalanceState implements RebalanceState {
  constructor(
    private readonly redis: RedisClient,
    /** e.g. "rfq:rebal:" */
    private readonly prefix: string,
  ) {}

  async get(symbol: string, nowMs: number): Promise<TokenTradeState> {
    const [last, micro] = await this.redis.mget(
      `${this.prefix}{${symbol}}:last`,
      `${this.prefix}{${symbol}}:usd:${utcDay(nowMs)}`,
    );
    return {
      ...(last ? { lastTradeAtMs: Number(last) } : {}),
      notionalTodayUsd: { num: BigInt(micro ?? "0"), den: MICRO },
    };
  }

  async record(symbol: string, nowMs: number, notionalUsd: Ratio): Promise<void> {
    const usdKey = `${this.prefix}{${symbol}}:usd:${utcDay(nowMs)}`;
    await this.redis
      .multi()
      .set(`${this.prefix}{${symbol}}:last`, String(nowMs))
      .incrby(usdKey, toMicro(notionalUsd).toString())
      .expire(usdKey, 3 * 86_400)
      .exec();
  }
}
