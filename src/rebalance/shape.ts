/**
 * Before anything is simulated, the order's transaction must have a shape the rebalancer understands:
 * decoded instruction by instruction (src/program/decode.ts), each on the allowlist of the router that
 * quoted it, the maker's accounts writable only where the trade needs them, and nothing that hands an
 * owner or an authority away. The rules are data: one small function per refusal code, in order.
 *
 * Allowlist, per router:
 * - every router: ComputeBudget SetComputeUnitLimit / SetComputeUnitPrice; Associated Token
 *   CreateIdempotent (when the maker pays its rent or owns it, only the maker's own ATA of the order's
 *   input or output mint);
 * - router_2 (the RFQ router): exactly one order-engine `fill`, with the maker as its taker, the order's
 *   counterparty as its maker, the order's mints, and amounts no worse for the maker than the order's;
 * - router_1, router_3, router_4: the aggregator swap programs named for that router in
 *   `rebalance.swapPrograms` (at least one call), nothing else.
 *
 * Never allowed, whatever the router, each with its own code: System Assign / AssignWithSeed /
 * Allocate / AllocateWithSeed (the wallet would stop being a wallet); SPL Token or Token-2022
 * SetAuthority of any kind, Approve / ApproveChecked (someone else could move or close the account
 * later); CloseAccount whose destination is not the maker.
 *
 * What this cannot see: what an allowed program does inside (its CPIs); prove.ts checks the effects
 * after a simulation.
 */
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import type { AccountSnapshot } from "../chain/interface.ts";
import type { SwapOrder } from "../operator-api/wire.ts";
import { type DecodedFillTx, type DecodedInstruction, decodeFillTransaction } from "../program/decode.ts";
import { SYSTEM_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../program/layout.ts";
import type { RefusalCode, Refused } from "../refusal/codes.ts";
import { readTokenAccount } from "./token-account.ts";

/** The shape's verdict: its codes are RebalanceRefusalCode's and the shared ones (src/refusal/codes.ts). */
export type ShapeResult = { ok: true } | Refused;

export interface ShapeInput {
  tx: VersionedTransaction;
  order: SwapOrder;
  maker: PublicKey;
  config: Config;
  /** Every static account key of the message as the chain holds it now (null: absent), in key order. */
  accounts: readonly (AccountSnapshot | null)[];
}

interface Ctx extends ShapeInput {
  decoded: DecodedFillTx;
  me: string;
  /** The maker's ATAs of the order's input and output mints, under either token program. */
  tradeAtas: Set<string>;
}

type Rule = (c: Ctx) => ShapeResult;
const ok: ShapeResult = { ok: true };
const no = (code: RefusalCode, context: string): ShapeResult => ({ ok: false, code, context });

const SYSTEM_ASSIGN = 1;
const SYSTEM_ALLOCATE = 8;
const SYSTEM_ALLOCATE_WITH_SEED = 9;
const SYSTEM_ASSIGN_WITH_SEED = 10;
const TOKEN_APPROVE = 4;
const TOKEN_SET_AUTHORITY = 6;
const TOKEN_CLOSE_ACCOUNT = 9;
const TOKEN_APPROVE_CHECKED = 13;

const isToken = (p: PublicKey) => p.equals(TOKEN_PROGRAM_ID) || p.equals(TOKEN_2022_PROGRAM_ID);
const where = (ix: DecodedInstruction) => `instruction ${ix.position} (${ix.programId.toBase58()})`;

/** System instructions that would make the wallet something other than a plain System account. */
const walletOwner: Rule = (c) => {
  for (const ix of c.decoded.instructions) {
    if (!ix.programId.equals(SYSTEM_PROGRAM_ID) || ix.data.length < 4) continue;
    const tag = Buffer.from(ix.data).readUInt32LE(0);
    const name =
      tag === SYSTEM_ASSIGN
        ? "Assign"
        : tag === SYSTEM_ASSIGN_WITH_SEED
          ? "AssignWithSeed"
          : tag === SYSTEM_ALLOCATE
            ? "Allocate"
            : tag === SYSTEM_ALLOCATE_WITH_SEED
              ? "AllocateWithSeed"
              : undefined;
    if (name)
      return no(
        "REBALANCE_WALLET_OWNER_CHANGED",
        `${where(ix)} is System ${name} of ${ix.accounts[0]?.key?.toBase58() ?? "?"}`,
      );
  }
  return ok;
};

/** SetAuthority of any kind, Approve, ApproveChecked: refused whoever's account it names. */
const authority: Rule = (c) => {
  for (const ix of c.decoded.instructions) {
    if (!isToken(ix.programId)) continue;
    const tag = ix.data[0];
    const name =
      tag === TOKEN_SET_AUTHORITY
        ? "SetAuthority"
        : tag === TOKEN_APPROVE
          ? "Approve"
          : tag === TOKEN_APPROVE_CHECKED
            ? "ApproveChecked"
            : undefined;
    if (name)
      return no(
        "REBALANCE_AUTHORITY_HANDED_AWAY",
        `${where(ix)} is ${name} on ${ix.accounts[0]?.key?.toBase58() ?? "?"}`,
      );
  }
  return ok;
};

const closeToStranger: Rule = (c) => {
  for (const ix of c.decoded.instructions) {
    if (!isToken(ix.programId) || ix.data[0] !== TOKEN_CLOSE_ACCOUNT) continue;
    const dest = ix.accounts[1]?.key?.toBase58();
    if (dest !== c.me)
      return no(
        "REBALANCE_CLOSE_TO_STRANGER",
        `${where(ix)} closes ${ix.accounts[0]?.key?.toBase58() ?? "?"} to ${dest ?? "?"}, not the maker`,
      );
  }
  return ok;
};

/** The programs a router's route must call (at least one) and the only ones it may call. */
function routePrograms(c: Ctx): { names: Map<string, string>; problem?: string } {
  const router = c.order.router;
  // router_2 is judged by its decoded order-engine fill (routeProgram, allowlist), not by program names.
  if (router === "router_2") return { names: new Map() };
  const listed = c.config.file.rebalance.swapPrograms[router] ?? [];
  if (listed.length === 0)
    return {
      names: new Map(),
      problem: `${router} has no swap programs configured (rebalance.swapPrograms.${router})`,
    };
  return { names: new Map(listed.map((p) => [p.programId, p.name])) };
}

const routeProgram: Rule = (c) => {
  const { names, problem } = routePrograms(c);
  if (problem) return no("REBALANCE_ROUTE_PROGRAM_MISSING", problem);
  if (c.order.router === "router_2") {
    if (c.decoded.fills.length !== 1)
      return no(
        "REBALANCE_ROUTE_PROGRAM_MISSING",
        `router_2 needs exactly one order-engine fill; the transaction has ${c.decoded.fills.length}`,
      );
    return ok;
  }
  if (!c.decoded.instructions.some((ix) => names.has(ix.programId.toBase58())))
    return no(
      "REBALANCE_ROUTE_PROGRAM_MISSING",
      `${c.order.router}'s route calls none of its swap programs (${[...names.values()].join(", ")})`,
    );
  return ok;
};

const allowlist: Rule = (c) => {
  const { names } = routePrograms(c);
  for (const ix of c.decoded.instructions) {
    const always = ix.kind === "computeUnitLimit" || ix.kind === "computeUnitPrice";
    if (always || ix.kind === "ataCreateIdempotent") continue;
    if (c.order.router === "router_2" ? ix.kind === "fill" : names.has(ix.programId.toBase58())) continue;
    return no(
      "REBALANCE_INSTRUCTION_NOT_ALLOWED",
      `${where(ix)} (${ix.kind}) is not on ${c.order.router}'s allowlist`,
    );
  }
  return ok;
};

/** router_2: the fill is the order (the maker as taker, the counterparty as maker, mints, amounts). */
const fillAsOrdered: Rule = (c) => {
  if (c.order.router !== "router_2") return ok;
  const fill = c.decoded.fills[0] as (typeof c.decoded.fills)[number];
  const n = fill.named;
  const a = fill.args;
  if (!n || !a)
    return no("REBALANCE_FILL_NOT_AS_ORDERED", `the fill does not decode: ${fill.dataProblem ?? "accounts"}`);
  const k = (r: { key: PublicKey | undefined }) => r.key?.toBase58();
  const wrong =
    k(n.taker) !== c.me
      ? `its taker is ${k(n.taker)}, not this maker`
      : k(n.maker) === c.me || k(n.maker) !== c.order.maker
        ? `its maker is ${k(n.maker)}, not the order's counterparty ${c.order.maker ?? "(none)"}`
        : k(n.inputMint) !== c.order.inputMint || k(n.outputMint) !== c.order.outputMint
          ? `it swaps ${k(n.inputMint)} -> ${k(n.outputMint)}, not the order's mints`
          : a.inputAmount > BigInt(c.order.inAmount)
            ? `it takes ${a.inputAmount}, more than the order's inAmount ${c.order.inAmount}`
            : a.outputAmount < BigInt(c.order.outAmount)
              ? `it delivers ${a.outputAmount}, less than the order's outAmount ${c.order.outAmount}`
              : undefined;
  return wrong ? no("REBALANCE_FILL_NOT_AS_ORDERED", `the order-engine fill: ${wrong}`) : ok;
};

/** An ATA creation may spend the maker's lamports or create a maker account only for the trade's ATAs. */
const ataCreations: Rule = (c) => {
  for (const ix of c.decoded.ataCreations) {
    const n = ix.named;
    if (!n) return no("INVALID_MAKER_ACCOUNT_USE", `${where(ix)}: CreateIdempotent without its six accounts`);
    const payer = n.payer.key?.toBase58();
    const owner = n.owner.key?.toBase58();
    // Stryker disable next-line StringLiteral: lookup tables are refused before (lookupTables), so every account has its key
    const ata = n.ata.key?.toBase58() ?? "?";
    if ((payer === c.me || owner === c.me) && !(owner === c.me && c.tradeAtas.has(ata)))
      return no(
        "INVALID_MAKER_ACCOUNT_USE",
        `${where(ix)} creates ${ata} (owner ${owner}) with the maker ${payer === c.me ? "paying its rent" : "as owner"}: only the maker's own ATA of the order's mints may be`,
      );
  }
  return ok;
};

/**
 * The maker's wallet and token accounts (owned, or under its delegate or close authority) may be
 * writable only as the trade's own accounts: the wallet and its ATAs of the order's two mints.
 */
const writableMakerAccounts: Rule = (c) => {
  const msg = c.tx.message;
  const keys = msg.staticAccountKeys;
  // Stryker disable next-line EqualityOperator: index keys.length is no static key, and isAccountWritable says false for it (lookup tables are refused before)
  for (let i = 0; i < keys.length; i++) {
    if (!msg.isAccountWritable(i)) continue;
    const key = (keys[i] as PublicKey).toBase58();
    if (key === c.me || c.tradeAtas.has(key)) continue;
    const t = readTokenAccount(c.accounts[i] ?? null);
    if (t && (t.owner === c.me || t.delegate === c.me || t.closeAuthority === c.me))
      return no(
        "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
        `the maker's token account ${key} (mint ${t.mint}) is writable, and the order trades neither its mint nor through it`,
      );
  }
  return ok;
};

const makerSigner: Rule = (c) => {
  const msg = c.tx.message;
  const i = msg.staticAccountKeys.findIndex((k) => k.toBase58() === c.me);
  return i >= 0 && i < msg.header.numRequiredSignatures
    ? ok
    : no("REBALANCE_MAKER_NOT_SIGNER", "the maker is not a signer of this transaction");
};

const lookupTables: Rule = (c) =>
  c.decoded.addressTableLookups > 0
    ? no(
        "LOOKUP_TABLES_NOT_SUPPORTED",
        "the transaction loads accounts from lookup tables, which these checks cannot watch",
      )
    : ok;

/** In order: the first refusal wins, so an owner or authority change is named before the allowlist. */
const RULES: readonly Rule[] = [
  lookupTables,
  makerSigner,
  walletOwner,
  authority,
  closeToStranger,
  routeProgram,
  allowlist,
  fillAsOrdered,
  ataCreations,
  writableMakerAccounts,
];

/** Judges the transaction's shape; see the module comment. */
export function checkShape(input: ShapeInput): ShapeResult {
  const d = decodeFillTransaction(input.tx);
  if (!d.ok) return no("MALFORMED_TRANSACTION", d.problem);
  const tradeAtas = new Set<string>();
  for (const mint of [input.order.inputMint, input.order.outputMint]) {
    for (const program of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      tradeAtas.add(
        // Stryker disable next-line BooleanLiteral: the maker signs, so it is on the curve and allowOwnerOffCurve changes nothing
        getAssociatedTokenAddressSync(new PublicKey(mint), input.maker, true, program).toBase58(),
      );
    }
  }
  const c: Ctx = { ...input, decoded: d.decoded, me: input.maker.toBase58(), tradeAtas };
  for (const rule of RULES) {
    const r = rule(c);
    if (!r.ok) return r;
  }
  return ok;
}
