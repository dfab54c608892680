/**
 * Attack toolkit: an honest fill for a stored quote, and a table of tampered fills that each break
 * exactly one rule of the contract, with the rejection code the validator must give.
 *
 * Reused end to end through POST /swap: build a scenario from the quote the service stored, take
 * each attack's transaction, `signAsTaker` it and expect `rejected` with the attack's code. Every
 * transaction returned here is unsigned and built from real instructions (no mocks).
 */

import { address } from "@solana/kit";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import {
  type Keypair,
  Message,
  MessageV0,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { accountInfoAssertion, getAssertAccountInfoInstruction, IntegerOperator } from "lighthouse-sdk";
import { type TokenConfig, tokenSchema } from "../../config/schema.ts";
import {
  type BuildFillParams,
  fillAmountsFromQuote,
  fillTransactionInstructions,
  setComputeUnitLimitInstruction,
  setComputeUnitPriceInstruction,
} from "../../sandbox/fill/builder.ts";
import { compileSortedMessageV0 } from "../../sandbox/fill/compile.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import type { RecentBlockhashes } from "../../src/chain/recent-blockhashes.ts";
import type { RaisedFeeCap } from "../../src/fill/raised-fee-cap.ts";
import { computeUnitFloor, type FillShape } from "../../src/fill/rules/compute-unit-limit.ts";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  FillAccount,
  LIGHTHOUSE_PROGRAM_ID,
  ORDER_ENGINE_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
} from "../../src/program/layout.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { FillRejectCode } from "../../src/refusal/codes.ts";

/** Everything an attack needs: the honest parameters for the quote and the context they answer to. */
export interface FillScenario {
  maker: PublicKey;
  taker: PublicKey;
  quote: StoredQuote;
  tokens: ReadonlyMap<string, TokenConfig>;
  /** The honest fill for `quote`; attacks start from it. */
  params: BuildFillParams;
  nowUnix: bigint;
  maxFeeLamports: bigint;
  /** The raise cap the validator is given (config/default.json's by default); undefined: none. */
  raisedFeeCap?: RaisedFeeCap;
}

/** limits.raisedFeeCap's default (config/schema.ts), which the swap attack tests run with. */
export const DEFAULT_RAISED_FEE_CAP: RaisedFeeCap = { maxLamports: 100_000n, maxNotionalBps: 10n };

export interface FillAttack {
  /**
   * Says what is refused, e.g. "a maker-paid ATA creation"; attacks written for one rule of
   * src/fill/rules/ start with its name, e.g. "tokenAccountsWritable: ...".
   */
  name: string;
  code: FillRejectCode;
  tamper(s: FillScenario): VersionedTransaction;
}

