/**
 * The issuer's half of a fill of a token the maker issues (docs/contract.md, "Permissioned tokens"):
 * the fill's message is fixed, so the mint (before it) or the burn (after it) and the engine's tip go
 * in the maker's own companion transaction, and both are sent as one bundle through the bundle port:
 * they land together or not at all. No pre-flight: a fill of a minted token fails alone by design
 * (the maker holds none before the mint), and the bundle is what runs.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import { bounded } from "../lib/bounded.ts";
import { type Refusal, refusal, SwapRefusalCode as S } from "../refusal/codes.ts";
import type { IssuanceNeed } from "./policy.ts";
import type { IssuancePorts } from "./ports.ts";

/** The co-signed fill and its companion, in the order they land, and the tip account chosen. */
export interface IssuanceBundle {
  txs: VersionedTransaction[];
  tipAccount: PublicKey;
}

/** Reads the engine's tip accounts and has the companion signed; a refusal when either fails. */
export async function prepareBundle(
  iss: IssuancePorts,
  a: { need: IssuanceNeed; fill: VersionedTransaction; makerTokenAccount: PublicKey; quoteId: string },
  readMs: number,
): Promise<{ ok: true; bundle: IssuanceBundle } | { ok: false; refusal: Refusal }> {
  // A need comes only with a bundle engine (the swap's checks refuse ISSUANCE_UNAVAILABLE otherwise).
  const bundles = iss.bundles as NonNullable<IssuancePorts["bundles"]>;
  const tips = await bounded(() => bundles.getTipAccounts(), readMs);
  if (!tips.ok || tips.value.length === 0) {
    const why = tips.ok ? "it listed none" : tips.error;
    const context = `the bundle engine's tip accounts could not be read (${why}); not sent`;
    return { ok: false, refusal: refusal(S.ISSUANCE_UNAVAILABLE, context) };
  }
  const tipAccount = tips.value[Math.floor(Math.random() * tips.value.length)] as PublicKey;
  try {
    const companion = await iss.companions.make({ ...a, tipAccount });
    const txs = a.need.direction === "mint" ? [companion, a.fill] : [a.fill, companion];
    return { ok: true, bundle: { txs, tipAccount } };
  } catch (err) {
    const why = `the ${a.need.direction} transaction could not be signed: ${(err as Error).message}; not sent`;
    return { ok: false, refusal: refusal(S.COMPANION_UNAVAILABLE, why) };
  }
}

/** Sends the bundle; its id, or why the engine did not take it. */
export async function sendBundle(
  iss: IssuancePorts,
  bundle: IssuanceBundle,
  sendMs: number,
  marginMs: number,
): Promise<{ ok: true; bundleId: string } | { ok: false; refusal: Refusal }> {
  const bundles = iss.bundles as NonNullable<IssuancePorts["bundles"]>;
  const sent = await bounded(
    () => bundles.sendBundle(bundle.txs, { timeoutMs: Math.max(0, sendMs - marginMs) }),
    sendMs,
  );
  if (sent.ok && sent.value.ok) return { ok: true, bundleId: sent.value.bundleId };
  const why = sent.ok
    ? `the bundle was not accepted: ${(sent.value as { error: string }).error}`
    : `the bundle engine did not answer in time (${sent.error})`;
  return { ok: false, refusal: refusal(S.BUNDLE_FAILED, why) };
}
