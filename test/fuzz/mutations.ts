/**
 * Mutations of a valid fill, as a hostile taker would try them (issue 18): at the instruction level
 * (compute budget, fill data and accounts, order, duplicates, drops, Lighthouse assertions), the
 * message level (header, key order, recent blockhash) and the byte level (a flipped bit in the
 * serialized message). Each is a fast-check arbitrary that, applied to the honest fill's parameters,
 * yields the transaction bytes to post, signed as the taker where the taker still holds a slot.
 */
import {
  type Keypair,
  MessageV0,
  PublicKey,
  type TransactionInstruction,
  VersionedMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import fc from "fast-check";
import { type BuildFillParams, fillTransactionInstructions } from "../../sandbox/fill/builder.ts";
import { compileSortedMessageV0 } from "../../sandbox/fill/compile.ts";
import { ed25519SigningKey, signEd25519 } from "../../src/crypto/ed25519.ts";
import { ORDER_ENGINE_PROGRAM_ID } from "../../src/program/layout.ts";
import { takerLamportsAbove } from "../fill/tamper.ts";

/** What a mutation may draw on besides the honest parameters. */
export interface MutationContext {
  params: BuildFillParams;
  taker: Keypair;
  /** Blockhashes the chain issued earlier in the run (some expired, some close to it). */
  oldBlockhashes: readonly string[];
}

export interface Mutation {
  /** Short label for the report, e.g. "cu-limit=1". */
  label: string;
  /** The base64 wire transaction to post. */
  build(ctx: MutationContext): string;
}

const wire = (tx: VersionedTransaction) => Buffer.from(tx.serialize()).toString("base64");

/** Compiles instructions as the operator does and signs as the taker. */
function fromInstructions(ctx: MutationContext, ixs: TransactionInstruction[], blockhash?: string): string {
  const message = compileSortedMessageV0({
    payerKey: ctx.params.maker,
    instructions: ixs,
    recentBlockhash: blockhash ?? ctx.params.recentBlockhash,
  });
  return signedWire(message, ctx.taker);
}

/** Signs `message` as the taker when the taker holds a signature slot; the other slots stay empty. */
function signedWire(message: VersionedMessage, taker: Keypair): string {
  const tx = new VersionedTransaction(message);
  const signers = message.staticAccountKeys.slice(0, message.header.numRequiredSignatures);
  if (signers.some((k) => k.equals(taker.publicKey))) tx.sign([taker]);
  return wire(tx);
}

const honestIxs = (ctx: MutationContext, over: Partial<BuildFillParams> = {}) =>
  fillTransactionInstructions({ ...ctx.params, ...over });

const fillIndex = (ixs: TransactionInstruction[]) =>
  ixs.findIndex((ix) => ix.programId.equals(ORDER_ENGINE_PROGRAM_ID));

const u32 = fc.oneof(
  fc.constantFrom(
    0,
    1,
    2,
    100,
    500,
    1_000,
    5_000,
    10_000,
    199_999,
    200_000,
    200_001,
    1_400_000,
    1_400_001,
    0xffff_ffff,
  ),
  fc.integer({ min: 0, max: 0xffff_ffff }),
);

/** Instruction-level mutations. */
const instructionLevel: fc.Arbitrary<Mutation>[] = [
  u32.map((units) => ({
    label: `cu-limit=${units}`,
    build: (ctx) => fromInstructions(ctx, honestIxs(ctx, { computeUnitLimit: units })),
  })),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((price) => ({
    label: "cu-price",
    build: (ctx) => fromInstructions(ctx, honestIxs(ctx, { computeUnitPrice: price })),
  })),
  fc.nat({ max: 7 }).map((i) => ({
    label: "drop-ix",
    build: (ctx) => {
      const ixs = honestIxs(ctx);
      ixs.splice(i % ixs.length, 1);
      return fromInstructions(ctx, ixs);
    },
  })),
  fc.nat({ max: 7 }).map((i) => ({
    label: "duplicate-ix",
    build: (ctx) => {
      const ixs = honestIxs(ctx);
      const ix = ixs[i % ixs.length] as TransactionInstruction;
      ixs.splice(i % ixs.length, 0, ix);
      return fromInstructions(ctx, ixs);
    },
  })),
  fc.tuple(fc.nat({ max: 7 }), fc.nat({ max: 7 })).map(([a, b]) => ({
    label: "swap-ixs",
    build: (ctx) => {
      const ixs = honestIxs(ctx);
      const i = a % ixs.length;
      const j = b % ixs.length;
      [ixs[i], ixs[j]] = [ixs[j] as TransactionInstruction, ixs[i] as TransactionInstruction];
      return fromInstructions(ctx, ixs);
    },
  })),
  fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(([holds, above]) => ({
    label: holds ? "lighthouse-true" : "lighthouse-any",
    build: (ctx) =>
      fromInstructions(ctx, [...honestIxs(ctx), takerLamportsAbove(ctx.taker.publicKey, holds ? 0n : above)]),
  })),
  fc.tuple(fc.integer({ min: 8, max: 34 }), fc.integer({ min: 0, max: 255 })).map(([offset, byte]) => ({
    label: `fill-data[${offset}]`,
    build: (ctx) => {
      const ixs = honestIxs(ctx);
      const f = ixs[fillIndex(ixs)] as TransactionInstruction;
      const data = Buffer.from(f.data);
      if (offset < data.length) data[offset] = byte;
      f.data = data;
      return fromInstructions(ctx, ixs);
    },
  })),
  fc
    .tuple(fc.nat({ max: 11 }), fc.oneof(fc.constant("random"), fc.constant("taker"), fc.constant("maker")))
    .map(([slot, who]) => ({
      label: `fill-account[${slot}]=${who}`,
      build: (ctx) => {
        const ixs = honestIxs(ctx);
        const f = ixs[fillIndex(ixs)] as TransactionInstruction;
        const key =
          who === "taker" ? ctx.taker.publicKey : who === "maker" ? ctx.params.maker : PublicKey.unique();
        const meta = f.keys[slot % f.keys.length];
        if (meta) meta.pubkey = key;
        return fromInstructions(ctx, ixs);
      },
    })),
  fc.nat({ max: 11 }).map((slot) => ({
    label: `fill-account[${slot}]-writable-flip`,
    build: (ctx) => {
      const ixs = honestIxs(ctx);
      const f = ixs[fillIndex(ixs)] as TransactionInstruction;
      const meta = f.keys[slot % f.keys.length];
      if (meta) meta.isWritable = !meta.isWritable;
      return fromInstructions(ctx, ixs);
    },
  })),
];

/** Message-level mutations. */
const messageLevel: fc.Arbitrary<Mutation>[] = [
  fc.constantFrom("made-up", "old").chain((kind) =>
    fc.nat().map((pick) => ({
      label: `blockhash=${kind}`,
      build: (ctx: MutationContext) => {
        const old = ctx.oldBlockhashes[pick % Math.max(1, ctx.oldBlockhashes.length)];
        const hash = kind === "old" && old ? old : PublicKey.unique().toBase58();
        return fromInstructions(ctx, honestIxs(ctx), hash);
      },
    })),
  ),
  fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 255 })).map(([field, value]) => ({
    label: `header[${field}]`,
    build: (ctx) => {
      const m = compileSortedMessageV0({
        payerKey: ctx.params.maker,
        instructions: honestIxs(ctx),
        recentBlockhash: ctx.params.recentBlockhash,
      });
      const h = { ...m.header };
      if (field === 0) h.numRequiredSignatures = value;
      else if (field === 1) h.numReadonlySignedAccounts = value;
      else h.numReadonlyUnsignedAccounts = value;
      const mutated = new MessageV0({
        header: h,
        staticAccountKeys: m.staticAccountKeys,
        recentBlockhash: m.recentBlockhash,
        compiledInstructions: m.compiledInstructions,
        addressTableLookups: m.addressTableLookups,
      });
      try {
        return signedWire(mutated, ctx.taker);
      } catch {
        return rawWire(mutated.serialize(), 2, ctx.taker);
      }
    },
  })),
  fc.tuple(fc.nat({ max: 15 }), fc.nat({ max: 15 })).map(([a, b]) => ({
    label: "swap-keys",
    build: (ctx) => {
      const m = compileSortedMessageV0({
        payerKey: ctx.params.maker,
        instructions: honestIxs(ctx),
        recentBlockhash: ctx.params.recentBlockhash,
      });
      const keys = [...m.staticAccountKeys];
      const i = a % keys.length;
      const j = b % keys.length;
      [keys[i], keys[j]] = [keys[j] as PublicKey, keys[i] as PublicKey];
      const mutated = new MessageV0({
        header: m.header,
        staticAccountKeys: keys,
        recentBlockhash: m.recentBlockhash,
        compiledInstructions: m.compiledInstructions,
        addressTableLookups: m.addressTableLookups,
      });
      return signedWire(mutated, ctx.taker);
    },
  })),
];