/** The configured tokens of config/default.json (plus any extra), keyed by mint. */
export function tokenMap(extra: Partial<TokenConfig>[] = []): Map<string, TokenConfig> {
  const base = [
    { mint: "So11111111111111111111111111111111111111112", symbol: "SOL", decimals: 9 },
    { mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", symbol: "USDC", decimals: 6, stable: true },
    { mint: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", symbol: "USDT", decimals: 6, stable: true },
    { mint: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN", symbol: "JUP", decimals: 6 },
  ];
  return new Map([...base, ...extra].map((t) => [t.mint as string, tokenSchema.parse(t)]));
}

/**
 * The fill the operator would build for a stored quote: its amounts (fillAmountsFromQuote), the
 * configured token programs, expire_at = the quote's expiry in whole seconds.
 */
export function honestFillParams(
  quote: StoredQuote,
  opts: {
    maker: PublicKey;
    taker: PublicKey;
    tokens: ReadonlyMap<string, TokenConfig>;
    recentBlockhash: string;
    computeUnitLimit?: number;
    computeUnitPrice?: bigint;
    createTakerOutputAta?: boolean;
    nativeSolIn?: boolean;
    nativeSolOut?: boolean;
    lighthouseInstructions?: TransactionInstruction[];
  },
): BuildFillParams {
  const program = (mint: string) => {
    const t = opts.tokens.get(mint);
    if (!t) throw new Error(`token ${mint} is not configured`);
    return new PublicKey(t.tokenProgram);
  };
  return {
    maker: opts.maker,
    taker: opts.taker,
    inputMint: new PublicKey(quote.request.tokenIn),
    outputMint: new PublicKey(quote.request.tokenOut),
    inputTokenProgram: program(quote.request.tokenIn),
    outputTokenProgram: program(quote.request.tokenOut),
    ...fillAmountsFromQuote(quote),
    expireAt: BigInt(Math.floor(quote.expiresAtMs / 1000)),
    computeUnitLimit: opts.computeUnitLimit ?? 38_941,
    computeUnitPrice: opts.computeUnitPrice ?? BigInt(quote.response.prioritizationFeeToUse ?? 53_770),
    recentBlockhash: opts.recentBlockhash,
    createTakerOutputAta: opts.createTakerOutputAta ?? !opts.nativeSolOut,
    nativeSolIn: opts.nativeSolIn ?? false,
    nativeSolOut: opts.nativeSolOut ?? false,
    lighthouseInstructions: opts.lighthouseInstructions ?? [],
  };
}

/** A scenario for a stored quote: the honest fill plus the validator's context. */
export function scenarioFromQuote(
  quote: StoredQuote,
  opts: Parameters<typeof honestFillParams>[1] & {
    nowUnix: bigint;
    maxFeeLamports?: bigint;
    raisedFeeCap?: RaisedFeeCap;
  },
): FillScenario {
  return {
    maker: opts.maker,
    taker: opts.taker,
    quote,
    tokens: opts.tokens,
    params: honestFillParams(quote, opts),
    nowUnix: opts.nowUnix,
    maxFeeLamports: opts.maxFeeLamports ?? 2_000_000n,
    raisedFeeCap: opts.raisedFeeCap ?? DEFAULT_RAISED_FEE_CAP,
  };
}

/** Signs with the taker when the taker holds a signature slot (some attacks remove it). */
export function signAsTaker(tx: VersionedTransaction, taker: Keypair): VersionedTransaction {
  const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
  if (signers.some((k) => k.equals(taker.publicKey))) tx.sign([taker]);
  return tx;
}

/** The compute-unit shape of a builder fill (what computeUnitLimitCoversShape reads from the message). */
export function shapeOfParams(p: BuildFillParams): FillShape {
  const kind = (native: boolean | undefined, program: PublicKey) =>
    native ? "nativeSol" : program.equals(TOKEN_2022_PROGRAM_ID) ? "token2022" : "token";
  return {
    input: kind(p.nativeSolIn, p.inputTokenProgram),
    output: kind(p.nativeSolOut, p.outputTokenProgram),
    ataCreations: p.createTakerOutputAta
      ? [p.outputTokenProgram.equals(TOKEN_2022_PROGRAM_ID) ? "token2022" : "token"]
      : [],
    lighthouseAssertions: p.lighthouseInstructions?.length ?? 0,
  };
}

// --- Building blocks -------------------------------------------------------------------------------

/** Compiles instructions with the operator's key order into an unsigned v0 transaction. */
export function txFrom(
  payer: PublicKey,
  ixs: TransactionInstruction[],
  recentBlockhash: string,
): VersionedTransaction {
  return new VersionedTransaction(
    compileSortedMessageV0({ payerKey: payer, instructions: ixs, recentBlockhash }),
  );
}

/** The honest instruction list, edited, then compiled with the maker paying. */
export function withInstructions(
  s: FillScenario,
  edit: (ixs: TransactionInstruction[]) => TransactionInstruction[],
  params: Partial<BuildFillParams> = {},
): VersionedTransaction {
  const p = { ...s.params, ...params };
  return txFrom(p.maker, edit(fillTransactionInstructions(p)), p.recentBlockhash);
}

const isFill = (ix: TransactionInstruction) => ix.programId.equals(ORDER_ENGINE_PROGRAM_ID);

/** Rebuilds the fill instruction with its data and/or accounts edited. */
export function editFill(
  s: FillScenario,
  edit: {
    data?: (d: Buffer) => Buffer;
    keys?: (k: TransactionInstruction["keys"]) => TransactionInstruction["keys"];
  },
  params: Partial<BuildFillParams> = {},
): VersionedTransaction {
  return withInstructions(
    s,
    (ixs) =>
      ixs.map((ix) =>
        isFill(ix)
          ? new TransactionInstruction({
              programId: ix.programId,
              keys: edit.keys ? edit.keys(ix.keys.map((k) => ({ ...k }))) : ix.keys,
              data: edit.data ? edit.data(Buffer.from(ix.data)) : ix.data,
            })
          : ix,
      ),
    params,
  );
}

/** Rebuilds the honest ATA creation with its accounts edited. */
function editAtaCreation(
  s: FillScenario,
  edit: (k: TransactionInstruction["keys"]) => TransactionInstruction["keys"],
): VersionedTransaction {
  return withInstructions(s, (ixs) =>
    ixs.map((ix) =>
      ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)
        ? new TransactionInstruction({
            programId: ix.programId,
            keys: edit(ix.keys.map((k) => ({ ...k }))),
            data: ix.data,
          })
        : ix,
    ),
  );
}

/** Replaces the fill's account at `slot`. */
export function replaceFillAccount(s: FillScenario, slot: number, pubkey: PublicKey, isWritable = true) {
  return editFill(s, {
    keys: (keys) => {
      keys[slot] = { pubkey, isSigner: false, isWritable };
      return keys;
    },
  });
}

/** A fresh account no one in the scenario controls (the attacker's). */
export function attacker(): PublicKey {
  return PublicKey.unique();
}

/** A Lighthouse instruction with the given tag and accounts. */
export function lighthouseIx(tag: number, accounts: PublicKey[] = []): TransactionInstruction {
  return new TransactionInstruction({
    programId: LIGHTHOUSE_PROGRAM_ID,
    keys: accounts.map((pubkey) => ({ pubkey, isSigner: false, isWritable: false })),
    data: Buffer.from([tag, 0, 0, 0]),
  });
}

/** Replaces the message's header (and re-creates the signature slots to match). */
function withHeader(tx: VersionedTransaction, header: MessageV0["header"]): VersionedTransaction {
  const m = tx.message as MessageV0;
  return new VersionedTransaction(
    new MessageV0({
      header,
      staticAccountKeys: m.staticAccountKeys,
      recentBlockhash: m.recentBlockhash,
      compiledInstructions: m.compiledInstructions,
      addressTableLookups: m.addressTableLookups,
    }),
  );
}

function honest(s: FillScenario): VersionedTransaction {
  return withInstructions(s, (ixs) => ixs);
}

// --- The attack table ------------------------------------------------------------------------------

/** The fill's account at `slot`, kept, but read-only in the message. */
export function readOnlyFillAccount(s: FillScenario, slot: number): VersionedTransaction {
  return editFill(s, {
    keys: (keys) => {
      keys[slot] = { ...(keys[slot] as TransactionInstruction["keys"][number]), isWritable: false };
      return keys;
    },
  });
}

/** Attacks for any scenario whose output leg is an SPL token account (not native SOL). */
export const FILL_ATTACKS: readonly FillAttack[] = [
  {
    name: "tokenAccountsWritable: a read-only maker output token account (the fill fails, the maker pays)",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => readOnlyFillAccount(s, FillAccount.makerOutputTokenAccount),
  },
  {
    name: "tokenAccountsWritable: a read-only maker input token account",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => readOnlyFillAccount(s, FillAccount.makerInputTokenAccount),
  },
  {
    name: "takerWritable: a read-only taker signer, with no ATA creation to make it writable",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) =>
      editFill(
        s,
        {
          keys: (keys) => {
            keys[FillAccount.taker] = { pubkey: s.taker, isSigner: true, isWritable: false };
            return keys;
          },
        },
        { createTakerOutputAta: false },
      ),
  },
  {
    name: "an extra SystemProgram transfer draining the maker",
    code: FillRejectCode.INVALID_PROGRAM,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        ...ixs.slice(0, 2),
        SystemProgram.transfer({ fromPubkey: s.maker, toPubkey: attacker(), lamports: 1_000_000_000 }),
        ...ixs.slice(2),
      ]),
  },
  {
    name: "a durable-nonce advance that would let the fill live past its blockhash",
    code: FillRejectCode.INVALID_PROGRAM,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        SystemProgram.nonceAdvance({ noncePubkey: attacker(), authorizedPubkey: s.taker }),
        ...ixs,
      ]),
  },
  {
    name: "a third-party program instruction",
    code: FillRejectCode.INVALID_PROGRAM,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        new TransactionInstruction({ programId: attacker(), keys: [], data: Buffer.from([1]) }),
        ...ixs,
      ]),
  },
  {
    name: "an order-engine instruction that is not fill",
    code: FillRejectCode.INVALID_PROGRAM,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        ...ixs,
        new TransactionInstruction({
          programId: ORDER_ENGINE_PROGRAM_ID,
          keys: [],
          data: Buffer.alloc(8, 7),
        }),
      ]),
  },
  {
    name: "an ATA creation paid by the maker",
    code: FillRejectCode.INVALID_ATA_PAYER,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.map((ix) =>
          ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)
            ? createAssociatedTokenAccountIdempotentInstruction(
                s.maker,
                getAssociatedTokenAddressSync(
                  s.params.outputMint,
                  s.taker,
                  true,
                  s.params.outputTokenProgram,
                ),
                s.taker,
                s.params.outputMint,
                s.params.outputTokenProgram,
              )
            : ix,
        ),
      ),
  },
  {
    name: "an ATA creation paid by an account that does not sign",
    code: FillRejectCode.INVALID_ATA_PAYER,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.map((ix) => {
          if (!ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) return ix;
          const keys = ix.keys.map((k) => ({ ...k }));
          keys[0] = { pubkey: attacker(), isSigner: false, isWritable: true };
          return new TransactionInstruction({ programId: ix.programId, keys, data: ix.data });
        }),
      ),
  },
  {
    name: "an ATA creation for an owner who is not the taker",
    code: FillRejectCode.INVALID_ATA_OWNER,
    tamper: (s) => {
      const owner = attacker();
      return withInstructions(s, (ixs) => [
        ...ixs.slice(0, 2),
        createAssociatedTokenAccountIdempotentInstruction(
          s.taker,
          getAssociatedTokenAddressSync(s.params.outputMint, owner, true, s.params.outputTokenProgram),
          owner,
          s.params.outputMint,
          s.params.outputTokenProgram,
        ),
        ...ixs.slice(2),
      ]);
    },
  },
  {
    name: "an ATA creation naming five accounts instead of six",
    code: FillRejectCode.INVALID_ATA_INSTRUCTION,
    tamper: (s) => editAtaCreation(s, (keys) => keys.slice(0, 5)),
  },
  {
    name: "an ATA creation for a mint that is not one of the fill's",
    code: FillRejectCode.INVALID_ATA_INSTRUCTION,
    tamper: (s) => {
      const mint = attacker();
      return withInstructions(s, (ixs) => [
        createAssociatedTokenAccountIdempotentInstruction(
          s.taker,
          getAssociatedTokenAddressSync(mint, s.taker, true, s.params.outputTokenProgram),
          s.taker,
          mint,
          s.params.outputTokenProgram,
        ),
        ...ixs,
      ]);
    },
  },
  {
    name: "an ATA creation naming the other token program for the mint (its ATA under that program)",
    code: FillRejectCode.INVALID_ATA_INSTRUCTION,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        createAssociatedTokenAccountIdempotentInstruction(
          s.taker,
          getAssociatedTokenAddressSync(s.params.outputMint, s.taker, true, TOKEN_2022_PROGRAM_ID),
          s.taker,
          s.params.outputMint,
          TOKEN_2022_PROGRAM_ID,
        ),
        ...ixs,
      ]),
  },
  {
    name: "an ATA creation naming another account as the System program",
    code: FillRejectCode.INVALID_ATA_INSTRUCTION,
    tamper: (s) =>
      editAtaCreation(s, (keys) => {
        keys[4] = { pubkey: attacker(), isSigner: false, isWritable: false };
        return keys;
      }),
  },
  {
    name: "a ComputeBudget instruction naming an account",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.map((ix) =>
          ix.programId.equals(COMPUTE_BUDGET_PROGRAM_ID)
            ? new TransactionInstruction({
                programId: ix.programId,
                keys: [{ pubkey: attacker(), isSigner: false, isWritable: false }],
                data: ix.data,
              })
            : ix,
        ),
      ),
  },
  {
    name: "a ComputeBudget instruction with no data",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        new TransactionInstruction({ programId: COMPUTE_BUDGET_PROGRAM_ID, keys: [], data: Buffer.alloc(0) }),
        ...ixs,
      ]),
  },
  {
    name: "tokenAccountsWritable: a read-only taker output token account, with no ATA creation to make it writable",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) =>
      editFill(
        s,
        {
          keys: (keys) => {
            keys[FillAccount.takerOutputTokenAccount] = {
              ...(keys[FillAccount.takerOutputTokenAccount] as TransactionInstruction["keys"][number]),
              isWritable: false,
            };
            return keys;
          },
        },
        { createTakerOutputAta: false },
      ),
  },
  {
    name: "a non-idempotent ATA Create (data [])",
    code: FillRejectCode.INVALID_ATA_INSTRUCTION,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.map((ix) =>
          ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)
            ? new TransactionInstruction({ programId: ix.programId, keys: ix.keys, data: Buffer.alloc(0) })
            : ix,
        ),
      ),
  },
  {
    name: "an ATA creation naming an address that is not the owner's ATA",
    code: FillRejectCode.INVALID_ATA_INSTRUCTION,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.map((ix) => {
          if (!ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) return ix;
          const keys = ix.keys.map((k) => ({ ...k }));
          keys[1] = { pubkey: attacker(), isSigner: false, isWritable: true };
          return new TransactionInstruction({ programId: ix.programId, keys, data: ix.data });
        }),
      ),
  },
  {
    name: "an output amount one unit above the quote less the fee",
    code: FillRejectCode.INVALID_OUTPUT_AMOUNT,
    tamper: (s) => editFill(s, {}, { outputAmount: s.params.outputAmount + 1n }),
  },
  {
    name: "an inflated output amount (the whole quoted amount, fee ignored)",
    code: FillRejectCode.INVALID_OUTPUT_AMOUNT,
    tamper: (s) => editFill(s, {}, { outputAmount: BigInt(s.quote.response.amountOut) * 2n }),
  },
  {
    name: "an output amount below the quote less the rounded-up fee",
    code: FillRejectCode.INVALID_OUTPUT_AMOUNT,
    tamper: (s) => {
      const out = BigInt(s.quote.response.amountOut);
      const ceilFee = (out * BigInt(s.quote.request.feeBps) + 9_999n) / 10_000n;
      return editFill(s, {}, { outputAmount: out - ceilFee - 1n });
    },
  },
  {
    // Above the quoted amountIn, the fill carries the fee on the input: the output must be whole.
    name: "amountsFollowAFeeShape: the fee taken on the input and one unit more than the quoted amountOut given",
    code: FillRejectCode.INVALID_OUTPUT_AMOUNT,
    tamper: (s) =>
      editFill(
        s,
        {},
        {
          inputAmount: BigInt(s.quote.response.amountIn) + 1n,
          outputAmount: BigInt(s.quote.response.amountOut) + 1n,
        },
      ),
  },
  {
    name: "amountsFollowAFeeShape: the output whole and twice the quoted amountIn taken (far beyond the fee)",
    code: FillRejectCode.INVALID_INPUT_AMOUNT,
    tamper: (s) =>
      editFill(
        s,
        {},
        {
          inputAmount: BigInt(s.quote.response.amountIn) * 2n,
          outputAmount: BigInt(s.quote.response.amountOut),
        },
      ),
  },
  {
    name: "a deflated input amount",
    code: FillRejectCode.INVALID_INPUT_AMOUNT,
    tamper: (s) => editFill(s, {}, { inputAmount: s.params.inputAmount - 1n }),
  },
  {
    name: "a wrong input mint",
    code: FillRejectCode.INVALID_MINT,
    tamper: (s) => editFill(s, {}, { inputMint: attacker(), nativeSolIn: false }),
  },
  {
    name: "a wrong output mint",
    code: FillRejectCode.INVALID_MINT,
    tamper: (s) =>
      editFill(s, {}, { outputMint: attacker(), createTakerOutputAta: false, nativeSolOut: false }),
  },
  {
    name: "a wrong input token program",
    code: FillRejectCode.INVALID_TOKEN_PROGRAM,
    tamper: (s) => replaceFillAccount(s, FillAccount.inputTokenProgram, TOKEN_2022_PROGRAM_ID, false),
  },
  {
    name: "a wrong output token program",
    code: FillRejectCode.INVALID_TOKEN_PROGRAM,
    tamper: (s) => replaceFillAccount(s, FillAccount.outputTokenProgram, TOKEN_2022_PROGRAM_ID, false),
  },
  {
    name: "a maker input token account belonging to the attacker",
    code: FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
    tamper: (s) =>
      replaceFillAccount(
        s,
        FillAccount.makerInputTokenAccount,
        getAssociatedTokenAddressSync(s.params.inputMint, attacker(), true, s.params.inputTokenProgram),
      ),
  },
  {
    name: "a maker output token account belonging to the attacker",
    code: FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
    tamper: (s) =>
      replaceFillAccount(
        s,
        FillAccount.makerOutputTokenAccount,
        getAssociatedTokenAddressSync(s.params.outputMint, attacker(), true, s.params.outputTokenProgram),
      ),
  },
  {
    name: "a taker input token account that is not the taker's ATA",
    code: FillRejectCode.INVALID_TAKER_TOKEN_ACCOUNT,
    tamper: (s) => replaceFillAccount(s, FillAccount.takerInputTokenAccount, attacker()),
  },
  {
    name: "the native-SOL placeholder on a leg that is not wSOL",
    code: FillRejectCode.INVALID_TAKER_TOKEN_ACCOUNT,
    tamper: (s) =>
      s.params.inputMint.equals(new PublicKey("So11111111111111111111111111111111111111112"))
        ? replaceFillAccount(s, FillAccount.takerOutputTokenAccount, ORDER_ENGINE_PROGRAM_ID, false)
        : replaceFillAccount(s, FillAccount.takerInputTokenAccount, ORDER_ENGINE_PROGRAM_ID, false),
  },
  {
    name: "the maker's wallet passed as the taker's input token account",
    code: FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    tamper: (s) => replaceFillAccount(s, FillAccount.takerInputTokenAccount, s.maker),
  },
  {
    name: "a fill whose maker is not our maker",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => replaceFillAccount(s, FillAccount.maker, attacker()),
  },
  {
    name: "fillTakerIsKeyOne: a fill whose taker is another account, key 1 signing only the ATA creation",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) =>
      editFill(s, {
        keys: (keys) => {
          keys[FillAccount.taker] = { pubkey: attacker(), isSigner: false, isWritable: true };
          return keys;
        },
      }),
  },
  {
    name: "a fill whose taker is not account key 1",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) =>
      editFill(s, {
        keys: (keys) => {
          keys[FillAccount.taker] = { pubkey: attacker(), isSigner: true, isWritable: true };
          return keys;
        },
      }),
  },
  {
    name: "a wrong system program",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => replaceFillAccount(s, FillAccount.systemProgram, attacker(), false),
  },
  {
    name: "an extra 12th fill account that is not the temporary wSOL PDA",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) =>
      editFill(s, { keys: (keys) => [...keys, { pubkey: attacker(), isSigner: false, isWritable: true }] }),
  },
  {
    name: "a fill with only 10 accounts",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => editFill(s, { keys: (keys) => keys.slice(0, 10) }),
  },
  {
    name: "a forbidden Lighthouse instruction (tag 0)",
    code: FillRejectCode.INVALID_LIGHTHOUSE_INSTRUCTION,
    tamper: (s) => withInstructions(s, (ixs) => [...ixs, lighthouseIx(0)]),
  },
  {
    name: "a forbidden Lighthouse instruction (tag 1, memory write)",
    code: FillRejectCode.INVALID_LIGHTHOUSE_INSTRUCTION,
    tamper: (s) => withInstructions(s, (ixs) => [...ixs, lighthouseIx(1)]),
  },
  {
    name: "a forbidden Lighthouse instruction (tag 2)",
    code: FillRejectCode.INVALID_LIGHTHOUSE_INSTRUCTION,
    tamper: (s) => withInstructions(s, (ixs) => [...ixs, lighthouseIx(5), lighthouseIx(2)]),
  },
  {
    name: "a Lighthouse instruction with no data",
    code: FillRejectCode.INVALID_LIGHTHOUSE_INSTRUCTION,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        ...ixs,
        new TransactionInstruction({ programId: LIGHTHOUSE_PROGRAM_ID, keys: [], data: Buffer.alloc(0) }),
      ]),
  },
  {
    name: "a Lighthouse assertion before the fill",
    code: FillRejectCode.INVALID_INSTRUCTION_ORDER,
    tamper: (s) => withInstructions(s, (ixs) => [...ixs.slice(0, -1), lighthouseIx(9), ...ixs.slice(-1)]),
  },
  {
    name: "an ATA creation after a Lighthouse assertion",
    code: FillRejectCode.INVALID_INSTRUCTION_ORDER,
    tamper: (s) =>
      withInstructions(s, (ixs) => {
        const ata = ixs.filter((ix) => ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID));
        const rest = ixs.filter((ix) => !ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID));
        return [...rest, lighthouseIx(10), ...ata];
      }),
  },
  {
    name: "a compute-budget instruction after the fill",
    code: FillRejectCode.INVALID_INSTRUCTION_ORDER,
    tamper: (s) => withInstructions(s, (ixs) => [...ixs.slice(1), ixs[0] as TransactionInstruction]),
  },
  {
    name: "a fee payer that is not the maker",
    code: FillRejectCode.INVALID_FEE_PAYER,
    tamper: (s) => txFrom(s.taker, fillTransactionInstructions(s.params), s.params.recentBlockhash),
  },
  {
    name: "a taker other than the quote's taker",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) => withInstructions(s, (ixs) => ixs, { taker: attacker() }),
  },
  {
    name: "an expire_at beyond the quote's expiry",
    code: FillRejectCode.INVALID_EXPIRY,
    tamper: (s) => editFill(s, {}, { expireAt: BigInt(Math.ceil(s.quote.expiresAtMs / 1000)) + 3_600n }),
  },
  {
    name: "a changed fee bps",
    code: FillRejectCode.INVALID_FEE_BPS,
    tamper: (s) => editFill(s, {}, { feeBps: s.params.feeBps + 1 }),
  },
  {
    name: "a flipped exact-out flag",
    code: FillRejectCode.INVALID_QUOTE_TYPE_FLAG,
    tamper: (s) => editFill(s, {}, { exactOut: !s.params.exactOut }),
  },
  {
    name: "two fills",
    code: FillRejectCode.MULTIPLE_FILLS,
    tamper: (s) => withInstructions(s, (ixs) => [...ixs, ...ixs.filter(isFill)]),
  },
  {
    name: "no fill at all",
    code: FillRejectCode.FILL_NOT_FOUND,
    tamper: (s) => withInstructions(s, (ixs) => ixs.filter((ix) => !isFill(ix))),
  },
  {
    name: "truncated fill data",
    code: FillRejectCode.MALFORMED_FILL_DATA,
    tamper: (s) => editFill(s, { data: (d) => d.subarray(0, d.length - 1) }),
  },
  {
    name: "trailing garbage after the fill data",
    code: FillRejectCode.MALFORMED_FILL_DATA,
    tamper: (s) => editFill(s, { data: (d) => Buffer.concat([d, Buffer.from([0xde, 0xad])]) }),
  },
  {
    name: "an address lookup table",
    code: FillRejectCode.LOOKUP_TABLES_NOT_SUPPORTED,
    tamper: (s) => {
      const m = honest(s).message as MessageV0;
      return new VersionedTransaction(
        new MessageV0({
          header: m.header,
          staticAccountKeys: m.staticAccountKeys,
          recentBlockhash: m.recentBlockhash,
          compiledInstructions: m.compiledInstructions,
          addressTableLookups: [{ accountKey: attacker(), writableIndexes: [0], readonlyIndexes: [] }],
        }),
      );
    },
  },
  {
    name: "an absurd compute-unit price",
    code: FillRejectCode.RAISED_FEE_CAP_EXCEEDED,
    tamper: (s) => withInstructions(s, (ixs) => ixs, { computeUnitPrice: 10n ** 15n }),
  },
  {
    name: "raisedPriceWithinRaiseCap: a compute-unit price raised 100,000-fold, within the fee cap but above the raise cap",
    code: FillRejectCode.RAISED_FEE_CAP_EXCEEDED,
    tamper: (s) =>
      withInstructions(s, (ixs) => ixs, {
        computeUnitPrice: BigInt(s.quote.response.prioritizationFeeToUse ?? 0) * 100_000n,
      }),
  },
  {
    name: "a compute-unit limit one unit below its shape's floor (computeUnitLimitCoversShape)",
    code: FillRejectCode.COMPUTE_UNIT_LIMIT_TOO_LOW,
    tamper: (s) =>
      withInstructions(s, (ixs) => ixs, { computeUnitLimit: computeUnitFloor(shapeOfParams(s.params)) - 1 }),
  },
  {
    name: "computeUnitLimitCoversShape: a compute-unit limit of 1",
    code: FillRejectCode.COMPUTE_UNIT_LIMIT_TOO_LOW,
    tamper: (s) => withInstructions(s, (ixs) => ixs, { computeUnitLimit: 1 }),
  },
  {
    name: "computeUnitLimitWithinCeiling: a compute-unit limit of 1,400,001, one above the runtime's ceiling",
    code: FillRejectCode.COMPUTE_UNIT_LIMIT_EXCEEDED,
    tamper: (s) => withInstructions(s, (ixs) => ixs, { computeUnitLimit: 1_400_001 }),
  },
  {
    name: "a compute-unit price set twice",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) => withInstructions(s, (ixs) => [setComputeUnitPriceInstruction(1n), ...ixs]),
  },
  {
    name: "a compute-unit limit set twice",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) => withInstructions(s, (ixs) => [setComputeUnitLimitInstruction(1_000), ...ixs]),
  },
  {
    name: "a missing compute-unit limit",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.filter((ix) => !(ix.programId.equals(COMPUTE_BUDGET_PROGRAM_ID) && ix.data[0] === 2)),
      ),
  },
  {
    name: "a missing compute-unit price",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) =>
      withInstructions(s, (ixs) =>
        ixs.filter((ix) => !(ix.programId.equals(COMPUTE_BUDGET_PROGRAM_ID) && ix.data[0] === 3)),
      ),
  },
  {
    name: "a zero compute-unit limit",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) => withInstructions(s, (ixs) => ixs, { computeUnitLimit: 0 }),
  },
  {
    name: "another ComputeBudget instruction (RequestHeapFrame)",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) =>
      withInstructions(s, (ixs) => [
        new TransactionInstruction({
          programId: COMPUTE_BUDGET_PROGRAM_ID,
          keys: [],
          data: Buffer.from([1, 0, 0, 4, 0]),
        }),
        ...ixs,
      ]),
  },
  {
    name: "a legacy (non-v0) message",
    code: FillRejectCode.INVALID_MESSAGE_VERSION,
    tamper: (s) => {
      const m = honest(s).message as MessageV0;
      return new VersionedTransaction(
        new Message({
          header: m.header,
          accountKeys: m.staticAccountKeys.map((k) => k.toBase58()),
          recentBlockhash: m.recentBlockhash,
          instructions: m.compiledInstructions.map((ci) => ({
            programIdIndex: ci.programIdIndex,
            accounts: ci.accountKeyIndexes,
            data: bs58.encode(ci.data),
          })),
        }),
      );
    },
  },
  {
    name: "a message requiring only one signature (the taker does not sign)",
    code: FillRejectCode.INVALID_SIGNER_COUNT,
    tamper: (s) => {
      const h = honest(s).message.header;
      return withHeader(honest(s), { ...h, numRequiredSignatures: 1 });
    },
  },
  {
    name: "a duplicated account key",
    code: FillRejectCode.MALFORMED_TRANSACTION,
    tamper: (s) => {
      const m = honest(s).message as MessageV0;
      const keys = [...m.staticAccountKeys];
      keys[keys.length - 1] = keys[keys.length - 2] as PublicKey;
      return new VersionedTransaction(
        new MessageV0({
          header: m.header,
          staticAccountKeys: keys,
          recentBlockhash: m.recentBlockhash,
          compiledInstructions: m.compiledInstructions,
          addressTableLookups: [],
        }),
      );
    },
  },
];

