/**
 * Smart-account (Squads) fills for the attack tests: a scenario whose taker is a smart account's
 * vault, its honest fill wrapped exactly as the toolkit's SDK wraps it (sandbox/fill/smart-account.ts),
 * and a table of envelopes that each break one rule, with the code the validator must give. Run by
 * test/fill/validate.attacks.test.ts (validateFill) and test/swap/smart-account.security.test.ts
 * (POST /swap on the local chain, the maker's accounts unchanged).
 */
import { createTransferInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemProgram,
  type TransactionInstruction,
  type VersionedTransaction,
} from "@solana/web3.js";
import { buildFillTransaction, setComputeUnitPriceInstruction } from "../../sandbox/fill/builder.ts";
import {
  type SmartAccountConfig,
  smartAccountConfig,
  type WrapOverrides,
  wrapFillForSmartAccount,
} from "../../sandbox/fill/smart-account.ts";
import { ORDER_ENGINE_PROGRAM_ID } from "../../src/program/layout.ts";
import { SMART_ACCOUNT_PROGRAM_ID } from "../../src/program/smart-account.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { FillRejectCode } from "../../src/refusal/codes.ts";
import { attacker, type FillScenario, scenarioFromQuote } from "./tamper.ts";

export interface SmartAccountScenario extends FillScenario {
  /** The smart account: settings, vault (the quote's taker), members (the first pays). */
  account: SmartAccountConfig;
  members: Keypair[];
}

/** A smart account of `members` (fresh ones unless given), with a random settings address. */
export function newSmartAccount(members: Keypair[] = [Keypair.generate(), Keypair.generate()]) {
  const settings = Keypair.generate().publicKey;
  return {
    members,
    account: smartAccountConfig(
      settings,
      members.map((m) => m.publicKey),
    ),
  };
}

/** A scenario for a quote whose taker is `account.vault`. */
export function smartAccountScenarioFromQuote(
  quote: StoredQuote,
  opts: Omit<Parameters<typeof scenarioFromQuote>[1], "taker"> & ReturnType<typeof newSmartAccount>,
): SmartAccountScenario {
  const s = scenarioFromQuote(quote, { ...opts, taker: opts.account.vault });
  return { ...s, account: opts.account, members: opts.members };
}

/** The honest fill for the scenario's quote, wrapped as the SDK wraps it. */
export function wrapped(
  s: SmartAccountScenario,
  o: WrapOverrides = {},
  account = s.account,
): VersionedTransaction {
  return wrapFillForSmartAccount(buildFillTransaction(s.params), account, o);
}

/** Signs with every member (the maker's slot stays empty). */
export function signAsMembers(tx: VersionedTransaction, members: Keypair[]): VersionedTransaction {
  const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
  tx.sign(members.filter((m) => signers.some((k) => k.equals(m.publicKey))));
  return tx;
}

const isFill = (ix: TransactionInstruction) => ix.programId.equals(ORDER_ENGINE_PROGRAM_ID);

/** Inserts `extra` just before the fill. */
const beforeFill = (extra: TransactionInstruction) => (ixs: TransactionInstruction[]) => {
  const at = ixs.findIndex(isFill);
  return [...ixs.slice(0, at), extra, ...ixs.slice(at)];
};

export interface SmartAccountAttack {
  name: string;
  code: FillRejectCode;
  tamper(s: SmartAccountScenario): VersionedTransaction;
}

