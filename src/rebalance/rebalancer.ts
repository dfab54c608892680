/**
 * One rebalancing pass: read the maker's balances from the chain, plan (plan.ts), and for each planned
 * trade ask the operator for an order with the maker's wallet as taker, check the answer against the
 * maker's own price and limits, reserve what it sells in the inventory ledger (so quotes never promise
 * it twice), prove the transaction does only what the order says (prove.ts) before the signer sees it,
 * sign through the signer port, execute, and settle:
 *
 * | execute outcome | reservation                       | cooldown / daily notional          |
 * | --------------- | --------------------------------- | ---------------------------------- |
 * | landed          | committed (the units left)        | recorded, the trade's notional     |
 * | failedOnChain   | released                          | cooldown only (fees were paid)     |
 * | expired         | released                          | nothing                            |
 * | retrySafe       | released                          | nothing                            |
 * | notRetrySafe    | kept until it lapses (the signed  | recorded, counted as if it landed: |
 * |                 | transaction's blockhash lifetime) | it may still land                  |
 *
 * A refusal before signing (order checks, inventory, proof) releases what was reserved and is logged.
 * `dryRun` plans and, with an operator API, asks for a price-only order (no taker: nothing is built);
 * it reserves, signs and sends nothing.
 */
import { randomUUID } from "node:crypto";
import { VersionedTransaction } from "@solana/web3.js";
import { formatRatio, type Ratio } from "../../amounts/decimal.ts";
import type { UsdValues } from "../../amounts/usd.ts";
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { Chain } from "../chain/interface.ts";
import type { Logger } from "../observability/logger.ts";
import type { ExecuteOutcomeKind } from "../operator-api/codes.ts";
import type { OperatorSwapApi } from "../operator-api/interface.ts";
import type { SwapOrder } from "../operator-api/wire.ts";
import type { Signer } from "../signer/index.ts";
import type { RebalanceMetrics } from "./metrics.ts";
import { type Plan, type PlannedTrade, planRebalance } from "./plan.ts";
import { proveTransaction } from "./prove.ts";
import type { RebalanceState } from "./state.ts";

export interface RebalancerDeps {
  config: Config;
  chain: Chain;
  signer: Signer;
  inventory: Inventory;
  usd: UsdValues;
  /** Absent: dry runs can still plan; a real pass refuses to trade. */
  api?: OperatorSwapApi;
  state: RebalanceState;
  log: Logger;
  metrics?: RebalanceMetrics;
  now?: () => number;
}

export type TradeOutcomeKind =
  | ExecuteOutcomeKind
  /** No usable order (the operator refused, or answered an error code). */
  | "noOrder"
  /** Refused before signing: the order failed a check, the inventory said no, or the proof failed. */
  | "refused"
  /** Dry run: what would be asked. */
  | "dryRun";

export interface TradeReport {
  trade: PlannedTrade;
  outcome: TradeOutcomeKind;
  detail: string;
  requestId?: string;
  quoteId?: string;
  /** The counterparty maker named by the order. */
  orderMaker?: string;
  signature?: string;
  code?: number;
  inAmount?: bigint;
  outAmount?: bigint;
  /** The price against the maker's mids: positive bps = worse than mid. */
  slippageBps?: number;
}

export interface PassReport {
  plan: Plan;
  trades: TradeReport[];
}

/** bps by which `out` (valued at the mids) falls short of `paid`; negative when it beats the mid. */
function slippageBps(paid: Ratio, out: Ratio | undefined): number | undefined {
  if (!out || paid.num === 0n) return undefined;
  // (paid - out) / paid * 10_000, to two decimals.
  const num = (paid.num * out.den - out.num * paid.den) * 1_000_000n;
  const den = paid.num * out.den;
  return Number(num / den) / 100;
}

export class Rebalancer {
  readonly #d: RebalancerDeps;
  readonly #now: () => number;