/**
 * A valid-looking fill paired with a quote it does not belong to: the attack edits the quote the
 * fill is judged against (as stored by another maker wallet, or with a receiver the requester chose),
 * or the configuration (a mint no longer traded).
 * validateFill runs these (test/fill/validate.attacks.test.ts); a stored quote cannot be edited
 * through POST /swap, so they have no end-to-end run.
 */
export interface PairingAttack {
  name: string;
  code: FillRejectCode;
  pair(s: FillScenario): {
    quote: StoredQuote;
    tx: VersionedTransaction;
    tokens?: FillScenario["tokens"];
    /** The validator's limits instead of the scenario's (a maker configured otherwise). */
    limits?: Pick<FillScenario, "maxFeeLamports" | "raisedFeeCap">;
  };
}

/** The scenario's configured tokens less one mint. */
function withoutToken(s: FillScenario, mint: string): FillScenario["tokens"] {
  const tokens = new Map(s.tokens);
  tokens.delete(mint);
  return tokens;
}

export const PAIRING_ATTACKS: readonly PairingAttack[] = [
  {
    name: "raisedPriceWithinRaiseCap: a compute-unit price raised by one micro-lamport, where no raise cap is given",
    code: FillRejectCode.COMPUTE_UNIT_PRICE_EXCEEDED,
    pair: (s) => ({
      quote: s.quote,
      tx: withInstructions(s, (ixs) => ixs, {
        computeUnitPrice: BigInt(s.quote.response.prioritizationFeeToUse ?? 0) + 1n,
      }),
      limits: { maxFeeLamports: s.maxFeeLamports, raisedFeeCap: undefined },
    }),
  },
  {
    name: "makerFeeWithinCap: a fill at the quoted price costing more than a maker's smaller fee cap",
    code: FillRejectCode.FEE_CAP_EXCEEDED,
    pair: (s) => ({
      quote: s.quote,
      tx: honest(s),
      limits: { maxFeeLamports: 10_000n, raisedFeeCap: s.raisedFeeCap },
    }),
  },
  {
    name: "takerIsTheQuotedTaker: a fill by another taker than the one only the stored quote names",
    code: FillRejectCode.INVALID_TAKER,
    pair: (s) => {
      const { taker: _requested, ...request } = s.quote.request;
      return { quote: { ...s.quote, taker: attacker().toBase58(), request }, tx: honest(s) };
    },
  },
  {
    name: "inputMintTraded: a fill for a quote whose input mint is no longer traded here",
    code: FillRejectCode.INVALID_MINT,
    pair: (s) => ({ quote: s.quote, tx: honest(s), tokens: withoutToken(s, s.quote.request.tokenIn) }),
  },
  {
    name: "outputMintTraded: a fill for a quote whose output mint is no longer traded here",
    code: FillRejectCode.INVALID_MINT,
    pair: (s) => ({ quote: s.quote, tx: honest(s), tokens: withoutToken(s, s.quote.request.tokenOut) }),
  },
  {
    // Two maker wallets sharing one quote store (instances with their own keys, a rotated key): the
    // taker takes wallet A's answer and builds the fill with wallet B as maker and fee payer.
    name: "a fill co-signed by our key against a quote another maker key answered",
    code: FillRejectCode.INVALID_QUOTE_MAKER,
    pair: (s) => ({
      quote: { ...s.quote, response: { ...s.quote.response, maker: attacker().toBase58() } },
      tx: honest(s),
    }),
  },
  {
    // The quote request's receiver is the requester's to choose; naming the maker there must not let
    // the maker's wallet (a signer of this transaction) into an instruction other than the fill.
    name: "a CreateIdempotent naming the maker's wallet as owner, on a quote whose receiver is the maker",
    code: FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    pair: (s) => ({
      quote: { ...s.quote, request: { ...s.quote.request, receiver: s.maker.toBase58() } },
      tx: withInstructions(s, (ixs) => [
        createAssociatedTokenAccountIdempotentInstruction(
          s.taker,
          getAssociatedTokenAddressSync(s.params.outputMint, s.maker, true, s.params.outputTokenProgram),
          s.maker,
          s.params.outputMint,
          s.params.outputTokenProgram,
        ),
        ...ixs,
      ]),
    }),
  },
];

