/**
 * The resolve step: the decoded fill, the quote and our configuration turned into one complete typed
 * value, every fact a rule reads derived here once (the fill instruction and its accounts, the compute
 * budget, the ATA creations, the tokens and token accounts, the fee shape). Judges nothing: a fact the
 * message lacks stays `undefined`, and the rule that requires it refuses.
 */
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { TokenConfig } from "../../../config/schema.ts";
import type { DecodedFillTx, DecodedInstruction, FillIx } from "../../program/decode.ts";
import { NATIVE_MINT, ORDER_ENGINE_PROGRAM_ID } from "../../program/layout.ts";
import type { SmartAccountEnvelope } from "../../program/smart-account.ts";
import type { StoredQuote } from "../../quote-store/interface.ts";
import { associatedTokenAddress } from "../ata.ts";
import type { ComputeUnitTable } from "../compute-units.ts";
import { checkFeeShape } from "../fee-shape.ts";
import type { RaisedFeeCap } from "../raised-fee-cap.ts";
import type { AtaCreation, FillCheck } from "./check.ts";
import { keyOf } from "./check.ts";
import { makerFeeLamports } from "./compute-budget.ts";

export interface ResolveInput {
  tx: VersionedTransaction;
  d: DecodedFillTx;
  envelope: SmartAccountEnvelope | undefined;
  quote: StoredQuote;
  maker: PublicKey;
  tokens: ReadonlyMap<string, TokenConfig>;
  maxFeeLamports: bigint;
  raisedFeeCap: RaisedFeeCap | undefined;
  expiryGraceSeconds: bigint;
  computeUnits: ComputeUnitTable;
}

export function resolveFill(input: ResolveInput): FillCheck {
  const { d, envelope, quote, maker, tokens } = input;
  const indexOf = (key: PublicKey) => d.staticKeys.findIndex((k) => k.equals(key));
  const instructions: readonly DecodedInstruction[] = envelope
    ? [
        ...d.instructions.slice(0, envelope.position),
        ...envelope.inner,
        ...d.instructions.slice(envelope.position + 1),
      ]
    : d.instructions;
  const inputMint = new PublicKey(quote.request.tokenIn);
  const outputMint = new PublicKey(quote.request.tokenOut);

  const fill = instructions.find((ix): ix is FillIx => ix.kind === "fill");
  const accounts = fill?.named;
  const args = fill?.args;

  let computeUnitLimit: number | undefined;
  let computeUnitPrice: bigint | undefined;
  const ataCreations: AtaCreation[] = [];
  for (const ix of instructions) {
    if (ix.kind === "computeUnitLimit") computeUnitLimit ??= ix.units;
    else if (ix.kind === "computeUnitPrice") computeUnitPrice ??= ix.microLamports;
    else if (ix.kind === "ataCreateIdempotent" && ix.named) {
      const { payer, ata, owner, mint, tokenProgram } = ix.named;
      ataCreations.push({
        payer: keyOf(payer),
        ata: keyOf(ata),
        owner: keyOf(owner),
        mint: keyOf(mint),
        tokenProgram: keyOf(tokenProgram),
      });
    }
  }
  const signatures = d.header.numRequiredSignatures;
  const makerPaysLamports = envelope
    ? 0n
    : computeUnitLimit !== undefined && computeUnitPrice !== undefined
      ? makerFeeLamports(computeUnitLimit, computeUnitPrice, signatures)
      : undefined;
  const quoted = quote.response.prioritizationFeeToUse;
  const priceRaised =
    quoted !== undefined && computeUnitPrice !== undefined && computeUnitPrice > BigInt(quoted);

  const inputToken = tokens.get(quote.request.tokenIn);
  const outputToken = tokens.get(quote.request.tokenOut);
  const inputTokenProgram = inputToken && new PublicKey(inputToken.tokenProgram);
  const outputTokenProgram = outputToken && new PublicKey(outputToken.tokenProgram);
  const takerInputTokenAccount = accounts && keyOf(accounts.takerInputTokenAccount);
  const takerOutputTokenAccount = accounts && keyOf(accounts.takerOutputTokenAccount);
  const nativeLeg = (account: PublicKey | undefined, mint: PublicKey) =>
    account?.equals(ORDER_ENGINE_PROGRAM_ID) === true && mint.equals(NATIVE_MINT);

  return {
    tx: input.tx,
    d,
    quote,
    maker,
    tokens,
    maxFeeLamports: input.maxFeeLamports,
    raisedFeeCap: input.raisedFeeCap,
    expiryGraceSeconds: input.expiryGraceSeconds,
    computeUnits: input.computeUnits,
    envelope,
    instructions,
    makerIndex: envelope ? indexOf(maker) : 0,
    takerIndex: envelope ? indexOf(envelope.vault) : 1,
    taker: envelope ? envelope.vault : (d.staticKeys[1] as PublicKey),
    inputMint,
    outputMint,
    fill,
    args,
    accounts,
    computeUnitLimit,
    computeUnitPrice,
    makerPaysLamports,
    priceRaised,
    ataCreations,
    inputToken,
    outputToken,
    inputTokenProgram,
    outputTokenProgram,
    makerInputTokenAccount: inputTokenProgram && associatedTokenAddress(inputMint, maker, inputTokenProgram),
    makerOutputTokenAccount:
      outputTokenProgram && associatedTokenAddress(outputMint, maker, outputTokenProgram),
    takerInputTokenAccount,
    takerOutputTokenAccount,
    nativeSolIn: nativeLeg(takerInputTokenAccount, inputMint),
    nativeSolOut: nativeLeg(takerOutputTokenAccount, outputMint),
    feeShape:
      args &&
      checkFeeShape({
        quotedIn: BigInt(quote.response.amountIn),
        quotedOut: BigInt(quote.response.amountOut),
        feeBps: quote.request.feeBps,
        inputAmount: args.inputAmount,
        outputAmount: args.outputAmount,
      }),
  };
}
