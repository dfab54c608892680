/**
 * The load test's ledger check (`npm run loadtest -- --check-ledger`, implied by
 * `--kill-webhook-at`): after the swap phase, the fill ledger against what really happened.
 *
 * The witnesses are independent of the webhook: the operator simulator's record of every /swap it
 * sent (the quote's amounts, the message it built, whether an answer came back at all) and the
 * chain's own transactions (`getSignaturesForAddress` on the maker, `getTransaction`, the fill
 * instruction's amounts decoded from the landed bytes). The ledger must hold:
 *   - exactly one decision row per /swap that was answered, with the answer's decision (and the
 *     answer's transaction for an acceptance); at most one for a /swap cut by the kill (it may have
 *     been decided before the process died), and an acceptance for every cut /swap whose transaction
 *     landed; no row for a quote no /swap was sent for, and never two rows for one quote;
 *   - one landed fill per landed maker transaction on the chain, and none other;
 *   - and `npm run report` (its JSON) must print, per mint, the fees the chain's fills carry: the
 *     fill's input above the quoted amountIn (fee in the input mint) or its output below the quoted
 *     amountOut (fee in the output mint).
 * The webhook must be stopped first (the embedded ledger is one process's at a time).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { PublicKey, VersionedTransaction } from "@solana/web3.js";
import { redisKeys } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import { journalKeys } from "../../src/journal/redis.ts";
import { openLedger } from "../../src/ledger/open.ts";
import { decodeFillTransaction } from "../../src/program/decode.ts";
import { redisFromUrl } from "../../src/redis/client.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import type { ExecuteDeps } from "../operator/execute.ts";
import { ExecuteCode } from "../operator/wire.ts";

/** One /swap the operator simulator sent to the webhook (or meant to: `called`). */
export interface SwapCall {
  quoteId: string;
  requestId: string;
  /** sha256 (hex) of the message the operator built and the taker signed. */
  messageHash: string;
  quotedIn: bigint;
  quotedOut: bigint;
  inputMint: string;
  outputMint: string;
  /** False when the order expired before the operator called /swap. */
  called: boolean;
  /** An HTTP answer came back (false: the connection was cut, e.g. the webhook was killed). */
  answered: boolean;
  /** "accepted" when the webhook accepted (whatever the chain did next), else "refused"; none when cut. */
  answer?: "accepted" | "refused";
  signature?: string;
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Records every execute the operator finishes, as the `onOutcome` hook of the operator simulator. */
export function swapCallRecorder(): { calls: SwapCall[]; onOutcome: NonNullable<ExecuteDeps["onOutcome"]> } {
  const calls: SwapCall[] = [];
  return {
    calls,
    onOutcome: (order, result) => {
      const cut =
        result.status === "Failed" &&
        result.code === ExecuteCode.RFQ_UNKNOWN &&
        (result.error ?? "").startsWith("maker /swap: ");
      const called = !(result.status === "Failed" && result.code === ExecuteCode.RFQ_QUOTE_EXPIRED);
      const refused = result.status === "Failed" && result.code === ExecuteCode.RFQ_SWAP_REJECTED;
      calls.push({
        quoteId: order.quote.quoteId,
        requestId: order.requestId,
        messageHash: sha256(order.built.tx.message.serialize()),
        quotedIn: order.quote.amountIn,
        quotedOut: order.quote.amountOut,
        inputMint: order.intent.inputMint,
        outputMint: order.intent.outputMint,
        called,
        answered: called && !cut,
        ...(called && !cut ? { answer: refused ? ("refused" as const) : ("accepted" as const) } : {}),
        ...(result.signature ? { signature: result.signature } : {}),
      });
    },
  };
}

/** What `waitForQuietJournal` found when it stopped waiting. */
export interface QuietJournal {
  pending: number;
  outbox: number;
  waitedMs: number;
  /** The outbox stream exists (false after a swap phase: not the keys the webhook wrote). */
  found: boolean;
  outboxKey: string;
}

/**
 * Waits until the webhook's fill journal holds no pending fill and its ledger outbox is empty (every
 * decision and settlement written to the ledger). The keys are the webhook's own: compose.ts journals
 * under `redisKeys(file).swap` (`rfq:swap:{fills}:*` by default), not under the bare `redisPrefix`
 * (`prefixOverride`: the override a test composed its service with). An outbox entry a killed writer
 * took and never acknowledged counts until a live writer takes it over (LedgerWriter's `staleMs`,
 * 30 s), and a fill journaled but cut before its send settles only once its blockhash has expired
 * (150 blocks), so this can take a minute after a kill. `found`: the outbox stream exists; false
 * after a swap phase means these are not the keys the webhook wrote.
 */
export async function waitForQuietJournal(
  redisUrl: string,
  file: FileConfig,
  timeoutMs: number,
  prefixOverride?: string,
): Promise<QuietJournal> {
  const redis = redisFromUrl(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const keys = journalKeys(redisKeys(file, prefixOverride).swap);
  const started = Date.now();
  try {
    for (;;) {
      const [pending, outbox] = await Promise.all([redis.hlen(keys.pending), redis.xlen(keys.ledger)]);
      const waitedMs = Date.now() - started;
      if ((pending === 0 && outbox === 0) || waitedMs > timeoutMs)
        return {
          pending,
          outbox,
          waitedMs,
          found: (await redis.exists(keys.ledger)) === 1,
          outboxKey: keys.ledger,
        };
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    redis.disconnect();
  }
}

interface ChainFill {
  signature: string;
  messageHash: string;
  inputMint: string;
  outputMint: string;
  inputAmount: bigint;
  outputAmount: bigint;
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** The maker's fills that landed without error, read from the chain's own transactions. */
export async function chainFills(chainUrl: string, maker: string): Promise<ChainFill[]> {
  const sigs = await rpc<{ signature: string; err: unknown }[]>(chainUrl, "getSignaturesForAddress", [
    maker,
    { limit: 1000 },
  ]);
  const out: ChainFill[] = [];
  for (const s of sigs) {
    if (s.err !== null) continue;
    const t = await rpc<{ transaction: [string, string] } | null>(chainUrl, "getTransaction", [
      s.signature,
      { encoding: "base64", maxSupportedTransactionVersion: 0 },
    ]);
    if (!t) continue;
    const tx = VersionedTransaction.deserialize(Buffer.from(t.transaction[0], "base64"));
    if (!(tx.message.staticAccountKeys[0] as PublicKey).equals(new PublicKey(maker))) continue;
    const decoded = decodeFillTransaction(tx);
    if (!decoded.ok) continue;
    const fill = decoded.decoded.fills[0];
    if (!fill?.args || !fill.named) continue;
    out.push({
      signature: s.signature,
      messageHash: sha256(tx.message.serialize()),
      inputMint: fill.named.inputMint.key?.toBase58() ?? "",
      outputMint: fill.named.outputMint.key?.toBase58() ?? "",
      inputAmount: fill.args.inputAmount,
      outputAmount: fill.args.outputAmount,
    });
  }
  return out;
}

export interface LedgerCheck {
  ok: boolean;
  problems: string[];
  figures: {
    swapCalls: number;
    answered: number;
    cut: number;
    cutWithRow: number;
    decisionRows: number;
    chainFills: number;
    ledgerLanded: number;
    /** mint -> [ledger report, chain] in smallest units. */
    feesByMint: Record<string, { report: string; chain: string }>;
    journalWaitMs: number;
  };
}

/**
 * The check itself. `dataDir`: the webhook's DATA_DIR (its embedded ledger, unless DATABASE_URL is set
 * in this process's environment, which the webhook inherited too); `fromMs`: when the run started.
 */
export async function checkLedger(opts: {
  calls: SwapCall[];
  chainUrl: string;
  maker: string;
  dataDir: string;
  configPath: string;
  fromMs: number;
  /** The wait for the journal before the webhook was stopped (waitForQuietJournal). */
  journal: QuietJournal;
  /** How the webhook exited when stopped with SIGTERM (stack.stopWebhook). */
  webhookExit: { code: number | null; signal: string | null };
}): Promise<LedgerCheck> {
  const { journal, webhookExit } = opts;
  const problems: string[] = [];
  if (journal.pending > 0 || journal.outbox > 0)
    problems.push(
      `after ${journal.waitedMs} ms the journal still held ${journal.pending} pending fills, ${journal.outbox} outbox records`,
    );
  if (!journal.found)
    problems.push(
      `no fill journal outbox at ${journal.outboxKey}: the check waited on keys the webhook does not write`,
    );
  if (webhookExit.code !== 0)
    problems.push(
      `the webhook did not shut down cleanly on SIGTERM (exit code ${webhookExit.code}, signal ${webhookExit.signal}): see its log`,
    );
  const where = process.env.DATABASE_URL
    ? { kind: "postgres" as const, url: process.env.DATABASE_URL }
    : { kind: "pglite" as const, dir: join(opts.dataDir, "ledger") };

  // The report first, as an operator runs it (its own process).
  const toIso = new Date(Date.now() + 60_000).toISOString();
  const report = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      join(REPO_ROOT, "src/ops/report-main.ts"),
      "--from",
      new Date(opts.fromMs - 60_000).toISOString(),
      "--to",
      toIso,
      "--format",
      "json",
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: opts.dataDir, CONFIG: opts.configPath, LOG_LEVEL: "silent" },
      encoding: "utf8",
      timeout: 120_000,
    },
  );
  let reportFees: { mint: string; feeOwed: string }[] = [];
  if (report.status !== 0)
    problems.push(`npm run report exited ${report.status}: ${report.stderr.slice(0, 500)}`);
  else
    reportFees = (JSON.parse(report.stdout) as { feesOwedByMint: { mint: string; feeOwed: string }[] })
      .feesOwedByMint;

  const ledger = await openLedger(where);
  let decisions: { quote_id: string; decision: string; tx_signature: string | null }[];
  let landed: { tx_signature: string; quote_id: string }[];
  try {
    decisions = await ledger.db.query(
      "SELECT quote_id, decision, tx_signature FROM swap_decisions WHERE received_at_ms >= $1",
      [opts.fromMs - 60_000],
    );
    landed = await ledger.db.query(
      "SELECT tx_signature, quote_id FROM fills WHERE outcome = 'landed' AND sent_at_ms >= $1",
      [opts.fromMs - 60_000],
    );
  } finally {
    await ledger.db.close();
  }

  const byQuote = new Map<string, typeof decisions>();
  for (const d of decisions) byQuote.set(d.quote_id, [...(byQuote.get(d.quote_id) ?? []), d]);
  for (const [q, rows] of byQuote)
    if (rows.length > 1) problems.push(`quote ${q}: ${rows.length} decision rows`);
  const called = opts.calls.filter((c) => c.called);
  const calledIds = new Set(called.map((c) => c.quoteId));
  for (const q of byQuote.keys())
    if (!calledIds.has(q)) problems.push(`quote ${q}: a decision row for no /swap sent`);

  const fills = await chainFills(opts.chainUrl, opts.maker);
  const chainBySig = new Map(fills.map((f) => [f.signature, f]));
  const chainByMessage = new Map(fills.map((f) => [f.messageHash, f]));
  let cutWithRow = 0;
  for (const c of called) {
    const rows = byQuote.get(c.quoteId) ?? [];
    const onChain = chainByMessage.get(c.messageHash);
    if (c.answered) {
      const row = rows[0];
      if (!row) problems.push(`quote ${c.quoteId}: answered /swap with no decision row`);
      else if ((row.decision === "accepted") !== (c.answer === "accepted"))
        problems.push(`quote ${c.quoteId}: answered ${c.answer}, ledger says ${row.decision}`);
      else if (c.answer === "accepted" && c.signature && row.tx_signature !== c.signature)
        problems.push(`quote ${c.quoteId}: accepted ${c.signature}, ledger row names ${row.tx_signature}`);
    } else {
      if (rows.length > 0) cutWithRow++;
      if (onChain && rows[0]?.decision !== "accepted")
        problems.push(
          `quote ${c.quoteId}: /swap cut, its transaction ${onChain.signature} landed, no acceptance in the ledger`,
        );
    }
  }

  const ledgerSigs = new Set(landed.map((l) => l.tx_signature));
  for (const f of fills)
    if (!ledgerSigs.has(f.signature)) problems.push(`landed on chain, not in the ledger: ${f.signature}`);
  for (const s of ledgerSigs)
    if (!chainBySig.has(s)) problems.push(`landed in the ledger, not on chain: ${s}`);
  if (landed.length !== ledgerSigs.size) problems.push("a landed signature appears twice in the ledger");

  // Fees the chain's fills carry, against the quotes the operator was given.
  const callByMessage = new Map(called.map((c) => [c.messageHash, c]));
  const chainFees = new Map<string, bigint>();
  for (const f of fills) {
    const c = callByMessage.get(f.messageHash);
    if (!c) {
      problems.push(`landed fill ${f.signature} matches no order the operator built`);
      continue;
    }
    const [mint, fee] =
      f.inputAmount > c.quotedIn
        ? [f.inputMint, f.inputAmount - c.quotedIn]
        : [f.outputMint, c.quotedOut - f.outputAmount];
    if (fee > 0n) chainFees.set(mint, (chainFees.get(mint) ?? 0n) + fee);
  }
  const feesByMint: Record<string, { report: string; chain: string }> = {};
  const mints = new Set([...chainFees.keys(), ...reportFees.map((r) => r.mint)]);
  for (const m of mints) {
    const fromReport = BigInt(reportFees.find((r) => r.mint === m)?.feeOwed ?? "0");
    const fromChain = chainFees.get(m) ?? 0n;
    feesByMint[m] = { report: fromReport.toString(), chain: fromChain.toString() };
    if (fromReport !== fromChain)
      problems.push(`fees owed in ${m}: report ${fromReport}, chain ${fromChain}`);
  }

  return {
    ok: problems.length === 0,
    problems,
    figures: {
      swapCalls: called.length,
      answered: called.filter((c) => c.answered).length,
      cut: called.filter((c) => !c.answered).length,
      cutWithRow,
      decisionRows: decisions.length,
      chainFills: fills.length,
      ledgerLanded: landed.length,
      feesByMint,
      journalWaitMs: journal.waitedMs,
    },
  };
}
