/**
 * Compiles instructions into a v0 message with the operator's static-key order, so that a
 * transaction we build is byte-identical to the one the operator builds from the same instructions.
 *
 * The operator (like Solana's Rust `Message::try_compile`) puts the fee payer first and then each
 * of the four header groups (writable signers, readonly signers, writable non-signers, readonly
 * non-signers) sorted by the keys' bytes. web3.js v1's `MessageV0.compile` keeps first-use order
 * instead, which yields a different (equally valid) message and therefore different bytes.
 */
import { MessageV0, type PublicKey, type TransactionInstruction } from "@solana/web3.js";

interface KeyMeta {
  key: PublicKey;
  signer: boolean;
  writable: boolean;
}

/** Byte order of two public keys, the order Rust's `Pubkey` sorts by. */
export function comparePubkeys(a: PublicKey, b: PublicKey): number {
  return Buffer.compare(a.toBuffer(), b.toBuffer());
}

/**
 * Builds a `MessageV0` without address lookup tables whose static keys follow the operator's order.
 * Program ids are readonly non-signers unless an instruction also lists them otherwise.
 */
export function compileSortedMessageV0(args: {
  payerKey: PublicKey;
  instructions: readonly TransactionInstruction[];
  recentBlockhash: string;
}): MessageV0 {
  const metas = new Map<string, KeyMeta>();
  const touch = (key: PublicKey, signer: boolean, writable: boolean): void => {
    const id = key.toBase58();
    const meta = metas.get(id);
    if (meta) {
      meta.signer ||= signer;
      meta.writable ||= writable;
    } else {
      metas.set(id, { key, signer, writable });
    }
  };
  touch(args.payerKey, true, true);
  for (const ix of args.instructions) {
    touch(ix.programId, false, false);
    for (const k of ix.keys) touch(k.pubkey, k.isSigner, k.isWritable);
  }

  const payerId = args.payerKey.toBase58();
  const rest = [...metas.values()].filter((m) => m.key.toBase58() !== payerId);
  const group = (signer: boolean, writable: boolean): KeyMeta[] =>
    rest
      .filter((m) => m.signer === signer && m.writable === writable)
      .sort((a, b) => comparePubkeys(a.key, b.key));
  const writableSigners = group(true, true);
  const readonlySigners = group(true, false);
  const writableNonSigners = group(false, true);
  const readonlyNonSigners = group(false, false);

  const staticAccountKeys = [
    args.payerKey,
    ...writableSigners.map((m) => m.key),
    ...readonlySigners.map((m) => m.key),
    ...writableNonSigners.map((m) => m.key),
    ...readonlyNonSigners.map((m) => m.key),
  ];
  const index = new Map(staticAccountKeys.map((k, i) => [k.toBase58(), i]));
  const indexOf = (key: PublicKey): number => index.get(key.toBase58()) as number;

  return new MessageV0({
    header: {
      numRequiredSignatures: 1 + writableSigners.length + readonlySigners.length,
      numReadonlySignedAccounts: readonlySigners.length,
      numReadonlyUnsignedAccounts: readonlyNonSigners.length,
    },
    staticAccountKeys,
    recentBlockhash: args.recentBlockhash,
    compiledInstructions: args.instructions.map((ix) => ({
      programIdIndex: indexOf(ix.programId),
      accountKeyIndexes: ix.keys.map((k) => indexOf(k.pubkey)),
      data: Uint8Array.from(ix.data),
    })),
    addressTableLookups: [],
  });
}
