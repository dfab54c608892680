/**
 * The rebalancer against a hostile order API: an HTTP server in this test that answers
 * GET /ultra/v1/order with the sandbox operator's own answer (two makers on one local chain,
 * test/rebalance/support.ts) and then rewrites its transaction, and passes POST /swap/v2/execute
 * through. Every answer is shaped exactly as the operator's (same fields, same encoding, the
 * operator's own transaction bytes as the starting point). Each attack must be refused before the
 * maker signs, under its named code (metrics and log line), with every account of the maker unchanged
 * (wallet and token accounts: lamports, data, hence token amount, owner, delegate, close authority);
 * each hostile transaction is also shown to run when simulated, so the refusal is what stops it.
 * An honest answer from the same server is signed and lands exactly.
 *
 * The configuration names swap programs for router_1 (the order engine and the System program) and
 * router_4 (the order engine and the Token program): a deployment that trusts a program whose calls
 * can do anything. The shape check lets those calls through, so the attacks routed there show that the
 * simulation's account check refuses what the shape check cannot see.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AuthorityType,
  createApproveInstruction,
  createCloseAccountInstruction,
  createSetAuthorityInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  Keypair,
  MessageV0,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { ataFor } from "../../inventory/holdings.ts";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import { HttpOperatorSwapApi } from "../../src/operator-api/http.ts";
import {
  decodeFillData,
  encodeFillData,
  ORDER_ENGINE_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "../../src/program/layout.ts";
import { MINT } from "../support/config.ts";
import { fileRedis } from "../support/redis.ts";
import { rebalancerFor, type TwoMakers, twoMakers } from "./support.ts";

const JUP = new PublicKey(MINT.JUP);
const USDC = new PublicKey(MINT.USDC);
const USDT = new PublicKey(MINT.USDT);
const WSOL = new PublicKey(MINT.SOL);
const SEEDED = 10_000_000n * 1_000_000n;
const BAND = 1_000n * 1_000_000n;

const vary = (f: FileConfig): FileConfig => ({
  ...f,
  rebalance: {
    ...f.rebalance,
    targets: {
      JUP: {
        target: SEEDED.toString(),
        band: BAND.toString(),
        maxTrade: (2_000n * 1_000_000n).toString(),
        against: "USDC",
        maxSlippageBps: 100,
        cooldownMs: 0,
        dailyNotionalUsd: "1000000",
      },
    },
    swapPrograms: {
      router_1: [
        { name: "order engine (test)", programId: ORDER_ENGINE_PROGRAM_ID.toBase58() },
        { name: "System program (test)", programId: SYSTEM_PROGRAM_ID.toBase58() },
      ],
      router_4: [
        { name: "order engine (test)", programId: ORDER_ENGINE_PROGRAM_ID.toBase58() },
        { name: "Token program (test)", programId: TOKEN_PROGRAM_ID.toBase58() },
      ],
    },
  },
});

type Body = Record<string, unknown> & { transaction: string };
interface Ctx {
  a: PublicKey;
  b: PublicKey;
  stranger: PublicKey;
}
type Hostile = (body: Body, ctx: Ctx) => Body;

const redis = fileRedis();
let s: TwoMakers;
let hostile: {
  server: Server;
  url: string;
  rewrite: Hostile | undefined;
  last: Body | undefined;
  /** Runs while the order is being answered (between the rebalancer's plan and its reservation). */
  meanwhile?: (() => Promise<void>) | undefined;
};
let r: ReturnType<typeof rebalancerFor>;
const stranger = Keypair.generate().publicKey;