export const SMART_ACCOUNT_ATTACKS: readonly SmartAccountAttack[] = [
  {
    name: "an inner SPL transfer out of the maker's token account, the maker's signer flag reaching it",
    code: FillRejectCode.INVALID_PROGRAM,
    tamper: (s) => {
      const from = getAssociatedTokenAddressSync(
        s.params.outputMint,
        s.maker,
        true,
        s.params.outputTokenProgram,
      );
      const to = getAssociatedTokenAddressSync(
        s.params.outputMint,
        attacker(),
        true,
        s.params.outputTokenProgram,
      );
      return wrapped(s, {
        inner: beforeFill(createTransferInstruction(from, to, s.maker, 1n, [], s.params.outputTokenProgram)),
      });
    },
  },
  {
    name: "an inner System transfer of the maker's lamports",
    code: FillRejectCode.INVALID_PROGRAM,
    tamper: (s) =>
      wrapped(s, {
        inner: beforeFill(
          SystemProgram.transfer({ fromPubkey: s.maker, toPubkey: attacker(), lamports: 1_000_000 }),
        ),
      }),
  },
  {
    name: "makerIsNotAMember: the maker listed as a member (not the paying one)",
    code: FillRejectCode.INVALID_SMART_ACCOUNT_MEMBERS,
    tamper: (s) => wrapped(s, {}, { ...s.account, members: [s.account.members[0]!, s.maker] }),
  },
  {
    name: "feePayerIsAMember: the maker listed as the first member, paying the fee",
    code: FillRejectCode.INVALID_FEE_PAYER,
    tamper: (s) => wrapped(s, {}, { ...s.account, members: [s.maker, s.account.members[0]!] }),
  },
  {
    name: "feePayerIsAMember: a fee payer the execute does not list (num_signers one short)",
    code: FillRejectCode.INVALID_FEE_PAYER,
    tamper: (s) => wrapped(s, { numSigners: s.account.members.length - 1 }),
  },
  {
    name: "vaultInTheMessage: an execute for account index 1, whose vault is not the fill's taker",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) => wrapped(s, { accountIndex: 1 }),
  },
  {
    name: "vaultInTheMessage: an execute for another settings account, whose vault is not the fill's taker",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) => wrapped(s, {}, { ...s.account, settings: attacker() }),
  },
  {
    name: "fillTakerIsKeyOne: a fill whose taker is a member, beside the vault's ATA creation",
    code: FillRejectCode.INVALID_TAKER,
    tamper: (s) =>
      wrapped(s, {
        inner: (ixs) =>
          ixs.map((ix) => {
            if (!isFill(ix)) return ix;
            const keys = [...ix.keys];
            keys[0] = { pubkey: s.account.members[0]!, isSigner: true, isWritable: true };
            return { ...ix, keys } as TransactionInstruction;
          }),
      }),
  },
  {
    name: "envelopeOutsideOnlyComputeBudget: an extra outer instruction (a System transfer by the paying member)",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) =>
      wrapped(s, {
        outerAfter: [
          SystemProgram.transfer({ fromPubkey: s.account.members[0]!, toPubkey: attacker(), lamports: 1 }),
        ],
      }),
  },
  {
    name: "signersAreTheMembersAndTheMaker: one more signer than the members listed and the maker",
    code: FillRejectCode.INVALID_SIGNER_COUNT,
    tamper: (s) => wrapped(s, { extraSigners: [Keypair.generate().publicKey] }),
  },
  {
    name: "signersAreTheMembersAndTheMaker: a member listed twice",
    code: FillRejectCode.INVALID_SMART_ACCOUNT_MEMBERS,
    tamper: (s) => wrapped(s, {}, { ...s.account, members: [s.account.members[0]!, s.account.members[0]!] }),
  },
  {
    name: "signersAreTheMembersAndTheMaker: a member listed that does not sign",
    code: FillRejectCode.INVALID_SMART_ACCOUNT_MEMBERS,
    tamper: (s) => wrapped(s, { unsignedMember: attacker() }),
  },
  {
    name: "signersAreTheMembersAndTheMaker: a fill whose maker does not sign",
    code: FillRejectCode.INVALID_SIGNER_COUNT,
    tamper: (s) =>
      wrapped(s, {
        inner: (ixs) =>
          ixs.map((ix) => {
            if (!isFill(ix)) return ix;
            const keys = ix.keys.map((k) => (k.pubkey.equals(s.maker) ? { ...k, isSigner: false } : k));
            return { ...ix, keys } as TransactionInstruction;
          }),
      }),
  },
  {
    name: "an inner second fill",
    code: FillRejectCode.MULTIPLE_FILLS,
    tamper: (s) =>
      wrapped(s, {
        inner: (ixs) => {
          const fill = ixs.find(isFill)!;
          return [...ixs, fill];
        },
      }),
  },
  {
    name: "envelopeInsideNoComputeBudget: a compute-budget instruction inside the execute",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) => wrapped(s, { inner: beforeFill(setComputeUnitPriceInstruction(1n)) }),
  },
  {
    name: "envelopeInsideNoComputeBudget: a compute-unit limit set inside the execute",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) =>
      wrapped(s, { inner: beforeFill(ComputeBudgetProgram.setComputeUnitLimit({ units: 1_400_000 })) }),
  },
  {
    name: "envelopeInsideNoComputeBudget: another compute-budget instruction (a heap frame) inside the execute",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) =>
      wrapped(s, { inner: beforeFill(ComputeBudgetProgram.requestHeapFrame({ bytes: 64 * 1024 })) }),
  },
  {
    name: "onlyAllowedInstructionsInOrder: an outer compute-budget instruction other than the limit and the price (a heap frame)",
    code: FillRejectCode.INVALID_COMPUTE_BUDGET,
    tamper: (s) => wrapped(s, { outerBefore: [ComputeBudgetProgram.requestHeapFrame({ bytes: 64 * 1024 })] }),
  },
  {
    name: "envelopeNamesTheProgram: an execute whose second account is not the smart-account program",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) => wrapped(s, { programAccount: attacker() }),
  },
  {
    name: "envelopeNamesTheProgram: an execute with a non-zero padding byte",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) => wrapped(s, { padding: 1 }),
  },
  {
    name: "envelopeNamesTheProgram: the maker's wallet as the settings account",
    code: FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    tamper: (s) => wrapped(s, {}, { ...s.account, settings: s.maker }),
  },
  {
    name: "a payload with a byte after its instructions",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) => wrapped(s, { payloadTail: Uint8Array.from([0]) }),
  },
  {
    name: "a second smart-account execute outside",
    code: FillRejectCode.INVALID_SMART_ACCOUNT,
    tamper: (s) => wrapped(s, { outerAfter: [decompiledExecute(wrapped(s))] }),
  },
  {
    name: "an address lookup table holding the settings account",
    code: FillRejectCode.LOOKUP_TABLES_NOT_SUPPORTED,
    tamper: (s) =>
      wrapped(s, {
        lookupTables: [
          new AddressLookupTableAccount({
            key: attacker(),
            state: {
              deactivationSlot: 2n ** 64n - 1n,
              lastExtendedSlot: 0,
              lastExtendedSlotStartIndex: 0,
              authority: undefined,
              addresses: [s.account.settings, s.params.inputMint],
            },
          }),
        ],
      }),
  },
];

/** The smart-account instruction of a wrapped transaction, as an instruction to put in another. */
function decompiledExecute(tx: VersionedTransaction): TransactionInstruction {
  const m = tx.message;
  const keys = m.staticAccountKeys;
  const ci = m.compiledInstructions.find((c) => keys[c.programIdIndex]!.equals(SMART_ACCOUNT_PROGRAM_ID))!;
  return {
    programId: SMART_ACCOUNT_PROGRAM_ID,
    keys: ci.accountKeyIndexes.map((i) => ({
      pubkey: keys[i] as PublicKey,
      isSigner: m.isAccountSigner(i),
      isWritable: m.isAccountWritable(i),
    })),
    data: Buffer.from(ci.data),
  } as TransactionInstruction;
}