/**
 * Attacks on the clock, judged once, after the claim, against chain time (src/swap/expiry.ts):
 * validateFill has no clock and accepts them, so they run through POST /swap only
 * (test/swap/attacks.security.test.ts), each against a quote of its own (the claim is taken).
 */
export const AFTER_CLAIM_ATTACKS: readonly FillAttack[] = [
  {
    name: "an expire_at already in the past",
    code: FillRejectCode.QUOTE_EXPIRED,
    tamper: (s) => editFill(s, {}, { expireAt: s.nowUnix - 1n }),
  },
  {
    name: "an expire_at inside the one second kept for landing",
    code: FillRejectCode.QUOTE_EXPIRED,
    tamper: (s) => editFill(s, {}, { expireAt: s.nowUnix }),
  },
  {
    name: "a recent blockhash the chain never issued",
    code: FillRejectCode.BLOCKHASH_NOT_FOUND,
    tamper: (s) => withInstructions(s, (ixs) => ixs, { recentBlockhash: attacker().toBase58() }),
  },
];

/** What a chain-state attack may arrange on the local chain before its fill is built. */
export interface ChainStage {
  chain: LocalChain;
  /** The service's background cache of recent blockhashes. */
  blockhashes: RecentBlockhashes;
  maker: PublicKey;
  taker: PublicKey;
}

