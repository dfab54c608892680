/**
 * Can the taker pay? Read from the chain just before signing (docs/contract.md: the operator does not
 * pre-check permissioned pairs, and re-checks every `insufficientBalance` it receives, penalising
 * dishonest ones). So an honest rejection reason is given only when the chain shows it; a chain that
 * cannot be read gives a plain rejection instead, never a made-up balance problem.
 *
 * - SPL input: the taker's input token account must exist, hold the input mint, not be frozen, and
 *   hold at least `input_amount`.
 * - Native SOL input (the input token account is the order-engine placeholder): the taker's lamports
 *   must cover `input_amount` plus the ATA rents it pays, and leave it rent-exempt.
 * - Each `CreateIdempotent` whose ATA does not exist yet costs its payer the token account's rent;
 *   the payer's lamports must cover it and leave it rent-exempt (`insufficientBalanceForAtaCreation`).
 */
import type { PublicKey } from "@solana/web3.js";
import type { AccountSnapshot, Chain } from "../chain/interface.ts";
import type { ValidatedFill } from "../fill/validate.ts";
import { bounded } from "../lib/bounded.ts";
import { TOKEN_2022_PROGRAM_ID } from "../program/layout.ts";
import { type Refused, SwapRefusalCode as S } from "../refusal/codes.ts";

/** SPL token account: mint (0..32), owner (32..64), amount u64 LE (64..72), state byte at 108. */
const TOKEN_ACCOUNT_MIN_LEN = 165;
const STATE_OFFSET = 108;
const STATE_FROZEN = 2;
/** A Token account; a Token-2022 ATA also carries the ImmutableOwner extension (account type + TLV). */
const TOKEN_ACCOUNT_SIZE = 165;
const TOKEN_2022_ATA_SIZE = 170;

export type TakerFunds =
  | { ok: true; takerLamports: bigint; ataRentLamports: bigint }
  | Refused<typeof S.INSUFFICIENT_BALANCE | typeof S.INSUFFICIENT_BALANCE_FOR_ATA_CREATION>
  /** Not a balance problem the chain shows (unreadable chain, an account that cannot pay at all). */
  | Refused<typeof S.TAKER_FUNDS_UNVERIFIABLE>;

/**
 * Checks the taker (and any other ATA payer) can pay for a validated fill. `timeoutMs` bounds the
 * chain reads together.
 */
export async function checkTakerFunds(
  chain: Pick<Chain, "getAccounts" | "getMinimumBalanceForRentExemption">,
  fill: ValidatedFill,
  timeoutMs: number,
): Promise<TakerFunds> {
  const { taker, nativeSolIn: nativeIn } = fill;
  const inputAccount = fill.takerInputTokenAccount;

  // ATAs created by the transaction, deduplicated (a second CreateIdempotent of one ATA is free).
  const atas = new Map<string, { ata: PublicKey; payer: PublicKey; size: number }>();
  for (const c of fill.ataCreations) {
    const id = c.ata.toBase58();
    if (atas.has(id)) continue;
    const size = c.tokenProgram.equals(TOKEN_2022_PROGRAM_ID) ? TOKEN_2022_ATA_SIZE : TOKEN_ACCOUNT_SIZE;
    atas.set(id, { ata: c.ata, payer: c.payer, size });
  }
  const payers = new Map<string, PublicKey>([[taker.toBase58(), taker]]);
  for (const a of atas.values()) payers.set(a.payer.toBase58(), a.payer);

  const keys: PublicKey[] = [...payers.values(), ...[...atas.values()].map((a) => a.ata)];
  // Stryker disable next-line ConditionalExpression: a native-SOL fill never looks its input account up, so reading it too changes nothing
  if (!nativeIn) keys.push(inputAccount);
  const sizes = new Set([0, ...[...atas.values()].map((a) => a.size)]);

  const read = await bounded(async () => {
    const [accounts, ...rents] = await Promise.all([
      chain.getAccounts(keys),
      ...[...sizes].map((s) => chain.getMinimumBalanceForRentExemption(s)),
    ]);
    return { accounts: accounts as (AccountSnapshot | null)[], rents: rents as bigint[] };
  }, timeoutMs);
  if (!read.ok) {
    return {
      ok: false,
      code: S.TAKER_FUNDS_UNVERIFIABLE,
      context: `could not read the taker's balances: ${read.error}`,
    };
  }
  const { accounts, rents } = read.value;
  if (accounts.length !== keys.length) {
    return {
      ok: false,
      code: S.TAKER_FUNDS_UNVERIFIABLE,
      context: "the chain answered a different number of accounts",
    };
  }
  const rentFor = new Map([...sizes].map((s, i) => [s, rents[i] as bigint]));
  const byKey = new Map(keys.map((k, i) => [k.toBase58(), accounts[i] ?? null]));
  const rentExemptWallet = rentFor.get(0) as bigint;

  if (!nativeIn) {
    const acc = byKey.get(inputAccount.toBase58()) ?? null;
    const inputMint = fill.inputMint;
    if (!acc) {
      return {
        ok: false,
        code: S.INSUFFICIENT_BALANCE,
        context: `the taker's input token account ${inputAccount.toBase58()} does not exist`,
      };
    }
    if (
      acc.data.length < TOKEN_ACCOUNT_MIN_LEN ||
      !Buffer.from(acc.data.subarray(0, 32)).equals(inputMint.toBuffer())
    ) {
      return {
        ok: false,
        code: S.TAKER_FUNDS_UNVERIFIABLE,
        context: "the taker's input account is not a token account of the input mint",
      };
    }
    if (acc.data[STATE_OFFSET] === STATE_FROZEN) {
      return {
        ok: false,
        code: S.TAKER_FUNDS_UNVERIFIABLE,
        context: "the taker's input token account is frozen",
      };
    }
    const balance = Buffer.from(acc.data.buffer, acc.data.byteOffset, acc.data.byteLength).readBigUInt64LE(
      64,
    );
    if (balance < fill.inputAmount) {
      return {
        ok: false,
        code: S.INSUFFICIENT_BALANCE,
        context: `the taker holds ${balance} of the input mint, the fill needs ${fill.inputAmount}`,
      };
    }
  }

  // Rent owed per payer for ATAs that do not exist yet.
  const rentOwed = new Map<string, bigint>();
  for (const a of atas.values()) {
    if (byKey.get(a.ata.toBase58())) continue;
    const id = a.payer.toBase58();
    rentOwed.set(id, (rentOwed.get(id) ?? 0n) + (rentFor.get(a.size) as bigint));
  }
  for (const [id, owed] of rentOwed) {
    const lamports = byKey.get(id)?.lamports ?? 0n;
    if (lamports < owed + rentExemptWallet) {
      return {
        ok: false,
        code: S.INSUFFICIENT_BALANCE_FOR_ATA_CREATION,
        context: `${id} has ${lamports} lamports; creating the token account needs ${owed} and ${rentExemptWallet} must remain`,
      };
    }
  }

  const takerId = taker.toBase58();
  const takerLamports = byKey.get(takerId)?.lamports ?? 0n;
  const takerAtaRent = rentOwed.get(takerId) ?? 0n;
  if (nativeIn && takerLamports < fill.inputAmount + takerAtaRent + rentExemptWallet) {
    return {
      ok: false,
      code: S.INSUFFICIENT_BALANCE,
      context: `the taker has ${takerLamports} lamports; the fill needs ${fill.inputAmount} plus ${takerAtaRent} of token account rent, and ${rentExemptWallet} must remain`,
    };
  }
  return { ok: true, takerLamports, ataRentLamports: takerAtaRent };
}
