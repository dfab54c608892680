/**
 * The RPC reads the swap path makes for every fill (signature statuses, accounts, simulations), as
 * plain JSON-RPC calls whose answers are checked here, field by field, for what RpcChain uses.
 *
 * Why not web3.js' `Connection` for these: it parses lamports as JavaScript numbers, inexact past
 * 2^53 (9,007,199 SOL; the sandbox maker's wrapped SOL holds more), and a signed fill is checked against
 * these balances to the last lamport (`exactLamports` below).
 *
 * The requests are the ones `Connection` sends for the same calls (method, params, commitment and
 * encoding; test/chain/rpc-read.test.ts holds them to it), and an answer that lacks what is used, or
 * has it in another shape, throws naming the method and the field: the caller counts it as a failed
 * call, as it did web3.js' schema errors. Sends stay on `Connection` (their error classes decide
 * whether a transaction may have arrived).
 */
import { PublicKey } from "@solana/web3.js";
import type { AccountSnapshot, SignatureStatus } from "./interface.ts";

/** An answer that is not what the method returns. */
export class RpcAnswerError extends Error {
  constructor(method: string, what: string) {
    super(`${method} answer: ${what}`);
    this.name = "RpcAnswerError";
  }
}

/** A JSON-RPC error answer from the node. */
class RpcNodeError extends Error {
  constructor(
    method: string,
    readonly code: unknown,
    message: string,
  ) {
    super(`${method}: the node answered ${String(code)}: ${message}`);
    this.name = "RpcNodeError";
  }
}

let nextId = 1;

/** The JSON-RPC 2.0 request body for `method` (an id per call, as `Connection` gives one). */
function rpcBody(method: string, params: readonly unknown[]): string {
  return JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params });
}

/**
 * One call: the answer's `result`, unchecked. Throws on a transport failure, an HTTP error status,
 * a body that is not a JSON-RPC answer, and a JSON-RPC error answer. `ms` bounds the whole call.
 */
export async function rpcCall(
  url: string,
  method: string,
  params: readonly unknown[],
  ms: number,
): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: rpcBody(method, params),
    signal: AbortSignal.timeout(ms),
  });
  const text = await res.text();
  if (!res.ok)
    throw new Error(`${method}: HTTP ${res.status} ${res.statusText}: ${text.slice(0, 200)}`.trim());
  let body: unknown;
  try {
    body = JSON.parse(exactLamports(text));
  } catch {
    throw new RpcAnswerError(method, `not JSON: ${text.slice(0, 80)}`);
  }
  if (!isObject(body)) throw new RpcAnswerError(method, "not a JSON-RPC answer object");
  if (body.error !== undefined) {
    const err = isObject(body.error) ? body.error : {};
    const message = typeof err.message === "string" ? err.message : JSON.stringify(body.error);
    throw new RpcNodeError(method, err.code, message);
  }
  if (!("result" in body)) throw new RpcAnswerError(method, "no result");
  return body.result;
}

/**
 * Nodes send lamports as JSON numbers, and past 2^53 a JSON number parses exactly only when a double
 * happens to hold it (the sandbox's maker holds 10,000,000,002,039,280 lamports of wrapped SOL: even,
 * so exact; one lamport more would be rounded). Every `"lamports":` followed by
 * 16 digits or more (1e15 and up; below that every integer is exact) is quoted before parsing, and
 * read back as a string of digits. The match is only ever a key: inside a JSON string a quote is
 * escaped, so `"lamports"` followed by a colon cannot occur there.
 */