/**
 * Fills that pass every rule of the message but cannot land because of the chain's state when the
 * maker would sign: refused after the claim, before anything is sent (test/swap/lands.security.test.ts).
 */
export interface ChainStateAttack {
  name: string;
  code: FillRejectCode;
  /** Arranges the chain and returns what the fill built for the scenario's quote changes. */
  arrange(stage: ChainStage): Promise<Partial<BuildFillParams>>;
}

export const CHAIN_STATE_ATTACKS: readonly ChainStateAttack[] = [
  {
    name: "a recent blockhash with fewer blocks left than a fill needs to land",
    code: FillRejectCode.BLOCKHASH_AGE_EXCEEDED,
    arrange: async ({ chain, blockhashes }) => {
      const { blockhash, lastValidBlockHeight } = await chain.getLatestBlockhash();
      await blockhashes.poll();
      // 15 blocks left (fewer than the 20 required): about 6 s before it expires outright.
      chain.advanceBlocks(Number(lastValidBlockHeight - chain.blockHeight()) - 15);
      await blockhashes.poll();
      return { recentBlockhash: blockhash };
    },
  },
  {
    // A taker-appended Lighthouse assertion that is false once the fill has run: the contract allows
    // the instruction, so only running the transaction shows it would fail (the maker paying the fee).
    name: "a Lighthouse assertion that fails on-chain (the taker holds more lamports than exist)",
    code: FillRejectCode.SIMULATION_FAILED,
    arrange: async ({ chain, taker }) => ({
      recentBlockhash: (await chain.getLatestBlockhash()).blockhash,
      lighthouseInstructions: [takerLamportsAbove(taker, 10n ** 18n)],
    }),
  },
];

