/**
 * Address lookup tables made on a chain through its port, as the operator makes the ones its RFQ v2
 * swaps load accounts from: CreateLookupTable at a recent slot (the newest in the SlotHashes sysvar),
 * ExtendLookupTable with the addresses, then a wait until the chain is past the slot the table was
 * extended in (addresses become usable the slot after). Also deactivation, for the tests that need a
 * table the runtime would refuse.
 */
import {
  AddressLookupTableAccount,
  AddressLookupTableProgram,
  Keypair,
  type PublicKey,
  SYSVAR_SLOT_HASHES_PUBKEY,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import type { Chain } from "../../src/chain/interface.ts";

export type TableChain = Pick<
  Chain,
  "send" | "getLatestBlockhash" | "getSignatureStatus" | "getAccounts" | "getBlockHeight"
>;

/** Sends `instructions` paid by `payer` (and signed by `signers`), and waits for them to be confirmed. */
async function run(
  chain: TableChain,
  payer: Keypair,
  signers: Keypair[],
  instructions: TransactionInstruction[],
): Promise<void> {
  const { blockhash } = await chain.getLatestBlockhash();
  const tx = new VersionedTransaction(
    new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions,
    }).compileToV0Message(),
  );
  tx.sign([payer, ...signers]);
  const sent = await chain.send(tx);
  if (!sent.ok) throw new Error(`lookup table transaction: ${sent.error}`);
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    const status = await chain.getSignatureStatus(sent.signature, { blockhash });
    if (status.state === "confirmed") return;
    if (status.state !== "pending")
      throw new Error(`lookup table transaction ${status.state}: ${"error" in status ? status.error : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lookup table transaction ${sent.signature} not confirmed within 20 s`);
}

/** The table as the chain holds it now. */
export async function readLookupTable(chain: TableChain, key: PublicKey): Promise<AddressLookupTableAccount> {
  const [acc] = await chain.getAccounts([key]);
  if (!acc) throw new Error(`lookup table ${key.toBase58()} does not exist`);
  return new AddressLookupTableAccount({ key, state: AddressLookupTableAccount.deserialize(acc.data) });
}

/** The newest slot of the SlotHashes sysvar: the recent slot a new table is derived from. */
async function recentSlot(chain: TableChain): Promise<bigint> {
  const [acc] = await chain.getAccounts([SYSVAR_SLOT_HASHES_PUBKEY]);
  const data = acc && Buffer.from(acc.data);
  // u64 count, then (slot u64, hash 32 bytes), newest first.
  if (!data || data.length < 16 || data.readBigUInt64LE(0) === 0n) throw new Error("no SlotHashes sysvar");
  return data.readBigUInt64LE(8);
}

/**
 * A new active table holding `addresses` (its own authority, a fresh key: one table per authority and
 * recent slot), usable once returned.
 */
export async function createLookupTable(
  chain: TableChain,
  payer: Keypair,
  addresses: readonly PublicKey[],
): Promise<AddressLookupTableAccount & { authority: Keypair }> {
  const authority = Keypair.generate();
  const [create, key] = AddressLookupTableProgram.createLookupTable({
    authority: authority.publicKey,
    payer: payer.publicKey,
    recentSlot: await recentSlot(chain),
  });
  await run(chain, payer, [authority], [create]);
  await extendLookupTable(chain, payer, { key, authority }, addresses);
  const table = await readLookupTable(chain, key);
  return Object.assign(table, { authority });
}

/** Appends `addresses` to the table and waits until they can be loaded. */
export async function extendLookupTable(
  chain: TableChain,
  payer: Keypair,
  table: { key: PublicKey; authority: Keypair },
  addresses: readonly PublicKey[],
): Promise<void> {
  // At most 20 addresses per transaction keeps it under the size limit.
  for (let i = 0; i < addresses.length; i += 20) {
    const extend = AddressLookupTableProgram.extendLookupTable({
      lookupTable: table.key,
      authority: table.authority.publicKey,
      payer: payer.publicKey,
      addresses: addresses.slice(i, i + 20) as PublicKey[],
    });
    await run(chain, payer, [table.authority], [extend]);
  }
  const extendedAt = (await readLookupTable(chain, table.key)).state.lastExtendedSlot;
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    if ((await chain.getBlockHeight()) > BigInt(extendedAt)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the chain did not pass slot ${extendedAt} within 20 s`);
}

/** Deactivates the table (it can be closed once the deactivation cools down). */
export async function deactivateLookupTable(
  chain: TableChain,
  payer: Keypair,
  table: { key: PublicKey; authority: Keypair },
): Promise<void> {
  const ix = AddressLookupTableProgram.deactivateLookupTable({
    lookupTable: table.key,
    authority: table.authority.publicKey,
  });
  await run(chain, payer, [table.authority], [ix]);
}
