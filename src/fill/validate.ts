/**
 * The maker's check of a fill transaction before it co-signs (docs/contract.md, "The fill transaction"),
 * against the quote we answered and our configuration: decode, then every rule of `FILL_RULES`
 * (rules/index.ts), each a pure check of the fill resolved once (rules/resolve.ts); the first broken
 * rule in that list names the refusal. Pure: no clock, no network.
 * The caller verifies the taker's signature, claims the quote, then judges time (the quote's and the
 * fill's expiry, against chain time) and the taker's balances: see src/swap/executor.ts.
 */
import { createHash } from "node:crypto";
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { TokenConfig } from "../../config/schema.ts";
import { decodeFillTransaction } from "../program/decode.ts";
import type { FillTerms } from "../program/layout.ts";
import { decodeSmartAccountEnvelope } from "../program/smart-account.ts";
import type { StoredQuote } from "../quote-store/interface.ts";
import { FillRejectCode } from "../refusal/codes.ts";
import { COMPUTE_UNITS, type ComputeUnitTable } from "./compute-units.ts";
import type { RaisedFeeCap } from "./raised-fee-cap.ts";
import type { AtaCreation, FillCheck } from "./rules/check.ts";
import { FILL_RULES, RULE_NAMES } from "./rules/index.ts";
import { resolveFill } from "./rules/resolve.ts";

export type { AtaCreation };
export { FillRejectCode };

export interface ValidateFillInput {
  tx: VersionedTransaction;
  quote: StoredQuote;
  /** Our maker wallet. */
  maker: PublicKey;
  /** Configured tokens keyed by mint (base58). */
  tokens: ReadonlyMap<string, TokenConfig>;
  /** The most lamports the maker pays for one fill (limits.maxFeeLamports). */
  maxFeeLamports: bigint;
  /**
   * The cap on a fill whose compute-unit price a wallet raised above the quoted one (the quote's pair's,
   * src/fill/raised-fee-cap.ts). Unset: any raise is refused COMPUTE_UNIT_PRICE_EXCEEDED.
   */
  raisedFeeCap?: RaisedFeeCap;
  /**
   * Seconds `expire_at` may exceed the quote's expiry, for the operator creating its quote a little
   * after we answered. Default 0.
   */
  expiryGraceSeconds?: bigint;
  /** sha256 (hex) of the message bytes, when the caller already has it; otherwise computed here. */
  messageHash?: string;
  /**
   * The measured compute units the floor rule reads (compute-units.ts, the default). Tests pass a
   * table with a per-assertion Lighthouse measurement, which the local chain cannot take yet.
   */
  computeUnits?: ComputeUnitTable;
}

/** Everything the swap path needs from an accepted fill (`outputAmount` is net of the operator's fee). */
export interface ValidatedFill extends FillTerms {
  /**
   * What the maker owes the operator for this fill, in `feeMint` units: what the fill kept back on
   * the fee's side (quoted amountOut - output_amount, or input_amount - quoted amountIn).
   */
  feeOwed: bigint;
  /** The mint the fee was carried in: the output mint, or the input mint (fee-shape.ts). */
  feeMint: PublicKey;
  computeUnitLimit: number;
  computeUnitPrice: bigint;
  /** The compute-unit price is above the quote's prioritizationFeeToUse (within the raise cap). */
  priceRaised: boolean;
  numSignatures: number;
  /**
   * Set when the fill came wrapped for a smart-account taker (`taker` is then its vault): a member of
   * the smart account pays the network fee and holds signature slot 0; the maker signs `makerSlot`.
   */
  smartAccount?: { settings: PublicKey; members: PublicKey[] };
  /** The maker's signature slot: 0 in a plain fill (fee payer), a later one in a smart-account fill. */
  makerSlot: number;
  /** ceil(limit x price / 1e6) + 5,000 x signatures: the most this transaction costs the maker (0 when a member pays). */
  makerPaysLamports: bigint;
  ataCreations: AtaCreation[];
  /** The taker's input token account, or the order-engine id for a native-SOL input leg. */
  takerInputTokenAccount: PublicKey;
  /** The taker's output token account, or the order-engine id for a native-SOL output leg. */
  takerOutputTokenAccount: PublicKey;
  makerInputTokenAccount: PublicKey;
  makerOutputTokenAccount: PublicKey;
  nativeSolIn: boolean;
  nativeSolOut: boolean;
  /** sha256 (hex) of the message bytes: what the quote's claim records. */
  messageHash: string;
}

