/**
 * The taker's funds check (taker-funds.ts) over reads that are asked again while they fail: a read
 * changes nothing on the chain, so a second request is harmless where a first was lost in a stall.
 */
import type { Chain } from "../chain/interface.ts";
import type { Bounded } from "../lib/bounded.ts";

/** Runs one read, asking again while it fails (`retried` with the step's bounds). */
export type ReadAgain = <T>(read: () => Promise<T>) => Promise<Bounded<T>>;

async function answer<T>(outcome: Promise<Bounded<T>>): Promise<T> {
  const r = await outcome;
  if (r.ok) return r.value;
  throw new Error(r.error);
}

/** The funds check's reads of `chain`, each through `again`. */
export function fundsReads(
  chain: Pick<Chain, "getAccounts" | "getMinimumBalanceForRentExemption">,
  again: ReadAgain,
): Pick<Chain, "getAccounts" | "getMinimumBalanceForRentExemption"> {
  return {
    getAccounts: (keys) => answer(again(() => chain.getAccounts(keys))),
    getMinimumBalanceForRentExemption: (n) => answer(again(() => chain.getMinimumBalanceForRentExemption(n))),
  };
}
