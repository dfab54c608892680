/**
 * One count of what the maker holds, for planning a pass: each reservation counted exactly once.
 *
 * A reservation whose fill has landed (committed in the inventory ledger, or open with its journaled
 * signature confirmed on chain) is already gone from the chain balance: the balance alone counts it,
 * read no sooner than `inventory.settleMarginMs` after the landing was seen (the inventory's own
 * margin for a read that might miss a confirmation). A reservation whose fill has not landed is
 * subtracted from the balance (the units are promised). Never both.
 *
 * The landings are looked at before and after the balance read; a fill that lands or settles in
 * between could be on either side of the read, so the count starts over (up to `ATTEMPTS` times, then
 * the pass plans nothing rather than guess).
 *
 * What it cannot see: without the fill journal (`fills`), an open reservation whose fill has landed but
 * is not committed yet (the webhook's confirmation poll has not come round) counts as not landed.
 */
import type { PublicKey } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import { readHoldings } from "../../inventory/holdings.ts";
import type { Holding, Inventory } from "../../inventory/interface.ts";
import type { Chain } from "../chain/interface.ts";
import type { FillJournal } from "../journal/interface.ts";

const ATTEMPTS = 3;

export interface CountDeps {
  config: Config;
  chain: Chain;
  maker: PublicKey;
  inventory: Pick<Inventory, "reservations">;
  /** The webhooks' fill journal: fills sent and not yet settled, with their signatures. */
  fills?: Pick<FillJournal, "listPending">;
  now: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type HoldingsCount =
  | {
      ok: true;
      /** `balance` as read from the chain, `reserved` the reservations whose fills have not landed. */
      holdings: Holding[];
      /** Reservations counted by the balance alone (their fills landed). */
      landed: number;
      /** Reservations subtracted from the balance. */
      pending: number;
    }
  | { ok: false; error: string };

interface Seen {
  mint: string;
  amount: bigint;
  landed: boolean;
}

async function observe(d: CountDeps): Promise<Map<string, Seen>> {
  const [reservations, pendingFills] = await Promise.all([
    d.inventory.reservations(),
    d.fills ? d.fills.listPending() : Promise.resolve([]),
  ]);
  const sent = new Map(pendingFills.map((f) => [f.quoteId, f]));
  const seen = new Map<string, Seen>();
  await Promise.all(
    reservations.map(async (r) => {
      let landed = r.state === "committed";
      const fill = sent.get(r.quoteId);
      if (!landed && fill) {
        const s = await d.chain.getSignatureStatus(
          fill.signature,
          fill.blockhash ? { blockhash: fill.blockhash } : undefined,
        );
        landed = s.state === "confirmed";
      }
      seen.set(r.quoteId, { mint: r.mint, amount: r.amount, landed });
    }),
  );
  return seen;
}

/** The maker's holdings with each reservation counted once; see the module comment. */
export async function countHoldings(d: CountDeps): Promise<HoldingsCount> {
  const sleep = d.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const margin = d.config.file.inventory.settleMarginMs;
  let why = "";
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const before = await observe(d);
    const seenAt = d.now();
    if ([...before.values()].some((s) => s.landed)) {
      const wait = seenAt + margin - d.now();
      if (wait > 0) await sleep(wait);
    }
    const read = await readHoldings(d.chain, d.maker, d.config.file.tokens, d.now);
    if (!read.ok) return { ok: false, error: `chain read: ${read.error}` };
    const after = await observe(d);

    const reserved = new Map<string, bigint>();
    let landed = 0;
    let pending = 0;
    const ambiguous: string[] = [];
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      const b = before.get(id);
      const a = after.get(id);
      if (b?.landed) landed++;
      else if (a && !a.landed) {
        pending++;
        reserved.set(a.mint, (reserved.get(a.mint) ?? 0n) + a.amount);
      } else ambiguous.push(id);
    }
    if (ambiguous.length === 0) {
      const holdings: Holding[] = d.config.file.tokens.map((t) => {
        const h = read.holdings.tokens.get(t.mint);
        return {
          mint: t.mint,
          symbol: t.symbol,
          ata: h?.ata.toBase58() ?? "",
          ataExists: h?.ataExists ?? false,
          balance: h?.amount ?? 0n,
          reserved: reserved.get(t.mint) ?? 0n,
          incoming: 0n,
          ...(h?.problem ? { problem: h.problem } : h ? {} : { problem: "not read" }),
        };
      });
      return { ok: true, holdings, landed, pending };
    }
    why = `${ambiguous.length} fill(s) landed or settled during the balance read (${ambiguous.slice(0, 3).join(", ")})`;
  }
  return { ok: false, error: `no settled count after ${ATTEMPTS} tries: ${why}` };
}