/**
 * A transaction on the wire around arbitrary message bytes: `slots` signature slots, the taker's
 * signature in slot 1 over exactly these bytes (the maker's slot 0 empty).
 */
function rawWire(message: Uint8Array, slots: number, taker: Keypair): string {
  const sig = signEd25519(message, ed25519SigningKey(taker.secretKey));
  const sigs = Buffer.alloc(64 * slots);
  if (slots > 1) Buffer.from(sig).copy(sigs, 64);
  return Buffer.concat([Buffer.from([slots]), sigs, Buffer.from(message)]).toString("base64");
}

/** Byte-level: one bit of the serialized message flipped; re-signed by the taker over the new bytes. */
const byteLevel: fc.Arbitrary<Mutation>[] = [
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })).map(([at, bit]) => ({
    label: "bit-flip",
    build: (ctx) => {
      const m = compileSortedMessageV0({
        payerKey: ctx.params.maker,
        instructions: honestIxs(ctx),
        recentBlockhash: ctx.params.recentBlockhash,
      });
      const bytes = Buffer.from(m.serialize());
      const i = at % bytes.length;
      bytes[i] = (bytes[i] as number) ^ (1 << bit);
      try {
        return signedWire(VersionedMessage.deserialize(bytes), ctx.taker);
      } catch {
        return rawWire(bytes, 2, ctx.taker);
      }
    },
  })),
];

/** Every mutation, instruction-level ones weighted up (they are the richest). */
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  ...instructionLevel.map((arbitrary) => ({ arbitrary, weight: 3 })),
  ...messageLevel.map((arbitrary) => ({ arbitrary, weight: 2 })),
  ...byteLevel.map((arbitrary) => ({ arbitrary, weight: 3 })),
);
