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
 * Before signing, the order's transaction passes two checks: its shape (shape.ts: decoded, every
 * instruction on the allowlist of the router that quoted it, the maker's accounts writable only where
 * the trade needs them, no owner or authority handed away), before anything is reserved or simulated;
 * then its effects (prove.ts: simulated unsigned, every account the maker owns or controls compared
 * before and after). A refusal before signing (order checks, shape, inventory, proof) releases what
 * was reserved and is logged and counted under its code (`rfq_rebalance_refusals_total{code}`).
 *
 * The plan counts what the maker holds once (holdings-count.ts): a landed fill by the balance alone, a
 * pending one by its reservation, never both.
 *
 * `dryRun` plans and asks for an order as a real pass asks (the maker as taker, so its own webhook
 * declines and its own quotes are excluded); it reserves, signs and sends nothing, and says when no
 * one offered a price.
 */
import { randomUUID } from "node:crypto";
import type { VersionedTransaction } from "@solana/web3.js";
import { formatRatio, type Ratio } from "../../amounts/decimal.ts";
import type { UsdValues } from "../../amounts/usd.ts";
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { Chain } from "../chain/interface.ts";
import { IssuancePolicies } from "../issuance/policy.ts";
import type { FillJournal } from "../journal/interface.ts";
import type { Logger } from "../observability/logger.ts";
import type { ExecuteOutcomeKind } from "../operator-api/codes.ts";
import type { ExecuteOutcome, OperatorSwapApi } from "../operator-api/interface.ts";
import type { SwapOrder } from "../operator-api/wire.ts";
import { holderRule } from "../policy/trade.ts";
import { deserializeFillTransaction } from "../program/decode.ts";
import { FillRejectCode, type Refusal, type RefusalCode } from "../refusal/codes.ts";
import type { Signer } from "../signing/port.ts";
import { countHoldings } from "./holdings-count.ts";
import type { RebalanceMetrics } from "./metrics.ts";
import { type Plan, type PlannedTrade, planRebalance } from "./plan.ts";
import { declaredMakerFees, proveTransaction } from "./prove.ts";
import { checkShape } from "./shape.ts";
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
  /** The webhooks' fill journal (shared through Redis): tells a landed fill from a pending one. */
  fills?: Pick<FillJournal, "listPending">;
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
  /** Why it was refused before signing: its code (order, shape, inventory, proof or signer). */
  refusal?: RefusalCode;
  requestId?: string;
  quoteId?: string;
  /** The counterparty maker named by the order. */
  orderMaker?: string;
  signature?: string;
  /** The operator's execute code. */
  executeCode?: number;
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
  readonly #issuance: IssuancePolicies;

  constructor(deps: RebalancerDeps) {
    this.#d = deps;
    this.#issuance = new IssuancePolicies(deps.config);
    this.#now = deps.now ?? Date.now;
  }

  /** One pass; never throws for an expected failure (each is a trade report). */
  async runPass(opts: { dryRun?: boolean } = {}): Promise<PassReport> {
    const { config, inventory, usd, state, chain, signer } = this.#d;
    await inventory.refresh();
    const symbols = Object.keys(config.file.rebalance.targets);
    const count = await countHoldings({
      config,
      chain,
      maker: signer.publicKey,
      inventory,
      ...(this.#d.fills ? { fills: this.#d.fills } : {}),
      now: this.#now,
    });
    if (!count.ok) {
      this.#d.log.warn({ error: count.error }, "rebalance pass: no count of the maker's holdings");
      return {
        plan: { trades: [], skipped: symbols.map((symbol) => ({ symbol, why: count.error })) },
        trades: [],
      };
    }
    const now = this.#now();
    const states = new Map(
      await Promise.all(symbols.map(async (s) => [s, await state.get(s, now)] as const)),
    );
    const plan = planRebalance({
      config,
      holdings: count.holdings,
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

  /** Asks as the real pass asks (the maker as taker), and builds, reserves and signs nothing. */
  async #dryRun(trade: PlannedTrade): Promise<TradeReport> {
    const api = this.#d.api;
    if (!api) return { trade, outcome: "dryRun", detail: "no OPERATOR_API_URL: not asked for a price" };
    const r = await api.order({
      inputMint: trade.inputMint,
      outputMint: trade.outputMint,
      amount: trade.amount,
      taker: this.#d.signer.publicKey.toBase58(),
      excludeRouters: this.#d.config.file.rebalance.excludeRouters,
    });
    if (!r.ok) return { trade, outcome: "dryRun", detail: `no one offered a price: ${r.kind}: ${r.error}` };
    const o = r.order;
    if (o.maker === this.#d.signer.publicKey.toBase58())
      return {
        trade,
        outcome: "dryRun",
        detail: "no one offered a price: the only quote is this maker's own",
      };
    const out = BigInt(o.outAmount);
    const bad = this.#checkOrder(trade, o);
    return {
      trade,
      outcome: "dryRun",
      detail: bad
        ? `the operator offers ${o.outAmount} for ${o.inAmount} (router ${o.router}), which a pass would refuse: ${bad.code}: ${bad.context}`
        : `the operator offers ${o.outAmount} for ${o.inAmount} (router ${o.router}): within the price limit`,
      outAmount: out,
      inAmount: BigInt(o.inAmount),
      ...this.#slip(trade, o),
    };
  }

  #slip(trade: PlannedTrade, order: SwapOrder): { slippageBps?: number } {
    const s = slippageBps(trade.notionalUsd, this.#d.usd.value(trade.outputMint, BigInt(order.outAmount)));
    return s === undefined ? {} : { slippageBps: s };
  }

  /** Why an order cannot be taken as it is, or undefined when it can. */
  #checkOrder(trade: PlannedTrade, o: SwapOrder): Refusal | undefined {
    const maker = this.#d.signer.publicKey.toBase58();
    const excluded = this.#d.config.file.rebalance.excludeRouters;
    const no = (code: RefusalCode, context: string): Refusal => ({ code, context });
    if (o.errorCode !== undefined || !o.transaction)
      return no(
        "REBALANCE_ORDER_WITHOUT_TRANSACTION",
        `no transaction (errorCode ${o.errorCode ?? "none"}: ${o.errorMessage ?? "empty transaction"})`,
      );
    if (o.inputMint !== trade.inputMint || o.outputMint !== trade.outputMint)
      return no(
        "REBALANCE_ORDER_WRONG_PAIR",
        `the order swaps ${o.inputMint} -> ${o.outputMint}, not what was asked`,
      );
    if (o.taker !== maker)
      return no("REBALANCE_ORDER_WRONG_TAKER", `the order's taker is ${o.taker}, not this maker`);
    if (o.maker === maker) return no("SELF_TRADE", "the order's maker is this maker (self-trade)");
    // An issued token's holder rules (src/policy/trade.ts) bind the counterparty, which receives what
    // this maker sells and pays what it buys; an order naming none cannot show an allowed holder.
    const holder = holderRule(this.#issuance, {
      taker: o.maker ?? "(no maker named)",
      tokenIn: o.inputMint,
      tokenOut: o.outputMint,
    });
    if (holder) return no(holder.code, holder.context);
    if ((excluded as readonly string[]).includes(o.router))
      return no("REBALANCE_ORDER_EXCLUDED_ROUTER", `the order routes through excluded ${o.router}`);
    const inAmount = BigInt(o.inAmount);
    if (inAmount > trade.amount)
      return no("REBALANCE_ORDER_INPUT_EXCEEDED", `inAmount ${o.inAmount} exceeds the ${trade.amount} asked`);
    const out = BigInt(o.outAmount);
    if (out < trade.minOut)
      return no(
        "REBALANCE_ORDER_PRICE_BELOW_LIMIT",
        `outAmount ${o.outAmount} is below the price limit ${trade.minOut} (${trade.target.maxSlippageBps} bps under the maker's mid)`,
      );
    if (o.expireAt && Number(o.expireAt) * 1000 <= this.#now())
      return no("REBALANCE_ORDER_EXPIRED", `the order expired at ${o.expireAt}`);
    return undefined;
  }

  async #trade(trade: PlannedTrade): Promise<TradeReport> {
    const { api, inventory, signer, chain, config } = this.#d;
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
    const refuse = (code: RefusalCode, context: string) =>
      report({ ...ids, outcome: "refused", refusal: code, detail: `${code}: ${context}` });
    const bad = this.#checkOrder(trade, o);
    if (bad) {
      if (!o.transaction) return report({ ...ids, outcome: "noOrder", detail: bad.context });
      return refuse(bad.code, bad.context);
    }

    const parsed = deserializeFillTransaction(o.transaction as string);
    if (!parsed.ok) return refuse(FillRejectCode.MALFORMED_TRANSACTION, parsed.problem);
    const tx: VersionedTransaction = parsed.tx;
    // The shape first: nothing is reserved or simulated for a transaction it does not understand.
    const shape = checkShape({
      tx,
      order: o,
      maker,
      config,
      accounts: await chain.getAccounts([...tx.message.staticAccountKeys]),
    });
    if (!shape.ok) return refuse(shape.code, shape.context);

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
    if (!reserved.ok) return refuse(reserved.code, reserved.context);

    const proof = await proveTransaction({
      tx,
      order: {
        inputMint: o.inputMint,
        outputMint: o.outputMint,
        inAmount: ids.inAmount,
        outAmount: ids.outAmount,
        declaredFeeLamports: declaredMakerFees(o, maker.toBase58()),
      },
      maker,
      config,
      chain,
      maxFeeLamports: BigInt(config.file.rebalance.maxFeeLamports),
    });
    if (!proof.ok) {
      await inventory.release(reservationId);
      return refuse(proof.code, proof.context);
    }

    // The port's sign may become asynchronous (a remote signer): await whatever it returns.
    try {
      await signer.sign(tx);
    } catch (e) {
      // Nothing was sent: the units are free again.
      await inventory.release(reservationId);
      return refuse("SIGNATURE_UNAVAILABLE", (e as Error).message);
    }
    const x = await api.execute({
      signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
      requestId: o.requestId,
      lastValidBlockHeight,
    });
    const done = {
      ...ids,
      outcome: x.kind,
      executeCode: x.code,
      ...(x.signature ? { signature: x.signature } : {}),
    };
    return report({ ...done, detail: await this.#settle(trade, reservationId, x) });
  }

  /**
   * What the execute's outcome does to the reservation and the day's traded notional, and the report's
   * detail: a landed trade is committed and counted, one that failed on chain is released and counted
   * as tried, one that cannot have landed is released, and one whose fate is unknown keeps its units.
   */
  async #settle(trade: PlannedTrade, reservationId: string, x: ExecuteOutcome): Promise<string> {
    const { inventory, state } = this.#d;
    const now = this.#now();
    switch (x.kind) {
      case "landed":
        await inventory.commit(reservationId);
        await state.record(trade.symbol, now, trade.notionalUsd);
        await inventory.refresh();
        return `landed in slot ${x.slot ?? "?"}`;
      case "failedOnChain":
        await inventory.release(reservationId);
        await state.record(trade.symbol, now, { num: 0n, den: 1n });
        return `${x.meaning}: ${x.error ?? ""}`;
      case "expired":
      case "retrySafe":
        await inventory.release(reservationId);
        return `${x.meaning}: ${x.error ?? ""}`;
      case "notRetrySafe":
        await state.record(trade.symbol, now, trade.notionalUsd);
        return `${x.meaning}: ${x.error ?? ""} (reservation kept until the transaction can no longer land)`;
    }
  }

  /** One line per rebalance tying the order, the execute and the signature together. */
  #logLine(r: TradeReport): void {
    const m = this.#d.metrics;
    if (m) {
      m.rebalances.inc({ symbol: r.trade.symbol, outcome: r.outcome });
      if (r.refusal) m.refusals.inc({ symbol: r.trade.symbol, code: r.refusal });
      if (r.outcome === "landed") {
        if (r.slippageBps !== undefined) m.slippage.observe({ symbol: r.trade.symbol }, r.slippageBps);
        m.notionalUsd.inc({ symbol: r.trade.symbol }, Number(formatRatio(r.trade.notionalUsd, 2)));
      }
    }
    const line = {
      symbol: r.trade.symbol,
      side: r.trade.side,
      outcome: r.outcome,
      ...(r.refusal ? { refusal: r.refusal } : {}),
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
      ...(r.executeCode !== undefined ? { executeCode: r.executeCode } : {}),
      ...(r.signature ? { signature: r.signature } : {}),
      detail: r.detail,
    };
    if (r.outcome === "landed") this.#d.log.info(line, "rebalanced");
    else this.#d.log.warn(line, "rebalance not done");
  }
}