  constructor(deps: RebalancerDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** One pass; never throws for an expected failure (each is a trade report). */
  async runPass(opts: { dryRun?: boolean } = {}): Promise<PassReport> {
    const { config, inventory, usd, state } = this.#d;
    await inventory.refresh();
    const now = this.#now();
    const symbols = Object.keys(config.file.rebalance.targets);
    const states = new Map(
      await Promise.all(symbols.map(async (s) => [s, await state.get(s, now)] as const)),
    );
    const plan = planRebalance({
      config,
      holdings: inventory.snapshot().holdings,
      usd,
      state: (s) => states.get(s) ?? { notionalTodayUsd: { num: 0n, den: 1n } },
      now,
    });
    const trades: TradeReport[] = [];
    for (const trade of plan.trades) {
      trades.push(opts.dryRun ? await this.#dryRun(trade) : await this.#trade(trade));
    }
    return { plan, trades };
  }

  async #dryRun(trade: PlannedTrade): Promise<TradeReport> {
    const api = this.#d.api;
    if (!api) return { trade, outcome: "dryRun", detail: "no OPERATOR_API_URL: not asked for a price" };
    const r = await api.order({
      inputMint: trade.inputMint,
      outputMint: trade.outputMint,
      amount: trade.amount,
      excludeRouters: this.#d.config.file.rebalance.excludeRouters,
    });
    if (!r.ok)
      return { trade, outcome: "dryRun", detail: `the operator has no price now: ${r.kind}: ${r.error}` };
    const out = BigInt(r.order.outAmount);
    const within = out >= trade.minOut;
    return {
      trade,
      outcome: "dryRun",
      detail: `the operator offers ${r.order.outAmount} for ${r.order.inAmount} (router ${r.order.router}): ${within ? "within" : "outside"} the price limit`,
      outAmount: out,
      inAmount: BigInt(r.order.inAmount),
      ...this.#slip(trade, r.order),
    };
  }

  #slip(trade: PlannedTrade, order: SwapOrder): { slippageBps?: number } {
    const s = slippageBps(trade.notionalUsd, this.#d.usd.value(trade.outputMint, BigInt(order.outAmount)));
    return s === undefined ? {} : { slippageBps: s };
  }

  /** Why an order cannot be taken as it is, or undefined when it can. */
  #checkOrder(trade: PlannedTrade, o: SwapOrder): string | undefined {
    const maker = this.#d.signer.publicKey.toBase58();
    const excluded = this.#d.config.file.rebalance.excludeRouters;
    if (o.errorCode !== undefined || !o.transaction)
      return `no transaction (errorCode ${o.errorCode ?? "none"}: ${o.errorMessage ?? "empty transaction"})`;
    if (o.inputMint !== trade.inputMint || o.outputMint !== trade.outputMint)
      return `the order swaps ${o.inputMint} -> ${o.outputMint}, not what was asked`;
    if (o.taker !== maker) return `the order's taker is ${o.taker}, not this maker`;
    if (o.maker === maker) return "the order's maker is this maker (self-trade)";
    if ((excluded as readonly string[]).includes(o.router))
      return `the order routes through excluded ${o.router}`;
    const inAmount = BigInt(o.inAmount);
    if (inAmount > trade.amount) return `inAmount ${o.inAmount} exceeds the ${trade.amount} asked`;
    const out = BigInt(o.outAmount);
    if (out < trade.minOut)
      return `outAmount ${o.outAmount} is below the price limit ${trade.minOut} (${trade.target.maxSlippageBps} bps under the maker's mid)`;
    if (o.expireAt && Number(o.expireAt) * 1000 <= this.#now()) return `the order expired at ${o.expireAt}`;
    return undefined;
  }

  async #trade(trade: PlannedTrade): Promise<TradeReport> {
    const { api, inventory, signer, chain, config, state, log } = this.#d;
    const report = (r: Omit<TradeReport, "trade">): TradeReport => {
      const full = { trade, ...r };
      this.#logLine(full);
      return full;
    };
    if (!api) return report({ outcome: "noOrder", detail: "OPERATOR_API_URL is not set" });
    const maker = signer.publicKey;
    const r = await api.order({
      inputMint: trade.inputMint,
      outputMint: trade.outputMint,
      amount: trade.amount,
      taker: maker.toBase58(),
      excludeRouters: config.file.rebalance.excludeRouters,
    });
    if (!r.ok) return report({ outcome: "noOrder", detail: `${r.kind}: ${r.error}` });
    const o = r.order;
    const ids = {
      requestId: o.requestId,
      ...(o.quoteId ? { quoteId: o.quoteId } : {}),
      ...(o.maker ? { orderMaker: o.maker } : {}),
      inAmount: BigInt(o.inAmount),
      outAmount: BigInt(o.outAmount),
      ...this.#slip(trade, o),
    };
    const bad = this.#checkOrder(trade, o);
    if (bad) return report({ ...ids, outcome: o.transaction ? "refused" : "noOrder", detail: bad });

    let tx: VersionedTransaction;
    try {
      tx = VersionedTransaction.deserialize(Buffer.from(o.transaction as string, "base64"));
    } catch (e) {
      return report({
        ...ids,
        outcome: "refused",
        detail: `transaction: not decodable: ${(e as Error).message}`,
      });
    }
    const { lastValidBlockHeight } = await chain.getLatestBlockhash();
    // The reservation outlives the blockhash (about 150 blocks of 400 ms) by a margin: a signed
    // transaction whose fate is unknown keeps the units promised until it can no longer land.
    const reservationId = `rebalance:${randomUUID()}`;
    const reserved = await inventory.reserve({
      quoteId: reservationId,
      mint: trade.inputMint,
      amount: ids.inAmount,
      inputMint: trade.outputMint,
      inputAmount: ids.outAmount,
      expiresAtMs: this.#now() + config.file.rebalance.executeTimeoutMs + 90_000,
    });
    if (!reserved.ok)
      return report({
        ...ids,
        outcome: "refused",
        detail: `inventory: ${reserved.reason}: ${reserved.detail}`,
      });

    const proof = await proveTransaction({
      tx,
      order: {
        inputMint: o.inputMint,
        outputMint: o.outputMint,
        inAmount: ids.inAmount,
        outAmount: ids.outAmount,
      },
      maker,
      config,
      chain,
      maxFeeLamports: BigInt(config.file.rebalance.maxFeeLamports),
    });
    if (!proof.ok) {
      await inventory.release(reservationId);
      log.warn(
        {
          symbol: trade.symbol,
          requestId: o.requestId,
          quoteId: o.quoteId,
          code: proof.code,
          detail: proof.detail,
        },
        "rebalance refused before signing: the transaction does more than the order says",
      );
      return report({ ...ids, outcome: "refused", detail: `${proof.code}: ${proof.detail}` });
    }

    // The port's sign may become asynchronous (a remote signer): await whatever it returns.
    try {
      await signer.sign(tx);
    } catch (e) {
      // Nothing was sent: the units are free again.
      await inventory.release(reservationId);
      return report({ ...ids, outcome: "refused", detail: `signer: ${(e as Error).message}` });
    }
    const x = await api.execute({
      signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
      requestId: o.requestId,
      lastValidBlockHeight,
    });
    const done = {
      ...ids,
      outcome: x.kind,
      code: x.code,
      ...(x.signature ? { signature: x.signature } : {}),
    };
    const now = this.#now();
    switch (x.kind) {
      case "landed":
        await inventory.commit(reservationId);
        await state.record(trade.symbol, now, trade.notionalUsd);
        await inventory.refresh();
        return report({ ...done, detail: `landed in slot ${x.slot ?? "?"}` });
      case "failedOnChain":
        await inventory.release(reservationId);
        await state.record(trade.symbol, now, { num: 0n, den: 1n });
        return report({ ...done, detail: `${x.meaning}: ${x.error ?? ""}` });
      case "expired":
      case "retrySafe":
        await inventory.release(reservationId);
        return report({ ...done, detail: `${x.meaning}: ${x.error ?? ""}` });
      case "notRetrySafe":
        await state.record(trade.symbol, now, trade.notionalUsd);
        return report({
          ...done,
          detail: `${x.meaning}: ${x.error ?? ""} (reservation kept until the transaction can no longer land)`,
        });
    }
  }

