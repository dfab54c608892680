/**
 * LocalChain: the Chain port on an embedded SVM (LiteSVM), the default for paper trading and the
 * test bed. It stands in for Solana mainnet with the order-engine program deployed.
 *
 * What is real: the SVM executes the System, SPL Token, Token-2022 and Compute Budget programs;
 * fees (5,000 lamports per signature + compute-unit limit x price) are charged, failures roll back,
 * the fee payer pays even when the transaction fails.
 *
 * What is emulated, and how:
 * - The smart-account (Squads) program is not available either: its `executeTransactionSyncV2` is
 *   replaced by the instructions it carries, the vault signing (smart-account-emulation.ts says what
 *   it checks and what it does not).
 * - The order-engine program binary is not available here, so its `fill` is emulated: checked, then
 *   replaced by the equivalent SPL-token / System instructions (fill-emulation.ts) inside the same
 *   SVM transaction, so the fill stays atomic with every other instruction and the same fee payer.
 * - Rewriting the message voids its signatures, so this class checks every ed25519 signature over
 *   the ORIGINAL message first, and the SVM then runs the rewritten one with sigverify off. The
 *   original signatures are carried over by signer, so the transaction id is unchanged.
 * - Blockhashes: a block height follows wall time (one block per `slotMs`, 400 ms as on mainnet);
 *   a blockhash is valid for `blockhashValidity` (150) blocks after the one it was issued at, and an
 *   unknown or expired one is refused, like a validator drops it. The SVM's own check is off.
 * - The chain clock follows wall time (`unixTimestamp = now`), so `expire_at` means what it means on
 *   mainnet.
 * - The Associated Token program's Create/CreateIdempotent is emulated too (ata-emulation.ts): in
 *   litesvm 0.8 running that program corrupts the Node process's FPU state and crashes it later.
 * - Lighthouse (the assertion program a wallet appends after the fill) is not available either. Its
 *   assertions are emulated (lighthouse-emulation.ts): each is evaluated against the state its target
 *   account has at that point of the transaction (the instructions before it simulated in the SVM,
 *   fee already charged), and the transaction fails there, as on mainnet, exactly when one is false;
 *   a passing assertion changes nothing and is left out of what the SVM runs. A Lighthouse
 *   instruction the emulation does not model is refused (not executed, nothing charged) rather than
 *   run with the assertion silently dropped.
 *
 * Outcomes: a transaction refused before execution (bad or missing signature, unknown or expired
 * blockhash, unsupported program, malformed) is "dropped": `send` reports the reason and the status
 * stays pending until its blockhash expires, as on mainnet where it never lands. An executed one is
 * "confirmed" or "failed" at once (one block).
 */