/** Lighthouse AssertAccountInfo (tag 5), built by lighthouse-sdk: `account`'s lamports > `lamports`. */
export function takerLamportsAbove(account: PublicKey, lamports: bigint): TransactionInstruction {
  const ix = getAssertAccountInfoInstruction({
    targetAccount: address(account.toBase58()),
    assertion: accountInfoAssertion("Lamports", { value: lamports, operator: IntegerOperator.GreaterThan }),
  });
  return new TransactionInstruction({
    programId: new PublicKey(ix.programAddress),
    keys: ix.accounts.map((a) => ({ pubkey: new PublicKey(a.address), isSigner: false, isWritable: false })),
    data: Buffer.from(ix.data),
  });
}

/** Attacks on a native-SOL output leg (the scenario must set params.nativeSolOut). */
export const NATIVE_SOL_OUT_ATTACKS: readonly FillAttack[] = [
  {
    name: "tokenAccountsWritable: a read-only temporary wSOL PDA",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => readOnlyFillAccount(s, FillAccount.temporaryWsolTokenAccount),
  },
  {
    name: "tokenAccountsWritable: a read-only taker input token account",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => readOnlyFillAccount(s, FillAccount.takerInputTokenAccount),
  },
  {
    name: "a native-SOL output without the temporary wSOL PDA",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => editFill(s, { keys: (keys) => keys.slice(0, 11) }),
  },
  {
    name: "a native-SOL output whose 12th account is not the maker's temporary wSOL PDA",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) => replaceFillAccount(s, FillAccount.temporaryWsolTokenAccount, attacker()),
  },
  {
    name: "a temporary wSOL PDA on a fill whose output goes to an ATA, not native SOL",
    code: FillRejectCode.INVALID_FILL_ACCOUNTS,
    tamper: (s) =>
      editFill(s, {
        keys: (keys) => {
          keys[FillAccount.takerOutputTokenAccount] = {
            pubkey: getAssociatedTokenAddressSync(
              s.params.outputMint,
              s.taker,
              true,
              s.params.outputTokenProgram,
            ),
            isSigner: false,
            isWritable: true,
          };
          return keys;
        },
      }),
  },
  {
    name: "the native-SOL placeholder on the maker's side",
    code: FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
    tamper: (s) => replaceFillAccount(s, FillAccount.makerOutputTokenAccount, ORDER_ENGINE_PROGRAM_ID, false),
  },
];