beforeAll(async () => {
  s = await twoMakers(redis, vary);
  await s.registerB();
  hostile = { server: createServer(), url: "", rewrite: undefined, last: undefined };
  hostile.server.on("request", (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const upstream = await fetch(`${s.op.url}${req.url}`, {
        method: req.method ?? "GET",
        headers: { "content-type": "application/json" },
        ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {}),
      });
      let text = await upstream.text();
      if (req.method === "GET") await hostile.meanwhile?.();
      if (req.method === "GET" && upstream.status === 200 && hostile.rewrite) {
        const body = hostile.rewrite(JSON.parse(text) as Body, {
          a: s.a.maker.publicKey,
          b: s.b.maker.publicKey,
          stranger,
        });
        hostile.last = body;
        text = JSON.stringify(body);
      }
      res.writeHead(upstream.status, { "content-type": "application/json" }).end(text);
    });
  });
  await new Promise<void>((ok) => hostile.server.listen(0, "127.0.0.1", ok));
  hostile.url = `http://127.0.0.1:${(hostile.server.address() as AddressInfo).port}`;
  r = rebalancerFor(s.a, redis, new HttpOperatorSwapApi({ baseUrl: hostile.url, retryPauseMs: 10 }));
});
afterAll(async () => {
  await new Promise((ok) => hostile?.server.close(ok));
  await s?.close();
});

// ---- rewriting the operator's transaction ----

const txOf = (body: Body) => VersionedTransaction.deserialize(Buffer.from(body.transaction, "base64"));
const withTx = (body: Body, tx: VersionedTransaction): Body => ({
  ...body,
  transaction: Buffer.from(tx.serialize()).toString("base64"),
});

/** The message's instructions changed by `edit`, the compute-unit limit raised to room for them. */
function edit(
  body: Body,
  change: (ixs: TransactionInstruction[], ctx: Ctx) => TransactionInstruction[],
  ctx: Ctx,
  payer?: PublicKey,
): Body {
  const msg = TransactionMessage.decompile(txOf(body).message);
  const isLimit = (ix: TransactionInstruction) =>
    ix.programId.equals(ComputeBudgetProgram.programId) && ix.data[0] === 2;
  msg.instructions = change(msg.instructions, ctx).map((ix) =>
    isLimit(ix) ? ComputeBudgetProgram.setComputeUnitLimit({ units: 400_000 }) : ix,
  );
  if (payer) msg.payerKey = payer;
  return withTx(body, new VersionedTransaction(msg.compileToV0Message()));
}

const append =
  (make: (ctx: Ctx) => TransactionInstruction[]): Hostile =>
  (body, ctx) =>
    edit(body, (ixs) => [...ixs, ...make(ctx)], ctx);

const ata = (mint: PublicKey, owner: PublicKey) => getAssociatedTokenAddressSync(mint, owner, true);

const asRouter =
  (router: string, then: Hostile = (b) => b): Hostile =>
  (body, ctx) =>
    then({ ...body, router }, ctx);

/** The fill's arguments changed by `change`. */
const fillArgs =
  (change: (a: NonNullable<ReturnType<typeof decodeFillData>>) => void): Hostile =>
  (body, ctx) =>
    edit(
      body,
      (ixs) =>
        ixs.map((ix) => {
          if (!ix.programId.equals(ORDER_ENGINE_PROGRAM_ID)) return ix;
          const args = decodeFillData(ix.data)!;
          change(args);
          return { ...ix, data: encodeFillData(args) };
        }),
      ctx,
    );

/** One more of the maker's token accounts listed writable in the message, used by no instruction. */
const extraWritable: Hostile = (body, ctx) => {
  const m = txOf(body).message as MessageV0;
  const extra = ata(USDT, ctx.a);
  const at = m.staticAccountKeys.length - m.header.numReadonlyUnsignedAccounts;
  const keys = [...m.staticAccountKeys];
  keys.splice(at, 0, extra);
  const shift = (i: number) => (i >= at ? i + 1 : i);
  const msg = new MessageV0({
    header: m.header,
    staticAccountKeys: keys,
    recentBlockhash: m.recentBlockhash,
    compiledInstructions: m.compiledInstructions.map((ci) => ({
      programIdIndex: shift(ci.programIdIndex),
      accountKeyIndexes: ci.accountKeyIndexes.map(shift),
      data: ci.data,
    })),
    addressTableLookups: [],
  });
  return withTx(body, new VersionedTransaction(msg));
};