  /** One line per rebalance tying the order, the execute and the signature together. */
  #logLine(r: TradeReport): void {
    const m = this.#d.metrics;
    if (m) {
      m.rebalances.inc({ symbol: r.trade.symbol, outcome: r.outcome });
      if (r.outcome === "landed") {
        if (r.slippageBps !== undefined) m.slippage.observe({ symbol: r.trade.symbol }, r.slippageBps);
        m.notionalUsd.inc({ symbol: r.trade.symbol }, Number(formatRatio(r.trade.notionalUsd, 2)));
      }
    }
    const line = {
      symbol: r.trade.symbol,
      side: r.trade.side,
      outcome: r.outcome,
      inputMint: r.trade.inputMint,
      outputMint: r.trade.outputMint,
      asked: r.trade.amount.toString(),
      minOut: r.trade.minOut.toString(),
      notionalUsd: formatRatio(r.trade.notionalUsd, 2),
      ...(r.requestId ? { requestId: r.requestId } : {}),
      ...(r.quoteId ? { quoteId: r.quoteId } : {}),
      ...(r.orderMaker ? { orderMaker: r.orderMaker } : {}),
      ...(r.inAmount !== undefined ? { inAmount: r.inAmount.toString() } : {}),
      ...(r.outAmount !== undefined ? { outAmount: r.outAmount.toString() } : {}),
      ...(r.slippageBps !== undefined ? { slippageBps: r.slippageBps } : {}),
      ...(r.code !== undefined ? { executeCode: r.code } : {}),
      ...(r.signature ? { signature: r.signature } : {}),
      detail: r.detail,
    };
    if (r.outcome === "landed") this.#d.log.info(line, "rebalanced");
    else this.#d.log.warn(line, "rebalance not done");
  }
}