export type FillValidation =
  | { ok: true; fill: ValidatedFill }
  /** `rule`: the name of the rule in FILL_RULES that refused (absent when the bytes did not decode). */
  | { ok: false; code: FillRejectCode; context: string; rule?: string };

/** sha256 (hex) of serialized message bytes: the id a fill's claim records. */
export function messageBytesHash(messageBytes: Uint8Array): string {
  return createHash("sha256").update(messageBytes).digest("hex");
}

/** sha256 (hex) of a transaction's message bytes. */
export function fillMessageHash(tx: VersionedTransaction): string {
  return messageBytesHash(tx.message.serialize());
}

/** The fill resolved for the rules (rules/resolve.ts), or why its bytes cannot be read as one. */
export function resolveForRules(
  input: ValidateFillInput,
): { ok: true; check: FillCheck } | { ok: false; code: FillRejectCode; context: string } {
  const decoded = decodeFillTransaction(input.tx);
  if (!decoded.ok) return { ok: false, code: FillRejectCode.MALFORMED_TRANSACTION, context: decoded.problem };
  const d = decoded.decoded;
  // With lookup tables the envelope's accounts cannot all be named: noLookupTables refuses it first.
  const env = d.addressTableLookups === 0 ? decodeSmartAccountEnvelope(d) : { kind: "plain" as const };
  if (env.kind === "malformed")
    return { ok: false, code: FillRejectCode.INVALID_SMART_ACCOUNT, context: env.problem };
  const check = resolveFill({
    tx: input.tx,
    d,
    envelope: env.kind === "envelope" ? env.envelope : undefined,
    quote: input.quote,
    maker: input.maker,
    tokens: input.tokens,
    maxFeeLamports: input.maxFeeLamports,
    raisedFeeCap: input.raisedFeeCap,
    expiryGraceSeconds: input.expiryGraceSeconds ?? 0n,
    computeUnits: input.computeUnits ?? COMPUTE_UNITS,
  });
  return { ok: true, check };
}

/** Checks a fill transaction against every rule of the contract (rules/index.ts). */
export function validateFill(input: ValidateFillInput): FillValidation {
  const resolved = resolveForRules(input);
  if (!resolved.ok) return resolved;
  const c = resolved.check;
  for (const rule of FILL_RULES) {
    const refusal = rule(c);
    if (refusal) return { ok: false, ...refusal, rule: RULE_NAMES.get(rule) };
  }
  return { ok: true, fill: acceptedFill(c, input.messageHash ?? fillMessageHash(input.tx)) };
}

/** Thrown only if a fact every rule held without is missing: a rule that should have refused did not. */
export class UnresolvedFillError extends Error {}

/** A fact the rules require; present once every rule held. */
export function must<T>(value: T | undefined): T {
  if (value === undefined)
    throw new UnresolvedFillError("a fill passed every rule without a fact they require");
  return value;
}

/** What the rules established, once every one of them held. */
function acceptedFill(c: FillCheck, messageHash: string): ValidatedFill {
  const args = must(c.args);
  const fee = must(c.feeShape?.ok ? c.feeShape : undefined);
  return {
    taker: c.taker,
    inputMint: c.inputMint,
    outputMint: c.outputMint,
    inputTokenProgram: must(c.inputTokenProgram),
    outputTokenProgram: must(c.outputTokenProgram),
    inputAmount: args.inputAmount,
    outputAmount: args.outputAmount,
    expireAt: args.expireAt,
    feeBps: c.quote.request.feeBps,
    exactOut: c.quote.request.quoteType === "exactOut",
    feeOwed: fee.feeOwed,
    feeMint: fee.feeSide === "input" ? c.inputMint : c.outputMint,
    computeUnitLimit: must(c.computeUnitLimit),
    computeUnitPrice: must(c.computeUnitPrice),
    priceRaised: c.priceRaised,
    numSignatures: c.d.header.numRequiredSignatures,
    ...(c.envelope
      ? {
          smartAccount: {
            settings: c.envelope.settings.key as PublicKey,
            members: c.envelope.members.map((m) => m.key as PublicKey),
          },
        }
      : {}),
    makerSlot: c.makerIndex,
    makerPaysLamports: must(c.makerPaysLamports),
    ataCreations: [...c.ataCreations],
    takerInputTokenAccount: must(c.takerInputTokenAccount),
    takerOutputTokenAccount: must(c.takerOutputTokenAccount),
    makerInputTokenAccount: must(c.makerInputTokenAccount),
    makerOutputTokenAccount: must(c.makerOutputTokenAccount),
    nativeSolIn: c.nativeSolIn,
    nativeSolOut: c.nativeSolOut,
    messageHash,
  };
}