/** router_2's swap done with plain token transfers: no order-engine fill at all. */
const plainTransfers: Hostile = (body, ctx) =>
  edit(
    body,
    (ixs) =>
      ixs.flatMap((ix) => {
        if (!ix.programId.equals(ORDER_ENGINE_PROGRAM_ID)) return [ix];
        const args = decodeFillData(ix.data)!;
        return [
          createTransferInstruction(ata(USDC, ctx.a), ata(USDC, ctx.b), ctx.a, args.inputAmount),
          createTransferInstruction(ata(JUP, ctx.b), ata(JUP, ctx.a), ctx.b, args.outputAmount),
        ];
      }),
    ctx,
  );

// ---- the maker's accounts, byte for byte ----

function makerAccounts(): Record<string, string> {
  const a = s.a.maker.publicKey;
  const keys = [a, ...s.a.config.file.tokens.map((t) => ataFor(a, t))];
  return Object.fromEntries(
    keys.map((k) => {
      const acc = s.a.chain.account(k);
      const v = acc
        ? `${acc.owner.toBase58()}|${acc.lamports}|${Buffer.from(acc.data).toString("hex")}`
        : "absent";
      return [k.toBase58(), v];
    }),
  );
}

async function refusals(code: string): Promise<number> {
  const text = await r.metrics.registry.metrics();
  const m = new RegExp(`rfq_rebalance_refusals_total\\{symbol="JUP",code="${code}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

/** A's JUP below its band again: the target moved above the balance. */
async function belowBand<T>(run: () => Promise<T>): Promise<T> {
  const target = s.a.config.file.rebalance.targets.JUP!;
  const saved = target.target;
  target.target = (tokenBalance(s.a.chain, s.a.maker.publicKey, JUP) + (3n * BAND) / 2n).toString();
  try {
    return await run();
  } finally {
    target.target = saved;
  }
}

const ATTACKS: [string, Hostile, string][] = [
  [
    "refuses a gasless order that sends SOL from the maker to a stranger",
    append((c) => [SystemProgram.transfer({ fromPubkey: c.a, toPubkey: c.stranger, lamports: 1_000_000 })]),
    "REBALANCE_INSTRUCTION_NOT_ALLOWED",
  ],
  [
    "refuses a gasless order that sends SOL to a stranger through a configured swap program (after simulating)",
    asRouter(
      "router_1",
      append((c) => [SystemProgram.transfer({ fromPubkey: c.a, toPubkey: c.stranger, lamports: 1_000_000 })]),
    ),
    "REBALANCE_SOL_LEFT_MAKER",
  ],
  [
    "refuses a gasless order that makes the maker pay the network fees (after simulating)",
    (body, ctx) => edit(body, (ixs) => ixs, ctx, ctx.a),
    "REBALANCE_SOL_LEFT_MAKER",
  ],
  [
    "refuses an order that hands the close authority of the maker's wSOL account to a stranger",
    append((c) => [
      createSetAuthorityInstruction(ata(WSOL, c.a), c.a, AuthorityType.CloseAccount, c.stranger),
    ]),
    "REBALANCE_AUTHORITY_HANDED_AWAY",
  ],
  [
    "refuses an order that hands the ownership of the maker's USDC account to a stranger",
    append((c) => [
      createSetAuthorityInstruction(ata(USDC, c.a), c.a, AuthorityType.AccountOwner, c.stranger),
    ]),
    "REBALANCE_AUTHORITY_HANDED_AWAY",
  ],
  [
    "refuses an order that approves a stranger as delegate of the maker's JUP account",
    append((c) => [createApproveInstruction(ata(JUP, c.a), c.stranger, c.a, 1_000_000n)]),
    "REBALANCE_AUTHORITY_HANDED_AWAY",
  ],
  [
    "refuses an order that closes the maker's wSOL account to a stranger",
    append((c) => [createCloseAccountInstruction(ata(WSOL, c.a), c.stranger, c.a)]),
    "REBALANCE_CLOSE_TO_STRANGER",
  ],
  [
    "refuses an order that assigns the maker's wallet to another program",
    append((c) => [SystemProgram.assign({ accountPubkey: c.a, programId: c.stranger })]),
    "REBALANCE_WALLET_OWNER_CHANGED",
  ],
  [
    "refuses an order that lists one more maker token account as writable than the trade needs",
    extraWritable,
    "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
  ],
  [
    "refuses a router_2 order that swaps with plain token transfers and no order-engine fill",
    plainTransfers,
    "REBALANCE_ROUTE_PROGRAM_MISSING",
  ],
  [
    "refuses an order from a router with no swap programs configured",
    asRouter("router_3"),
    "REBALANCE_ROUTE_PROGRAM_MISSING",
  ],
  [
    "refuses an order that also calls a program its router's allowlist does not name",
    asRouter(
      "router_1",
      append((c) => [createTransferInstruction(ata(USDC, c.a), ata(USDC, c.b), c.a, 1n)]),
    ),
    "REBALANCE_INSTRUCTION_NOT_ALLOWED",
  ],
  [
    "refuses an order that also moves another of the maker's tokens (USDT)",
    append((c) => [createTransferInstruction(ata(USDT, c.a), ata(USDT, c.b), c.a, 1_000_000n)]),
    "REBALANCE_INSTRUCTION_NOT_ALLOWED",
  ],
  [
    "refuses an order that moves another of the maker's tokens through a configured swap program",
    asRouter(
      "router_4",
      append((c) => [createTransferInstruction(ata(USDT, c.a), ata(USDT, c.b), c.a, 1_000_000n)]),
    ),
    "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
  ],
  [
    "refuses an order priced under the maker's limit (half the output, maxSlippageBps 100 under its mid), its fill consistent with it",
    (body, ctx) =>
      fillArgs((a) => {
        a.outputAmount /= 2n;
      })({ ...body, outAmount: (BigInt(body.outAmount as string) / 2n).toString() }, ctx),
    "REBALANCE_ORDER_PRICE_BELOW_LIMIT",
  ],
  [
    "refuses a router_2 fill that takes more than inAmount",
    fillArgs((a) => {
      a.inputAmount += 1n;
    }),
    "REBALANCE_FILL_NOT_AS_ORDERED",
  ],
  [
    "refuses an order that takes more than inAmount through a configured swap program (after simulating)",
    asRouter(
      "router_4",
      append((c) => [createTransferInstruction(ata(USDC, c.a), ata(USDC, c.b), c.a, 1_000_000n)]),
    ),
    "REBALANCE_INPUT_EXCEEDED",
  ],
  [
    "refuses a router_2 order whose fill delivers less than outAmount",
    (body) => ({ ...body, outAmount: (BigInt(body.outAmount as string) + 1n).toString() }),
    "REBALANCE_FILL_NOT_AS_ORDERED",
  ],
  [
    "refuses an order that delivers less than outAmount through a configured swap program (after simulating)",
    asRouter("router_4", (body) => ({
      ...body,
      outAmount: (BigInt(body.outAmount as string) + 1n).toString(),
    })),
    "REBALANCE_OUTPUT_BELOW_ORDER",
  ],
];

describe("the rebalancer against a hostile order API", () => {
  it.each(ATTACKS)("%s", async (_name, rewrite, code) => {
    const before = makerAccounts();
    const signed = r.signer.count;
    const counted = await refusals(code);
    hostile.rewrite = rewrite;
    hostile.last = undefined;
    try {
      const report = await belowBand(() => r.rebalancer.runPass());
      expect(report.trades).toHaveLength(1);
      const t = report.trades[0]!;
      expect(t.outcome, t.detail).toBe("refused");
      expect(t.refusal, t.detail).toBe(code);
      expect(t.detail).toMatch(new RegExp(`^${code}: `));
    } finally {
      hostile.rewrite = undefined;
    }
    expect(r.signer.count).toBe(signed);
    expect(makerAccounts()).toEqual(before);
    expect(await refusals(code)).toBe(counted + 1);
    expect(r.lines.at(-1)).toMatchObject({ msg: "rebalance not done", outcome: "refused", refusal: code });
    expect((await s.a.inventory.reservations()).filter((x) => x.quoteId.startsWith("rebalance:"))).toEqual(
      [],
    );
    // The attack was real: the hostile transaction runs when simulated (nothing stopped it but the check).
    const sim = await s.a.chain.simulateUnsigned(txOf(hostile.last!), [s.a.maker.publicKey]);
    expect(sim.ok, sim.ok ? "" : sim.error).toBe(true);
  });

  it("refuses an honest order when a quote's swap claims the USDC it would pay meanwhile (the inventory's own code): nothing signed, the maker's accounts unchanged", async () => {
    const before = makerAccounts();
    const signed = r.signer.count;
    // While the order is answered, a quote's claimed swap takes all the maker can still promise of USDC.
    hostile.meanwhile = async () => {
      hostile.meanwhile = undefined;
      const usdc = s.a.inventory.snapshot().holdings.find((h) => h.mint === MINT.USDC)!;
      const buffer = BigInt(s.a.config.file.tokens.find((t) => t.mint === MINT.USDC)!.safetyBuffer);
      const held = await s.a.inventory.reserve({
        quoteId: "quote-holding-the-usdc",
        mint: MINT.USDC,
        amount: usdc.balance - usdc.reserved - buffer,
        expiresAtMs: Date.now() + 60_000,
      });
      expect(held).toEqual({ ok: true });
    };
    try {
      const report = await belowBand(() => r.rebalancer.runPass());
      expect(report.trades).toHaveLength(1);
      const t = report.trades[0]!;
      expect(t.outcome, t.detail).toBe("refused");
      expect(t.refusal, t.detail).toBe("INVENTORY_INSUFFICIENT");
    } finally {
      hostile.meanwhile = undefined;
      await s.a.inventory.release("quote-holding-the-usdc");
    }
    expect(r.signer.count).toBe(signed);
    expect(makerAccounts()).toEqual(before);
    expect((await s.a.inventory.reservations()).filter((x) => x.quoteId.startsWith("rebalance:"))).toEqual(
      [],
    );
  });

  it("signs an honest order from the same API, and it lands exactly as ordered", async () => {
    const a = s.a.maker.publicKey;
    const before = {
      lamports: s.a.chain.account(a)!.lamports,
      usdc: tokenBalance(s.a.chain, a, USDC),
      jup: tokenBalance(s.a.chain, a, JUP),
      wsol: tokenBalance(s.a.chain, a, WSOL),
      usdt: tokenBalance(s.a.chain, a, USDT),
    };
    const signed = r.signer.count;
    const report = await belowBand(() => r.rebalancer.runPass());
    const t = report.trades[0]!;
    expect(t.outcome, t.detail).toBe("landed");
    expect(t.refusal).toBeUndefined();
    expect(r.signer.count).toBe(signed + 1);
    // Gasless: the maker pays exactly inAmount of USDC, receives exactly outAmount of JUP, and nothing else moves.
    expect({
      lamports: s.a.chain.account(a)!.lamports,
      usdc: tokenBalance(s.a.chain, a, USDC),
      jup: tokenBalance(s.a.chain, a, JUP),
      wsol: tokenBalance(s.a.chain, a, WSOL),
      usdt: tokenBalance(s.a.chain, a, USDT),
    }).toEqual({
      ...before,
      usdc: before.usdc - t.inAmount!,
      jup: before.jup + t.outAmount!,
    });
    expect(r.lines.at(-1)).toMatchObject({ msg: "rebalanced", outcome: "landed", signature: t.signature });
  });
});