function exactLamports(text: string): string {
  return text.includes('"lamports"') ? text.replace(/"lamports"\s*:\s*(\d{16,})/g, '"lamports":"$1"') : text;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `result.value` of an answer in the `{ context, value }` envelope. */
function envelopeValue(method: string, result: unknown): unknown {
  if (!isObject(result) || !("value" in result)) throw new RpcAnswerError(method, "no value");
  return result.value;
}

function slotOf(method: string, field: string, v: unknown): bigint {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    throw new RpcAnswerError(method, `${field} is not a slot: ${JSON.stringify(v)}`);
  return BigInt(v);
}

function arrayOf(method: string, field: string, v: unknown, length?: number): unknown[] {
  if (!Array.isArray(v)) throw new RpcAnswerError(method, `${field} is not an array`);
  if (length !== undefined && v.length !== length)
    throw new RpcAnswerError(method, `${field} has ${v.length} entries for ${length} asked`);
  return v;
}

/** A simulation's error as RpcChain reports it: a string as it is, anything else as JSON. */
function errorText(err: unknown): string {
  return typeof err === "string" ? err : JSON.stringify(err);
}

/**
 * getSignatureStatuses: landed statuses by signature (confirmed or finalized, or failed at any
 * commitment), undefined where the signature is unknown or only processed.
 */
export function statusesOf(result: unknown, asked: number): (SignatureStatus | undefined)[] {
  const m = "getSignatureStatuses";
  return arrayOf(m, "value", envelopeValue(m, result), asked).map((s, i): SignatureStatus | undefined => {
    if (s === null) return undefined;
    if (!isObject(s)) throw new RpcAnswerError(m, `value[${i}] is not a status`);
    const slot = slotOf(m, `value[${i}].slot`, s.slot);
    // As JSON whatever its type, as RpcChain has always reported a landed failure.
    if (s.err !== null && s.err !== undefined) return { state: "failed", error: JSON.stringify(s.err), slot };
    const c = s.confirmationStatus;
    if (c !== undefined && c !== null && typeof c !== "string")
      throw new RpcAnswerError(m, `value[${i}].confirmationStatus is not a string`);
    if (c === "confirmed" || c === "finalized") return { state: "confirmed", slot };
    return undefined; // processed only: not yet final enough to count
  });
}

/**
 * getSignatureStatuses for one signature, as the send path's look-up on every endpoint reads it:
 * known at any commitment ("processed" is already on the chain), and with its error if it failed.
 */
export function statusErrorOf(result: unknown): { found: false } | { found: true; error?: string } {
  const m = "getSignatureStatuses";
  const [s] = arrayOf(m, "value", envelopeValue(m, result), 1);
  if (s === null) return { found: false };
  if (!isObject(s)) throw new RpcAnswerError(m, "value[0] is not a status");
  return s.err !== null && s.err !== undefined
    ? { found: true, error: JSON.stringify(s.err) }
    : { found: true };
}

/** One account in base64 encoding (getAccountInfo, getMultipleAccounts, a simulation's post-state). */
function accountOf(method: string, field: string, a: unknown): AccountSnapshot | null {
  if (a === null) return null;
  if (!isObject(a)) throw new RpcAnswerError(method, `${field} is not an account`);
  if (typeof a.owner !== "string") throw new RpcAnswerError(method, `${field}.owner is not a string`);
  let owner: PublicKey;
  try {
    owner = new PublicKey(a.owner);
  } catch {
    throw new RpcAnswerError(method, `${field}.owner is not a public key: ${a.owner.slice(0, 60)}`);
  }
  const l = a.lamports;
  // A number only where it is exact; a string of digits is one `exactLamports` kept whole.
  const lamports =
    typeof l === "number" && Number.isSafeInteger(l) && l >= 0
      ? BigInt(l)
      : typeof l === "string" && /^\d{1,20}$/.test(l)
        ? BigInt(l)
        : undefined;
  if (lamports === undefined || lamports > 0xffff_ffff_ffff_ffffn)
    throw new RpcAnswerError(method, `${field}.lamports is not an amount: ${JSON.stringify(l)}`);
  if (typeof a.executable !== "boolean")
    throw new RpcAnswerError(method, `${field}.executable is not a boolean`);
  const d = a.data;
  if (!Array.isArray(d) || typeof d[0] !== "string" || d[1] !== "base64")
    throw new RpcAnswerError(method, `${field}.data is not [data, "base64"]`);
  return { owner, lamports, data: Buffer.from(d[0], "base64"), executable: a.executable };
}

/** getMultipleAccounts: the accounts in the order asked, null where one does not exist. */
export function accountsOf(result: unknown, asked: number): (AccountSnapshot | null)[] {
  const m = "getMultipleAccounts";
  return arrayOf(m, "value", envelopeValue(m, result), asked).map((a, i) => accountOf(m, `value[${i}]`, a));
}

/** getAccountInfo: the account, or null where it does not exist. */
export function accountInfoOf(result: unknown): AccountSnapshot | null {
  return accountOf("getAccountInfo", "value", envelopeValue("getAccountInfo", result));
}

/** What a simulation answered: its error (undefined when it ran), logs, units and watched accounts. */
export interface SimulationAnswer {
  error: string | undefined;
  logs: string[];
  unitsConsumed: bigint;
  /** Undefined when the node returned none (none asked, or an older node). */
  accounts: (AccountSnapshot | null)[] | undefined;
}

export function simulationOf(result: unknown): SimulationAnswer {
  const m = "simulateTransaction";
  const v = envelopeValue(m, result);
  if (!isObject(v)) throw new RpcAnswerError(m, "value is not a simulation result");
  let logs: string[] = [];
  if (v.logs !== null && v.logs !== undefined) {
    logs = arrayOf(m, "value.logs", v.logs).map((l, i) => {
      if (typeof l !== "string") throw new RpcAnswerError(m, `value.logs[${i}] is not a string`);
      return l;
    });
  }
  const u = v.unitsConsumed;
  if (u !== undefined && u !== null && (typeof u !== "number" || !Number.isSafeInteger(u) || u < 0))
    throw new RpcAnswerError(m, `value.unitsConsumed is not a count: ${JSON.stringify(u)}`);
  const accounts =
    v.accounts === null || v.accounts === undefined
      ? undefined
      : arrayOf(m, "value.accounts", v.accounts).map((a, i) => accountOf(m, `value.accounts[${i}]`, a));
  if (!("err" in v)) throw new RpcAnswerError(m, "value.err is missing");
  return {
    error: v.err === null ? undefined : errorText(v.err),
    logs,
    unitsConsumed: BigInt(typeof u === "number" ? u : 0),
    accounts,
  };
}