import { createHash } from "node:crypto";
import {
  AddressLookupTableAccount,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { FailedTransactionMetadata, LiteSVM } from "litesvm";
import {
  COMPUTE_BUDGET_PROGRAM_ID,
  LAMPORTS_PER_SIGNATURE,
  LIGHTHOUSE_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "../../program/layout.ts";
import type {
  AccountSnapshot,
  Blockhash,
  Chain,
  SendResult,
  SignatureStatus,
  SimulationResult,
  StatusHint,
  UnsignedSimulation,
} from "../interface.ts";
import { checkTransactionSignatures } from "../signatures.ts";
import { emulateAta, isAtaInstruction } from "./ata-emulation.ts";
import { emulateFill, failingInstruction, isOrderEngineInstruction } from "./fill-emulation.ts";
import {
  decodeLighthouse,
  evaluateLighthouse,
  LIGHTHOUSE_ASSERTION_FAILED,
  type LighthouseVerdict,
} from "./lighthouse-emulation.ts";
import { emulateRouteV2, isRouteV2Instruction } from "./rfq-v2-emulation.ts";
import {
  emulateSmartAccount,
  isSmartAccountInstruction,
  SMART_ACCOUNT_STAND_IN_ERROR,
} from "./smart-account-emulation.ts";
import { errorText, transactionErrorJson } from "./svm-errors.ts";

export interface LocalChainOptions {
  /** Block time, ms (mainnet: about 400). */
  slotMs?: number;
  /** Blocks a blockhash stays valid after the block it was issued at (mainnet: 150). */
  blockhashValidity?: number;
  /** Signatures remembered for status queries; the oldest are forgotten first. */
  maxRecords?: number;
}

/** Why a transaction was not executed. */
export type DropReason = "signature" | "blockhash" | "unsupported" | "malformed" | "rejected";

/** A transaction as the SVM runs it (`LocalChain.prepare`). */
interface Prepared {
  ok: true;
  tx: VersionedTransaction;
  emulationError?: string;
  /** The error an emulated program fails with, as the chain reports it (at its own index). */
  emulationErrJson?: unknown;
  extraSignatures: number;
}
/** A transaction the chain drops before running it. */
type Refused = { ok: false; reason: DropReason; error: string };

const isLighthouse = (ix: TransactionInstruction) => ix.programId.equals(LIGHTHOUSE_PROGRAM_ID);

/** The detailed result of `submit`, for the JSON-RPC server; `send` reduces it to a SendResult. */
export type SubmitOutcome =
  | { kind: "confirmed"; signature: string; slot: bigint; logs: string[]; unitsConsumed: bigint }
  | { kind: "failed"; signature: string; slot: bigint; error: string; errJson: unknown; logs: string[] }
  | { kind: "dropped"; signature: string; reason: DropReason; error: string };

export interface SimulationOutcome {
  /** RPC JSON error, null on success. */
  errJson: unknown;
  error?: string;
  logs: string[];
  unitsConsumed: bigint;
  /**
   * With `watch`: each watched account as the transaction leaves it (null: absent), in the order
   * asked; only on success (a failed transaction changes nothing but the fee).
   */
  post?: (AccountSnapshot | null)[];
}

/** One token account among a transaction's keys, as an RPC's `preTokenBalances` lists it. */
export interface TokenBalanceEntry {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
  decimals: number;
}

/**
 * What the chain measured of a landed transaction, as an RPC's `getTransaction` meta reports it: the
 * fee charged to the fee payer, the compute units consumed, the lamports of each account key before
 * and after, the token accounts among them before and after, and the logs.
 */
export interface TransactionMeta {
  fee: bigint;
  computeUnitsConsumed: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalanceEntry[];
  postTokenBalances: TokenBalanceEntry[];
  logMessages: string[];
}

/** `tx`: the transaction as sent, kept for the history queries (absent for airdrops). */
type StatusRecord =
  | { state: "confirmed"; slot: bigint; tx?: VersionedTransaction; meta?: TransactionMeta }
  | {
      state: "failed";
      slot: bigint;
      error: string;
      errJson: unknown;
      tx?: VersionedTransaction;
      meta?: TransactionMeta;
    }
  | { state: "dropped"; lastValidBlockHeight: bigint };

/** A transaction that landed (confirmed, or failed with its fee charged), as the history returns it. */
export interface LandedTransaction {
  signature: string;
  slot: bigint;
  /** The RPC's JSON error, null when it succeeded. */
  errJson: unknown;
  tx: VersionedTransaction;
  meta?: TransactionMeta;
}

/**
 * The fee the runtime charges a transaction's fee payer: 5,000 lamports per signature plus
 * ceil(compute-unit limit x price / 1e6) (the limit defaults to 200,000 per instruction, capped at
 * 1,400,000; the price to 0).
 */
function transactionFee(tx: VersionedTransaction): bigint {
  const m = tx.message;
  const keys = m.staticAccountKeys;
  let limit: bigint | undefined;
  let price = 0n;
  for (const ci of m.compiledInstructions) {
    if (!keys[ci.programIdIndex]?.equals(COMPUTE_BUDGET_PROGRAM_ID)) continue;
    const d = Buffer.from(ci.data);
    if (d[0] === 2 && d.length === 5) limit = BigInt(d.readUInt32LE(1));
    if (d[0] === 3 && d.length === 9) price = d.readBigUInt64LE(1);
  }
  const units = limit ?? BigInt(Math.min(200_000 * m.compiledInstructions.length, 1_400_000));
  return (
    LAMPORTS_PER_SIGNATURE * BigInt(m.header.numRequiredSignatures) + (units * price + 999_999n) / 1_000_000n
  );
}

const DEFAULT_SLOT_MS = 400;
const DEFAULT_BLOCKHASH_VALIDITY = 150;
const TOKEN_ACCOUNT_SIZE = 165n;

/** Blocks that follow wall time; each height has a deterministic hash for this chain instance. */
class BlockClock {
  private readonly startMs = Date.now();
  private offset = 0n;
  private readonly salt = createHash("sha256")
    .update(`${process.pid}:${Date.now()}:${Math.random()}`)
    .digest();
  /** Hashes handed out, by hash, with the height they were issued at. */
  private readonly issued = new Map<string, bigint>();

  constructor(
    private readonly slotMs: number,
    readonly validity: bigint,
  ) {}

  height(): bigint {
    return BigInt(Math.floor((Date.now() - this.startMs) / this.slotMs)) + this.offset;
  }

  advance(blocks: number): void {
    this.offset += BigInt(blocks);
  }

  latest(): Blockhash & { height: bigint } {
    const height = this.height();
    const blockhash = bs58.encode(createHash("sha256").update(this.salt).update(String(height)).digest());
    if (!this.issued.has(blockhash)) {
      this.issued.set(blockhash, height);
      this.prune(height);
    }
    return { blockhash, height, lastValidBlockHeight: height + this.validity };
  }

  /** Last valid height of a blockhash this chain issued; undefined for one it never issued. */
  lastValidHeightOf(blockhash: string): bigint | undefined {
    const h = this.issued.get(blockhash);
    return h === undefined ? undefined : h + this.validity;
  }

  private prune(height: bigint): void {
    if (this.issued.size < 4 * Number(this.validity)) return;
    for (const [hash, h] of this.issued) {
      if (h + 2n * this.validity < height) this.issued.delete(hash);
    }
  }
}

export class LocalChain implements Chain {
  readonly description = "local LiteSVM (order-engine fill emulated)";
  readonly svm: LiteSVM;
  private readonly blocks: BlockClock;
  private readonly records = new Map<string, StatusRecord>();
  private readonly maxRecords: number;

  private constructor(opts: LocalChainOptions) {
    // Standard builtins, sysvars, SPL programs and the native mints; signatures and blockhashes are
    // checked by this class (see the file comment), so the SVM's own checks are off.
    // Transaction history off: this class de-duplicates by signature itself, and a transaction the SVM
    // rejected at load (e.g. fee payer short of lamports) must be able to land when sent again.
    this.svm = new LiteSVM()
      .withNativeMints()
      .withSigverify(false)
      .withBlockhashCheck(false)
      .withTransactionHistory(0n);
    this.blocks = new BlockClock(
      opts.slotMs ?? DEFAULT_SLOT_MS,
      BigInt(opts.blockhashValidity ?? DEFAULT_BLOCKHASH_VALIDITY),
    );
    this.maxRecords = opts.maxRecords ?? 100_000;
    this.syncClock();
  }

  /** A fresh, empty local chain (seed it with seed.ts). */
  static create(opts: LocalChainOptions = {}): LocalChain {
    return new LocalChain(opts);
  }

  /** Current block height (= slot here: one block per slot). */
  blockHeight(): bigint {
    return this.blocks.height();
  }

  /** Moves the block height forward, e.g. to expire blockhashes in tests. */
  advanceBlocks(blocks: number): void {
    this.blocks.advance(blocks);
    this.syncClock();
  }

  /** Puts the SVM clock sysvar at wall time and the current height. */
  syncClock(): { slot: bigint; unixTimestamp: bigint; epoch: bigint } {
    const clock = this.svm.getClock();
    clock.slot = this.blocks.height();
    clock.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
    this.svm.setClock(clock);
    return { slot: clock.slot, unixTimestamp: clock.unixTimestamp, epoch: clock.epoch };
  }

  /** Whether this chain issued `blockhash` and it has not expired (synchronous). */
  blockhashValid(blockhash: string): boolean {
    const last = this.blocks.lastValidHeightOf(blockhash);
    return last !== undefined && this.blocks.height() <= last;
  }

  async isBlockhashValid(blockhash: string): Promise<boolean> {
    return this.blockhashValid(blockhash);
  }

  async getBlockHeight(): Promise<bigint> {
    return this.blocks.height();
  }

  /** The port's pre-flight: `simulate` with the blockhash checked, signatures not (the maker's slot is empty). */
  async preflight(tx: VersionedTransaction): Promise<SimulationResult> {
    const sim = this.simulate(tx, { sigVerify: false });
    return sim.errJson === null
      ? { ok: true, unitsConsumed: sim.unitsConsumed, logs: sim.logs }
      : { ok: false, error: sim.error ?? errorText(sim.errJson), logs: sim.logs };
  }

  async getLatestBlockhash(): Promise<Blockhash> {
    const { blockhash, lastValidBlockHeight } = this.blocks.latest();
    return { blockhash, lastValidBlockHeight };
  }

  /** Like getLatestBlockhash, with the height it was issued at (for the RPC context slot). */
  latestBlockhash(): Blockhash & { height: bigint } {
    return this.blocks.latest();
  }

  async getAccounts(keys: PublicKey[]): Promise<(AccountSnapshot | null)[]> {
    this.syncClock();
    return keys.map((k) => this.account(k));
  }

  /** Synchronous account read. */
  account(key: PublicKey): AccountSnapshot | null {
    const acc = this.svm.getAccount(key);
    if (!acc) return null;
    return { owner: acc.owner, lamports: BigInt(acc.lamports), data: acc.data, executable: acc.executable };
  }

  async getMinimumBalanceForRentExemption(dataLength: number): Promise<bigint> {
    return this.svm.minimumBalanceForRentExemption(BigInt(dataLength));
  }

  async getUnixTimestamp(): Promise<bigint> {
    return this.syncClock().unixTimestamp;
  }

  async send(tx: VersionedTransaction): Promise<SendResult> {
    const outcome = this.submit(tx);
    if (outcome.kind === "dropped") {
      return { ok: false, error: `${outcome.reason}: ${outcome.error}`, reached: "refused" };
    }
    return { ok: true, signature: outcome.signature };
  }

  async getSignatureStatus(signature: string, hint?: StatusHint): Promise<SignatureStatus> {
    const rec = this.records.get(signature);
    if (!rec) {
      // Never seen here: it cannot land once the blockhash it names has expired.
      return hint?.blockhash && !this.isBlockhashValid(hint.blockhash)
        ? { state: "expired" }
        : { state: "pending" };
    }
    switch (rec.state) {
      case "confirmed":
        return { state: "confirmed", slot: rec.slot };
      case "failed":
        return { state: "failed", error: rec.error, slot: rec.slot };
      case "dropped":
        return this.blocks.height() > rec.lastValidBlockHeight ? { state: "expired" } : { state: "pending" };
    }
  }

  /** The landed record of a signature (confirmed or failed), for the RPC server's status query. */
  landed(signature: string): Exclude<StatusRecord, { state: "dropped" }> | undefined {
    const rec = this.records.get(signature);
    return rec && rec.state !== "dropped" ? rec : undefined;
  }

  /**
   * The landed transactions that name `address` among their account keys, oldest first (within the
   * `maxRecords` remembered), for `getSignaturesForAddress` / `getTransaction` on the RPC server.
   */
  transactionsFor(address: PublicKey): LandedTransaction[] {
    const out: LandedTransaction[] = [];
    for (const [signature, rec] of this.records) {
      if (rec.state === "dropped" || !rec.tx) continue;
      if (!rec.tx.message.staticAccountKeys.some((k) => k.equals(address))) continue;
      out.push({
        signature,
        slot: rec.slot,
        errJson: rec.state === "failed" ? rec.errJson : null,
        tx: rec.tx,
        ...(rec.meta ? { meta: rec.meta } : {}),
      });
    }
    return out;
  }

  /** One landed transaction by signature. */
  transaction(signature: string): LandedTransaction | undefined {
    const rec = this.records.get(signature);
    if (!rec || rec.state === "dropped" || !rec.tx) return undefined;
    return {
      signature,
      slot: rec.slot,
      errJson: rec.state === "failed" ? rec.errJson : null,
      tx: rec.tx,
      ...(rec.meta ? { meta: rec.meta } : {}),
    };
  }

  /** Lamports and token accounts of `keys`, now. */
  private balancesOf(keys: readonly PublicKey[]): { lamports: bigint[]; tokens: TokenBalanceEntry[] } {
    const lamports: bigint[] = [];
    const tokens: TokenBalanceEntry[] = [];
    keys.forEach((k, accountIndex) => {
      const acc = this.svm.getAccount(k);
      lamports.push(BigInt(acc?.lamports ?? 0));
      if (!acc) return;
      const programId = acc.owner;
      const isTokenProgram = programId.equals(TOKEN_PROGRAM_ID) || programId.equals(TOKEN_2022_PROGRAM_ID);
      // A token account is 165 bytes, or more with Token-2022 extensions (account type 2 at byte 165).
      if (!isTokenProgram || acc.data.length < 165 || (acc.data.length > 165 && acc.data[165] !== 2)) return;
      const data = Buffer.from(acc.data);
      const mint = new PublicKey(data.subarray(0, 32));
      const mintAcc = this.svm.getAccount(mint);
      tokens.push({
        accountIndex,
        mint: mint.toBase58(),
        owner: new PublicKey(data.subarray(32, 64)).toBase58(),
        programId: programId.toBase58(),
        amount: data.readBigUInt64LE(64),
        decimals: mintAcc ? (mintAcc.data[44] ?? 0) : 0,
      });
    });
    return { lamports, tokens };
  }

  /**
   * The meta of a transaction that just ran: `pre` taken before it; the fee what the fee payer was
   * charged (5,000 per signature of the transaction as sent, plus its priority fee), as the runtime
   * computes it.
   */
  private metaOf(
    tx: VersionedTransaction,
    pre: ReturnType<LocalChain["balancesOf"]>,
    computeUnitsConsumed: bigint,
    logMessages: string[],
  ): TransactionMeta {
    const post = this.balancesOf(tx.message.staticAccountKeys);
    return {
      fee: transactionFee(tx),
      computeUnitsConsumed,
      preBalances: pre.lamports,
      postBalances: post.lamports,
      preTokenBalances: pre.tokens,
      postTokenBalances: post.tokens,
      logMessages,
    };
  }

  /**
   * Forgets what this chain knows of a signature, so it reads as never sent. For the local bundle
   * engine (bundle-engine.ts): the transactions of a bundle that failed did not land, their effects
   * are undone, and their signatures must not read as confirmed or failed.
   */
  forget(signature: string): void {
    this.records.delete(signature);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}

  /** Gives `lamports` to `to` through the SVM's airdrop (a real System transfer); returns its id. */
  airdrop(to: PublicKey, lamports: bigint): SendResult {
    const res = this.svm.airdrop(to, lamports);
    if (!res) return { ok: false, error: "airdrop failed" };
    if (res instanceof FailedTransactionMetadata)
      return { ok: false, error: errorText(transactionErrorJson(res.err())) };
    const signature = bs58.encode(res.signature());
    this.remember(signature, { state: "confirmed", slot: this.blocks.height() });
    return { ok: true, signature };
  }

  /**
   * Checks and executes a transaction: signatures and blockhash first (refused: "dropped"), then the
   * rewritten transaction in the SVM ("confirmed" or "failed"). Sending a transaction that already
   * landed again changes nothing and answers its first outcome.
   */
  submit(tx: VersionedTransaction): SubmitOutcome {
    const first = tx.signatures[0];
    if (!first) return { kind: "dropped", signature: "", reason: "malformed", error: "no signatures" };
    const signature = bs58.encode(first);
    const previous = this.records.get(signature);
    if (previous && previous.state !== "dropped") return this.replay(signature, previous);

    const sigs = checkTransactionSignatures(tx);
    if (!sigs.ok) return this.drop(tx, signature, "signature", sigs.error);
    if (!this.blockhashValid(tx.message.recentBlockhash)) {
      return this.drop(tx, signature, "blockhash", "blockhash not found or expired");
    }
    const prepared = this.prepare(tx);
    if (!prepared.ok) return this.drop(tx, signature, prepared.reason, prepared.error);

    const slot = this.syncClock().slot;
    const feePayer = prepared.tx.message.staticAccountKeys[0] as PublicKey;
    const keys = tx.message.staticAccountKeys;
    const pre = this.balancesOf(keys);
    const res = this.svm.sendTransaction(prepared.tx);
    if (res instanceof FailedTransactionMetadata) {
      const svmErrJson = transactionErrorJson(res.err());
      if (typeof svmErrJson === "string") {
        // Load-time errors (fee payer cannot pay, account or program missing, ...): a validator
        // drops such a transaction; it never lands and charges nothing.
        return this.drop(tx, signature, "rejected", svmErrJson);
      }
      const errJson = prepared.emulationErrJson ?? svmErrJson;
      this.refundExtraSignatures(feePayer, prepared.extraSignatures);
      const error = prepared.emulationError ?? errorText(errJson);
      const failedMeta = res.meta();
      const meta = this.metaOf(tx, pre, failedMeta.computeUnitsConsumed(), failedMeta.logs());
      this.remember(signature, { state: "failed", slot, error, errJson, tx, meta });
      return { kind: "failed", signature, slot, error, errJson, logs: res.meta().logs() };
    }
    this.refundExtraSignatures(feePayer, prepared.extraSignatures);
    const meta = this.metaOf(tx, pre, res.computeUnitsConsumed(), res.logs());
    this.remember(signature, { state: "confirmed", slot, tx, meta });
    return {
      kind: "confirmed",
      signature,
      slot,
      logs: res.logs(),
      unitsConsumed: res.computeUnitsConsumed(),
    };
  }

  /**
   * Runs a transaction without committing it, as `simulateTransaction` does: signatures are checked
   * only with `sigVerify`, and `replaceRecentBlockhash` skips the blockhash check.
   */
  simulate(
    tx: VersionedTransaction,
    opts: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; watch?: readonly PublicKey[] } = {},
  ): SimulationOutcome {
    const fail = (errJson: unknown, error: string): SimulationOutcome => ({
      errJson,
      error,
      logs: [],
      unitsConsumed: 0n,
    });
    if (opts.sigVerify) {
      const sigs = checkTransactionSignatures(tx);
      if (!sigs.ok) return fail("SignatureFailure", sigs.error);
    }
    if (!opts.replaceRecentBlockhash && !this.blockhashValid(tx.message.recentBlockhash)) {
      return fail("BlockhashNotFound", "blockhash not found or expired");
    }
    const prepared = this.prepare(tx);
    if (!prepared.ok)
      return fail(
        prepared.reason === "unsupported" ? "ProgramAccountNotFound" : "SanitizeFailure",
        prepared.error,
      );
    this.syncClock();
    const res = this.svm.simulateTransaction(prepared.tx);
    if (res instanceof FailedTransactionMetadata) {
      const errJson = prepared.emulationErrJson ?? transactionErrorJson(res.err());
      const meta = res.meta();
      return {
        errJson,
        error: prepared.emulationError ?? errorText(errJson),
        logs: meta.logs(),
        unitsConsumed: meta.computeUnitsConsumed(),
      };
    }
    const meta = res.meta();
    const out: SimulationOutcome = {
      errJson: null,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
    };
    if (opts.watch) {
      const touched = new Map(res.postAccounts().map(([k, a]) => [k.toBase58(), a]));
      out.post = opts.watch.map((k) => {
        const a = touched.get(k.toBase58());
        if (!a) return this.account(k);
        // An account the transaction closed is left with no lamports: absent, as the RPC reports it.
        if (a.lamports() === 0n) return null;
        return {
          owner: new PublicKey(a.owner()),
          lamports: a.lamports(),
          data: a.data(),
          executable: a.executable(),
        };
      });
    }
    return out;
  }

  /** The port's unsigned simulation: signatures not verified, watched accounts as it leaves them. */
  async simulateUnsigned(tx: VersionedTransaction, watch: readonly PublicKey[]): Promise<UnsignedSimulation> {
    const sim = this.simulate(tx, { sigVerify: false, watch });
    return sim.errJson === null
      ? { ok: true, unitsConsumed: sim.unitsConsumed, logs: sim.logs, post: sim.post ?? [] }
      : { ok: false, error: sim.error ?? errorText(sim.errJson), logs: sim.logs };
  }

  /** The transaction the SVM runs: fills replaced by their emulation, signatures carried over. */
  private prepare(tx: VersionedTransaction): Prepared | Refused {
    const message = tx.message;
    const decompiled = this.decompile(message);
    if (!decompiled.ok) return decompiled;
    const { lookupTables } = decompiled;
    // A smart-account execute runs the instructions it carries (smart-account-emulation.ts): each
    // stands where the execute stood, and an error inside it is the execute's (its outer index).
    const smartAccount = this.expandSmartAccount(
      decompiled.instructions,
      message.staticAccountKeys[0] as PublicKey,
    );
    const instructions = smartAccount.instructions;
    for (const ix of instructions.filter(isLighthouse)) {
      const decoded = decodeLighthouse(ix);
      if (decoded.kind === "unsupported") return { ok: false, reason: "unsupported", error: decoded.error };
    }
    if (
      !smartAccount.expanded &&
      !instructions.some(
        (ix) =>
          isOrderEngineInstruction(ix) ||
          isAtaInstruction(ix) ||
          isLighthouse(ix) ||
          isRouteV2Instruction(ix),
      )
    ) {
      return { ok: true, tx, extraSignatures: 0 };
    }
    const { rewritten, emulationError, emulationErrJson, extraSigners } = this.emulateEach(
      message,
      smartAccount,
    );
    const carried = this.recompile(tx, rewritten, lookupTables, extraSigners);
    if (!carried.ok) return carried;
    return { ...carried, emulationError, emulationErrJson };
  }

  /** The message's instructions, its lookup tables read from the chain; malformed when one is missing. */
  private decompile(
    message: VersionedTransaction["message"],
  ):
    | { ok: true; lookupTables: AddressLookupTableAccount[]; instructions: TransactionInstruction[] }
    | Refused {
    try {
      const lookupTables = message.addressTableLookups.map((l) => {
        const acc = this.svm.getAccount(l.accountKey);
        if (!acc) throw new Error(`address lookup table ${l.accountKey.toBase58()} not found`);
        return new AddressLookupTableAccount({
          key: l.accountKey,
          state: AddressLookupTableAccount.deserialize(acc.data),
        });
      });
      const instructions = TransactionMessage.decompile(message, {
        addressLookupTableAccounts: lookupTables,
      }).instructions;
      return { ok: true, lookupTables, instructions };
    } catch (e) {
      return { ok: false, reason: "malformed", error: e instanceof Error ? e.message : String(e) };
    }
  }

  /**
   * Each instruction as the SVM runs it: a fill, an ATA create, an RFQ v2 route or a Lighthouse
   * assertion replaced by its emulation; from the first failing program on, stand-ins that fail.
   */
  private emulateEach(
    message: VersionedTransaction["message"],
    smartAccount: ReturnType<LocalChain["expandSmartAccount"]>,
  ): {
    rewritten: TransactionInstruction[];
    emulationError: string | undefined;
    emulationErrJson: unknown;
    extraSigners: Set<string>;
  } {
    const { instructions, outerIndex } = smartAccount;
    const payer = message.staticAccountKeys[0] as PublicKey;
    const clock = this.syncClock();
    const read = (k: PublicKey) => this.svm.getAccount(k);
    const fillCtx = {
      read,
      unixTimestamp: clock.unixTimestamp,
      epoch: clock.epoch,
      tokenAccountRent: this.svm.minimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE),
    };
    const ataCtx = {
      read,
      rent: (len: number) => this.svm.minimumBalanceForRentExemption(BigInt(len)),
      createdInTransaction: new Set<string>(),
    };
    let emulationError: string | undefined = smartAccount.error;
    let emulationErrJson: unknown = smartAccount.errJson;
    const extraSigners = new Set<string>(smartAccount.extraSigners);
    const rewritten: TransactionInstruction[] = [];
    for (const [at, ix] of instructions.entries()) {
      const index = outerIndex[at] as number;
      if (smartAccount.failing.has(ix)) {
        rewritten.push(failingInstruction(payer, ix));
        continue;
      }
      if (isLighthouse(ix)) {
        // After the first failing program nothing else matters: the transaction fails there.
        if (emulationError) continue;
        const verdict = this.assertAt(ix, payer, message.recentBlockhash, rewritten, extraSigners.size);
        if (verdict.kind === "fail") {
          emulationError = verdict.error;
          // What the program answers (lighthouse-sdk: LIGHTHOUSE_ERROR__ASSERTION_FAILED), at the
          // assertion's index in the transaction as sent, not at the stand-in's.
          emulationErrJson = { InstructionError: [index, { Custom: LIGHTHOUSE_ASSERTION_FAILED }] };
          rewritten.push(failingInstruction(payer, ix));
        }
        continue;
      }
      if (isRouteV2Instruction(ix)) {
        const emulated = emulationError
          ? undefined
          : emulateRouteV2(
              ix,
              instructions.filter((o) => o !== ix),
              fillCtx,
            );
        if (emulated?.ok) {
          rewritten.push(...emulated.instructions);
          for (const k of emulated.extraSigners) extraSigners.add(k.toBase58());
        } else {
          emulationError ??= emulated?.error;
          rewritten.push(failingInstruction(payer, ix));
        }
        continue;
      }
      const fill = isOrderEngineInstruction(ix);
      if (!fill && !isAtaInstruction(ix)) {
        rewritten.push(ix);
        continue;
      }
      // After the first failing program nothing else matters: the transaction fails there.
      const emulated = emulationError ? undefined : fill ? emulateFill(ix, fillCtx) : emulateAta(ix, ataCtx);
      if (emulated?.ok) {
        rewritten.push(...emulated.instructions);
        const added = "extraSigners" in emulated ? (emulated.extraSigners as PublicKey[]) : [];
        for (const k of added) extraSigners.add(k.toBase58());
      } else {
        emulationError ??= emulated?.error;
        rewritten.push(failingInstruction(payer, ix));
      }
    }
    return { rewritten, emulationError, emulationErrJson, extraSigners };
  }

  /**
   * The rewritten instructions as a message of the sent one's version, each signature carried over to
   * its signer's slot; the emulation's own extra signers (PDAs the programs sign for) get an empty
   * slot: the SVM does not verify signatures.
   */
  private recompile(
    tx: VersionedTransaction,
    rewritten: TransactionInstruction[],
    lookupTables: AddressLookupTableAccount[],
    extraSigners: ReadonlySet<string>,
  ): { ok: true; tx: VersionedTransaction; extraSignatures: number } | Refused {
    const message = tx.message;
    const compiled = new TransactionMessage({
      payerKey: message.staticAccountKeys[0] as PublicKey,
      recentBlockhash: message.recentBlockhash,
      instructions: rewritten,
    });
    const newMessage =
      message.version === "legacy"
        ? compiled.compileToLegacyMessage()
        : compiled.compileToV0Message(lookupTables);
    const byKey = new Map<string, Uint8Array>();
    message.staticAccountKeys.slice(0, message.header.numRequiredSignatures).forEach((k, i) => {
      byKey.set(k.toBase58(), tx.signatures[i] as Uint8Array);
    });
    const signatures: Uint8Array[] = [];
    let carried = 0;
    let extraSignatures = 0;
    for (const k of newMessage.staticAccountKeys.slice(0, newMessage.header.numRequiredSignatures)) {
      const sig = byKey.get(k.toBase58());
      if (sig) {
        signatures.push(sig);
        carried++;
      } else if (extraSigners.has(k.toBase58())) {
        signatures.push(new Uint8Array(64));
        extraSignatures++;
      } else {
        return { ok: false, reason: "malformed", error: `emulation needs a signature from ${k.toBase58()}` };
      }
    }
    if (carried !== byKey.size) {
      // A signer the emulation no longer references would change the fee; keep the original count.
      return { ok: false, reason: "malformed", error: "emulation dropped a signer" };
    }
    return { ok: true, tx: new VersionedTransaction(newMessage, signatures), extraSignatures };
  }

  /**
   * The message's instructions with each smart-account execute replaced by the instructions it
   * carries (smart-account-emulation.ts), with the outer index each one stands at; an execute the
   * stand-in refuses is kept, marked to fail there, and the first such refusal is the error.
   */
  private expandSmartAccount(
    instructions: TransactionInstruction[],
    payer: PublicKey,
  ): {
    instructions: TransactionInstruction[];
    outerIndex: number[];
    expanded: boolean;
    extraSigners: string[];
    failing: Set<TransactionInstruction>;
    error?: string;
    errJson?: unknown;
  } {
    const out: TransactionInstruction[] = [];
    const outerIndex: number[] = [];
    const extraSigners: string[] = [];
    const failing = new Set<TransactionInstruction>();
    let expanded = false;
    let error: string | undefined;
    let errJson: unknown;
    const read = (k: PublicKey) => {
      const a = this.svm.getAccount(k);
      return a && { owner: a.owner, data: a.data };
    };
    for (const [index, ix] of instructions.entries()) {
      if (!isSmartAccountInstruction(ix)) {
        out.push(ix);
        outerIndex.push(index);
        continue;
      }
      expanded = true;
      const e = emulateSmartAccount(ix, { read });
      if (e.ok && error === undefined) {
        // The execute's own accounts (members, settings) stay in the transaction, so its signers and
        // fee stay the same: a zero-lamport transfer the System program runs, listing them.
        const keep = SystemProgram.transfer({ fromPubkey: payer, toPubkey: payer, lamports: 0 });
        keep.keys.push(...ix.keys);
        for (const inner of [keep, ...e.instructions]) {
          out.push(inner);
          outerIndex.push(index);
        }
        extraSigners.push(...e.extraSigners.map((k) => k.toBase58()));
      } else {
        if (!e.ok && error === undefined) {
          error = e.error;
          errJson = { InstructionError: [index, { Custom: SMART_ACCOUNT_STAND_IN_ERROR }] };
        }
        failing.add(ix);
        out.push(ix);
        outerIndex.push(index);
      }
    }
    return {
      instructions: out,
      outerIndex,
      expanded,
      extraSigners,
      failing,
      ...(error !== undefined ? { error, errJson } : {}),
    };
  }

  /**
   * One Lighthouse instruction, evaluated against its target's state after the instructions before it
   * (`before`, already rewritten): they are simulated in the SVM, whose post-state is what the
   * assertion sees (the fee already charged, less the refund of the emulation's extra signatures).
   * When the instructions before it fail, so does the transaction, there: the assertion is moot.
   */
  private assertAt(
    ix: TransactionInstruction,
    payer: PublicKey,
    recentBlockhash: string,
    before: TransactionInstruction[],
    extraSigners: number,
  ): LighthouseVerdict {
    const decoded = decodeLighthouse(ix);
    if (decoded.kind !== "assert") return { kind: "fail", error: decoded.error };
    let post: AccountSnapshot | null | undefined;
    let rentEpoch = 0n;
    if (before.length > 0) {
      const prefix = new TransactionMessage({
        payerKey: payer,
        recentBlockhash,
        instructions: before,
      }).compileToV0Message();
      const sim = this.svm.simulateTransaction(
        new VersionedTransaction(
          prefix,
          Array.from({ length: prefix.header.numRequiredSignatures }, () => new Uint8Array(64)),
        ),
      );
      if (sim instanceof FailedTransactionMetadata) return { kind: "pass" };
      for (const [key, acc] of sim.postAccounts()) {
        if (!key.equals(decoded.target)) continue;
        const refund = key.equals(payer) ? LAMPORTS_PER_SIGNATURE * BigInt(extraSigners) : 0n;
        post =
          acc.lamports() === 0n && acc.data().length === 0
            ? null
            : {
                owner: new PublicKey(acc.owner()),
                lamports: acc.lamports() + refund,
                data: acc.data(),
                executable: acc.executable(),
              };
        rentEpoch = acc.rentEpoch();
      }
    }
    if (post === undefined) {
      const acc = this.svm.getAccount(decoded.target);
      post = acc && {
        owner: acc.owner,
        lamports: BigInt(acc.lamports),
        data: acc.data,
        executable: acc.executable,
      };
      rentEpoch = BigInt(acc?.rentEpoch ?? 0);
    }
    const meta = ix.keys[0] as { isSigner: boolean; isWritable: boolean };
    // An account that does not exist reads as the runtime shows it: no lamports, no data, the System
    // program as owner.
    const account = post
      ? { ...post, rentEpoch }
      : { owner: SYSTEM_PROGRAM_ID, lamports: 0n, data: new Uint8Array(0), executable: false, rentEpoch: 0n };
    return evaluateLighthouse(decoded, account, meta);
  }

  /** Gives back the fee of the signatures only the emulation added (ata-emulation.ts). */
  private refundExtraSignatures(feePayer: PublicKey, extra: number): void {
    if (extra === 0) return;
    const acc = this.svm.getAccount(feePayer);
    if (!acc) return;
    this.svm.setAccount(feePayer, {
      ...acc,
      lamports: Number(BigInt(acc.lamports) + LAMPORTS_PER_SIGNATURE * BigInt(extra)),
    });
  }

  private replay(signature: string, rec: Exclude<StatusRecord, { state: "dropped" }>): SubmitOutcome {
    if (rec.state === "confirmed") {
      return { kind: "confirmed", signature, slot: rec.slot, logs: [], unitsConsumed: 0n };
    }
    return { kind: "failed", signature, slot: rec.slot, error: rec.error, errJson: rec.errJson, logs: [] };
  }

  private drop(
    tx: VersionedTransaction,
    signature: string,
    reason: DropReason,
    error: string,
  ): SubmitOutcome {
    // Until its blockhash expires a dropped transaction is indistinguishable from a pending one.
    const last = this.blocks.lastValidHeightOf(tx.message.recentBlockhash) ?? -1n;
    const unsigned = tx.signatures[0]?.every((b) => b === 0) ?? true;
    if (!unsigned && !this.records.has(signature))
      this.remember(signature, { state: "dropped", lastValidBlockHeight: last });
    return { kind: "dropped", signature, reason, error };
  }

  private remember(signature: string, rec: StatusRecord): void {
    this.records.delete(signature);
    this.records.set(signature, rec);
    if (this.records.size > this.maxRecords) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }
}
