/**
 * The signer service judging RFQ v2 swaps (signV2) through its real mutual-TLS listener (throwaway
 * certificates made with openssl), real Redis for its own record, and the webhook's RemoteSigner as
 * the client. Swaps are built as the operator builds them (sandbox/rfq-v2/build.ts) and signed by the
 * taker; the attacks are sent straight to the signer with the level set the webhook "claims", so only
 * the signer's own checks stand between them and the maker's signature. Swaps that load accounts from
 * lookup tables go to a second signer whose SIGNER_RPC_URL is a local chain behind its JSON-RPC
 * server, the tables made there by the lookup table program: the signer reads them itself.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  AddressLookupTableAccount,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  type VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import { type RpcServer, startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { buildV2SwapTransaction, type V2SwapParams } from "../../sandbox/rfq-v2/build.ts";
import { createLookupTable, deactivateLookupTable } from "../../sandbox/rfq-v2/tables.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { creditSol } from "../../src/chain/local/seed.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { AGGREGATOR_PROGRAM } from "../../src/program/rfq-v2.ts";
import { FillRejectCode, SignerRefusalCode, SwapRefusalCode, V2RejectCode } from "../../src/refusal/codes.ts";
import { type SignerService, startSignerService } from "../../src/signer/service/index.ts";
import { SignerRefusal, type V2SignContext } from "../../src/signing/port.ts";
import { RemoteSigner } from "../../src/signing/remote.ts";
import { MINT } from "../support/config.ts";
import { fileRedis, redisUrl } from "../support/redis.ts";
import { makeTestPki } from "../support/tls.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("signer-v2");
const { redis, prefix } = fileRedis();
const maker = Keypair.generate();
const taker = Keypair.generate();
const NOW = Date.parse("2031-03-01T12:00:00Z");
/** 0.001 SOL a lot: at the signer's 150 USDC per SOL, a lot is worth 150,000 USDC atoms. */
const LOT = 1_000_000n;
const FAIR = 150_000n;
const logLines: Record<string, unknown>[] = [];
let service: SignerService;
let client: RemoteSigner;

/**
 * The signer's own price for SOL/USDC is 150 with a 100 bps band; SOL pays out at most 1 SOL a fill;
 * USDC gives away at most 0.05 USDC a day against that price (the loss-limit test, on the maker's bids).
 */
const LIMITS = {
  tokens: {
    SOL: { perFill: "1", perMinute: "100", perDay: "100", lossPerDay: "100" },
    USDC: { perFill: "1000", perMinute: "1000", perDay: "1000", lossPerDay: "0.05" },
  },
  priceSources: { own: { kind: "static", prices: { "SOL/USDC": "150" } } },
  pairs: { "SOL/USDC": { priceSource: "own", bandBps: 100 } },
};

beforeAll(async () => {
  const keyFile = join(dir, "maker.json");
  writeFileSync(keyFile, JSON.stringify(Array.from(maker.secretKey)), { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  const limitsFile = join(dir, "limits.json");
  writeFileSync(limitsFile, JSON.stringify(LIMITS));
  const pki = makeTestPki(dir);
  const log = createLogger("info", {
    write: (s: string) => {
      logLines.push(JSON.parse(s) as Record<string, unknown>);
    },
  });
  service = await startSignerService(
    {
      SIGNER_KEYPAIR: keyFile,
      SIGNER_TLS_LISTEN: "127.0.0.1:0",
      SIGNER_TLS_CERT: pki.serverCert,
      SIGNER_TLS_KEY: pki.serverKey,
      SIGNER_TLS_CLIENT_CA: pki.caCert,
      SIGNER_LIMITS: limitsFile,
      REDIS_URL: redisUrl(),
    },
    { redis, redisPrefix: prefix, log, now: () => NOW },
  );
  client = await RemoteSigner.connect({
    url: `https://127.0.0.1:${service.listeners.tlsPort}`,
    caFile: pki.caCert,
    clientCertFile: pki.clientCert,
    clientKeyFile: pki.clientKey,
  });
}, 30_000);

afterAll(async () => {
  client?.close();
  await service?.close();
});

/** A fresh blockhash per swap, so no two swaps share a message by accident. */
const blockhash = () => Keypair.generate().publicKey.toBase58();

/** A taker's Bid (pays USDC for SOL) on the maker's asks, 20 bps above the signer's mid. */
function params(over: Partial<V2SwapParams> = {}): V2SwapParams {
  return {
    taker: taker.publicKey,
    maker: maker.publicKey,
    baseMint: new PublicKey(MINT.SOL),
    quoteMint: new PublicKey(MINT.USDC),
    baseTokenProgram: new PublicKey(TOKEN_PROGRAM),
    quoteTokenProgram: new PublicKey(TOKEN_PROGRAM),
    takerSide: "bid",
    inAmount: 10n * 150_300n,
    quotedOutAmount: 0n,
    // Within the default level validity (rfqV2.quoteExpirySeconds 10) and the signer's 5 s grace.
    expireAt: BigInt(NOW / 1000 + 15),
    tickSizeQpb: 1n,
    lotSizeBase: LOT,
    levels: [{ pxTicks: 150_300n, qtyLots: 50n }],
    recentBlockhash: blockhash(),
    ...over,
  };
}

/** The level set the webhook says it streamed: the swap's own levels unless told otherwise. */
function claimed(p: V2SwapParams, over: Partial<V2SignContext["claimed"]> = {}): V2SignContext["claimed"] {
  return {
    pair: "SOL/USDC",
    sequence: 41n,
    lotSizeBase: p.lotSizeBase,
    levels: p.levels.map((l) => ({ lots: l.qtyLots, perLot: l.pxTicks * p.tickSizeQpb })),
    validUntilMs: NOW + 15_000,
    ...over,
  };
}

/** Built, optionally tampered, then signed by the taker (as the operator offers it). */
function swap(
  p: V2SwapParams,
  opts: Parameters<typeof buildV2SwapTransaction>[1] & { tamper?: (tx: VersionedTransaction) => void } = {},
): VersionedTransaction {
  const tx = buildV2SwapTransaction(p, opts);
  opts.tamper?.(tx);
  tx.sign([taker]);
  return tx;
}

let uuids = 0;
const uuid = () => `swap-${++uuids}`;

const makerSigned = (tx: VersionedTransaction) => {
  const slot = tx.message.staticAccountKeys.findIndex((k) => k.equals(maker.publicKey));
  const sig = tx.signatures[slot];
  return !!sig && verifyEd25519(tx.message.serialize(), sig, maker.publicKey.toBytes());
};

/** The signer's refusal code; fails the test when it signed, and shows the maker's slot still empty. */
async function refused(
  tx: VersionedTransaction,
  ctx: V2SignContext,
  through: RemoteSigner = client,
): Promise<string> {
  const e = await through.sign(tx, ctx).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, "the swap was signed").toBeInstanceOf(SignerRefusal);
  expect(makerSigned(tx)).toBe(false);
  const refusal = e as SignerRefusal;
  // Every refusal is one log line with its code and the swap id.
  expect(
    logLines.some(
      (l) => l.msg === "signature refused" && l.swapUuid === ctx.swapUuid && l.code === refusal.code,
    ),
  ).toBe(true);
  return refusal.code;
}

/** Points one account of the route instruction at another key (added to the message if new). */
function repoint(position: number, to: PublicKey) {
  return (tx: VersionedTransaction) => {
    const keys = tx.message.staticAccountKeys;
    let idx = keys.findIndex((k) => k.equals(to));
    if (idx < 0) {
      keys.push(to);
      idx = keys.length - 1;
    }
    const route = tx.message.compiledInstructions.find(
      (ix) => keys[ix.programIdIndex]!.toBase58() === AGGREGATOR_PROGRAM,
    )!;
    route.accountKeyIndexes[position] = idx;
  };
}

describe("the signer service signs an honest RFQ v2 swap", () => {
  it("co-signs it in the maker's slot 1 over mutual TLS, logging the swap id, what the maker pays and the claimed sequence", async () => {
    const p = params();
    const tx = swap(p);
    const swapUuid = uuid();
    await client.sign(tx, { swapUuid, claimed: claimed(p) });
    expect(makerSigned(tx)).toBe(true);
    expect(tx.message.staticAccountKeys[1]!.equals(maker.publicKey)).toBe(true);
    const line = logLines.find((l) => l.msg === "signed" && l.swapUuid === swapUuid);
    // 10 lots of 0.001 SOL for 10 x 0.1503 USDC: above the signer's mid, so no loss.
    expect(line).toMatchObject({
      mint: MINT.SOL,
      amount: "10000000",
      received: "1503000",
      pair: "SOL/USDC",
      loss: "0",
      sequence: "41",
      side: "bid",
      tables: 0,
    });
  });

  it("co-signs a two-leg swap (half of the input through an AMM leg), judging what the maker pays for its own half", async () => {
    const p = params({ inAmount: 20n * 150_300n, amm: { bps: 5_000 } });
    const tx = swap(p);
    const swapUuid = uuid();
    await client.sign(tx, { swapUuid, claimed: claimed(p) });
    expect(makerSigned(tx)).toBe(true);
    // The RFQ leg's input is 5,000 bps of the route's: 10 lots, as for the lone leg above.
    const line = logLines.find((l) => l.msg === "signed" && l.swapUuid === swapUuid);
    expect(line).toMatchObject({ mint: MINT.SOL, amount: "10000000", received: "1503000" });
  });

  it("refuses a two-leg swap whose other leg names the maker's account, or carries a step it cannot read", async () => {
    const p = params({ inAmount: 20n * 150_300n, amm: { bps: 5_000 } });
    const makerSol = getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), maker.publicKey);
    // Position 24: the AMM leg's taker source account (the route's 10, the RFQ block's 12, then the AMM's).
    expect(
      await refused(swap(p, { tamper: repoint(24, makerSol) }), { swapUuid: uuid(), claimed: claimed(p) }),
    ).toBe(FillRejectCode.INVALID_MAKER_ACCOUNT_USE);
    const unreadable = swap(p, {
      tamper: (t) => {
        const route = t.message.compiledInstructions.find((ix) => ix.data.length > 80)!;
        const data = Buffer.from(route.data);
        data[data.length - 5] = 154; // the AMM step's tag: not in the published enum
        route.data = data;
      },
    });
    expect(await refused(unreadable, { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      V2RejectCode.V2_ROUTE_UNREADABLE,
    );
  });

  it("co-signs a taker's Ask on the maker's bids inside its band", async () => {
    const p = params({ takerSide: "ask", inAmount: 3n * LOT, levels: [{ pxTicks: 149_700n, qtyLots: 50n }] });
    const tx = swap(p);
    await client.sign(tx, { swapUuid: uuid(), claimed: claimed(p) });
    expect(makerSigned(tx)).toBe(true);
  });
});

describe("attacks on an RFQ v2 swap, refused by the signer with a named code", () => {
  it("refuses levels far off its own price though the webhook claims it streamed them (SIGNER_PRICE_BAND)", async () => {
    // Asks at 120 USDC per SOL against the signer's 150: 20% below, far outside its 100 bps band.
    const p = params({ levels: [{ pxTicks: 120_000n, qtyLots: 50n }], inAmount: 10n * 120_000n });
    expect(await refused(swap(p), { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      SignerRefusalCode.SIGNER_PRICE_BAND,
    );
    // Just outside the band on the maker's bids (it would pay 1.02 x mid): refused too.
    const bids = params({
      takerSide: "ask",
      inAmount: 2n * LOT,
      levels: [{ pxTicks: 153_000n, qtyLots: 5n }],
    });
    expect(await refused(swap(bids), { swapUuid: uuid(), claimed: claimed(bids) })).toBe(
      SignerRefusalCode.SIGNER_PRICE_BAND,
    );
  });

  it("refuses the same swap twice, under its own id or another (SIGNER_ALREADY_SIGNED), and a second message for a signed swap id (SIGNER_QUOTE_ALREADY_SIGNED)", async () => {
    const p = params();
    const swapUuid = uuid();
    const first = swap(p);
    await client.sign(first, { swapUuid, claimed: claimed(p) });
    expect(makerSigned(first)).toBe(true);
    const again = swap(p); // the same message, the maker's slot empty again
    expect(Buffer.from(again.message.serialize())).toEqual(Buffer.from(first.message.serialize()));
    expect(await refused(again, { swapUuid, claimed: claimed(p) })).toBe(
      SignerRefusalCode.SIGNER_ALREADY_SIGNED,
    );
    expect(await refused(swap(p), { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      SignerRefusalCode.SIGNER_ALREADY_SIGNED,
    );
    // Another message (a new blockhash) under the signed id: the first may still land (no chain to ask).
    const other = params({ recentBlockhash: blockhash() });
    expect(await refused(swap(other), { swapUuid, claimed: claimed(other) })).toBe(
      SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED,
    );
  });

  it("refuses a maker token account named by another instruction (INVALID_MAKER_ACCOUNT_USE)", async () => {
    const p = params();
    const makerSol = getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), maker.publicKey);
    // A lamport transfer into the maker's SOL account: harmless-looking, but the program's 6005 rule.
    const tx = swap(p, {
      after: [SystemProgram.transfer({ fromPubkey: taker.publicKey, toPubkey: makerSol, lamports: 1 })],
    });
    expect(await refused(tx, { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    );
  });

  it("refuses an instruction of a program an offered swap never holds (INVALID_PROGRAM), and a look-alike of the RFQ v2 program in the leg (V2_INVALID_ACCOUNTS)", async () => {
    const p = params();
    const stranger = new TransactionInstruction({
      programId: Keypair.generate().publicKey,
      keys: [{ pubkey: taker.publicKey, isSigner: true, isWritable: true }],
      data: Buffer.from([1]),
    });
    expect(await refused(swap(p, { after: [stranger] }), { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      FillRejectCode.INVALID_PROGRAM,
    );
    const q = params();
    const lookAlike = swap(q, { tamper: repoint(10, Keypair.generate().publicKey) });
    expect(await refused(lookAlike, { swapUuid: uuid(), claimed: claimed(q) })).toBe(
      V2RejectCode.V2_INVALID_ACCOUNTS,
    );
  });

  it("refuses a route with a second RFQ leg (V2_ROUTE_NOT_FOUND)", async () => {
    const p = params();
    const tx = swap(p, {
      tamper: (t) => {
        const route = t.message.compiledInstructions.find((ix) => ix.data.length > 80)!;
        // The same step twice: step count 2, the step's bytes repeated.
        const data = Buffer.from(route.data);
        const step = data.subarray(34);
        const twice = Buffer.concat([data.subarray(0, 34), step, step]);
        twice.writeUInt32LE(2, 30);
        route.data = twice;
      },
    });
    expect(await refused(tx, { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      V2RejectCode.V2_ROUTE_NOT_FOUND,
    );
  });

  it("refuses another maker's fill authority in the leg (V2_INVALID_ACCOUNTS) and a swap whose maker slot is another key (V2_INVALID_SIGNERS)", async () => {
    const p = params();
    const other = Keypair.generate().publicKey;
    expect(
      await refused(swap(p, { tamper: repoint(12, other) }), { swapUuid: uuid(), claimed: claimed(p) }),
    ).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    const q = params({ maker: other });
    const e = await client.sign(swap(q), { swapUuid: uuid(), claimed: claimed(q) }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((e as SignerRefusal).code).toBe(V2RejectCode.V2_INVALID_SIGNERS);
  });

  it("refuses a swap that would cross the day's loss limit (SIGNER_LIMIT_LOSS_PER_DAY) after one under it was signed", async () => {
    // The maker's bids at 150.9 (60 bps over its mid, inside the band): it pays 900 USDC atoms a lot
    // beyond the fair value. 40 lots give away 36,000 of the day's 50,000; 20 more would cross it.
    const level = [{ pxTicks: 150_900n, qtyLots: 100n }];
    const under = params({ takerSide: "ask", inAmount: 40n * LOT, levels: level });
    const tx = swap(under);
    const swapUuid = uuid();
    await client.sign(tx, { swapUuid, claimed: claimed(under) });
    expect(makerSigned(tx)).toBe(true);
    expect(logLines.find((l) => l.msg === "signed" && l.swapUuid === swapUuid)).toMatchObject({
      mint: MINT.USDC,
      loss: (40n * (150_900n - FAIR)).toString(),
    });
    const over = params({ takerSide: "ask", inAmount: 20n * LOT, levels: level });
    expect(await refused(swap(over), { swapUuid: uuid(), claimed: claimed(over) })).toBe(
      SignerRefusalCode.SIGNER_LIMIT_LOSS_PER_DAY,
    );
  });

  it("refuses a swap paying out more than the per-fill limit (SIGNER_LIMIT_PER_FILL)", async () => {
    // 1,001 lots of 0.001 SOL: 1.001 SOL, over the 1 SOL per fill.
    const p = params({ inAmount: 1_001n * 150_300n, levels: [{ pxTicks: 150_300n, qtyLots: 2_000n }] });
    expect(await refused(swap(p), { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      SignerRefusalCode.SIGNER_LIMIT_PER_FILL,
    );
  });

  it("refuses a swap outside the level set the webhook claims (SIGNER_V2_LEVELS_NOT_CLAIMED), an expire_at beyond the levels' validity (V2_EXPIRED) and a missing taker signature (SIGNATURE_VERIFICATION_FAILED)", async () => {
    const p = params();
    const better = claimed(p, { levels: [{ lots: 50n, perLot: 150_400n }] });
    expect(await refused(swap(p), { swapUuid: uuid(), claimed: better })).toBe(
      SignerRefusalCode.SIGNER_V2_LEVELS_NOT_CLAIMED,
    );
    // rfqV2.quoteExpirySeconds is 10 (the default): a swap valid for an hour outlives any level set.
    const late = params({ expireAt: BigInt(NOW / 1000 + 3_600) });
    expect(
      await refused(swap(late), {
        swapUuid: uuid(),
        claimed: claimed(late, { validUntilMs: NOW + 3_600_000 }),
      }),
    ).toBe(V2RejectCode.V2_EXPIRED);
    const unsigned = buildV2SwapTransaction(params());
    expect(await refused(unsigned, { swapUuid: uuid(), claimed: claimed(p) })).toBe(
      SwapRefusalCode.SIGNATURE_VERIFICATION_FAILED,
    );
  });
});

/** A signer service like the first one (same key, limits and Redis), reading the chain at `rpcUrl`. */
async function signerWithChain(
  rpcUrl: string,
  name: string,
): Promise<{ service: SignerService; client: RemoteSigner }> {
  const pki = makeTestPki(dir, name);
  const s = await startSignerService(
    {
      SIGNER_KEYPAIR: join(dir, "maker.json"),
      SIGNER_TLS_LISTEN: "127.0.0.1:0",
      SIGNER_TLS_CERT: pki.serverCert,
      SIGNER_TLS_KEY: pki.serverKey,
      SIGNER_TLS_CLIENT_CA: pki.caCert,
      SIGNER_LIMITS: join(dir, "limits.json"),
      SIGNER_RPC_URL: rpcUrl,
      REDIS_URL: redisUrl(),
    },
    {
      redis,
      redisPrefix: prefix,
      log: createLogger("info", {
        write: (line: string) => {
          logLines.push(JSON.parse(line) as Record<string, unknown>);
        },
      }),
      now: () => NOW,
    },
  );
  const c = await RemoteSigner.connect({
    url: `https://127.0.0.1:${s.listeners.tlsPort}`,
    caFile: pki.caCert,
    clientCertFile: pki.clientCert,
    clientKeyFile: pki.clientKey,
  });
  return { service: s, client: c };
}

describe("RFQ v2 swaps that load accounts from lookup tables, resolved by the signer through its own chain reader (SIGNER_RPC_URL)", () => {
  const chain = LocalChain.create();
  const payer = Keypair.generate();
  creditSol(chain, payer.publicKey, 10_000_000_000n);
  const makerSol = getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), maker.publicKey);
  const makerUsdc = getAssociatedTokenAddressSync(new PublicKey(MINT.USDC), maker.publicKey);
  const legExtra = Keypair.generate().publicKey;
  let rpc: RpcServer;
  let withChain: { service: SignerService; client: RemoteSigner };
  /** As the operator's: the maker's token accounts, the mints and the leg's extra account in one table. */
  let table: AddressLookupTableAccount;

  beforeAll(async () => {
    rpc = await startRpcServer(chain, { host: "127.0.0.1", port: 0 });
    table = await createLookupTable(chain, payer, [
      makerSol,
      makerUsdc,
      new PublicKey(MINT.SOL),
      new PublicKey(MINT.USDC),
      legExtra,
    ]);
    withChain = await signerWithChain(rpc.url, "with-chain");
  }, 30_000);

  afterAll(async () => {
    withChain?.client.close();
    await withChain?.service.close();
    await rpc?.close();
  });

  it("signs an honest swap whose maker token accounts, mints and leg account are loaded from a table on the chain", async () => {
    const p = params({ legExtra });
    const tx = swap(p, { lookupTables: [table] });
    // The maker's accounts are not static keys: only the table names them.
    expect(tx.message.addressTableLookups).toHaveLength(1);
    expect(tx.message.staticAccountKeys.some((k) => k.equals(makerSol) || k.equals(makerUsdc))).toBe(false);
    const swapUuid = uuid();
    await withChain.client.sign(tx, { swapUuid, claimed: claimed(p) });
    expect(makerSigned(tx)).toBe(true);
    expect(logLines.find((l) => l.msg === "signed" && l.swapUuid === swapUuid)).toMatchObject({
      mint: MINT.SOL,
      amount: "10000000",
      received: "1503000",
      tables: 1,
    });
  });

  it("refuses a maker token account hidden in the table and named by another instruction (INVALID_MAKER_ACCOUNT_USE)", async () => {
    const p = params({ legExtra });
    // A lamport transfer into the maker's SOL account, which only the table names: read as static
    // keys, the transfer's destination would be invisible.
    const tx = swap(p, {
      lookupTables: [table],
      after: [SystemProgram.transfer({ fromPubkey: taker.publicKey, toPubkey: makerSol, lamports: 1 })],
    });
    expect(tx.message.staticAccountKeys.some((k) => k.equals(makerSol))).toBe(false);
    expect(await refused(tx, { swapUuid: uuid(), claimed: claimed(p) }, withChain.client)).toBe(
      FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    );
  });

  it("refuses a swap loading from a table the chain does not hold (V2_LOOKUP_TABLE_NOT_FOUND), whatever keys the message claims it holds", async () => {
    const p = params({ legExtra });
    const missing = new AddressLookupTableAccount({
      key: Keypair.generate().publicKey,
      state: { ...table.state, addresses: [...table.state.addresses] },
    });
    const ctx = { swapUuid: uuid(), claimed: claimed(p) };
    expect(await refused(swap(p, { lookupTables: [missing] }), ctx, withChain.client)).toBe(
      V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
    );
    expect(logLines.find((l) => l.swapUuid === ctx.swapUuid && l.code)?.context).toContain(
      missing.key.toBase58(),
    );
  });

  it("refuses an index beyond the table's addresses on the chain (V2_LOOKUP_INDEX_OUT_OF_RANGE) and a deactivated table (V2_LOOKUP_TABLE_DEACTIVATED)", async () => {
    const p = params({ legExtra: Keypair.generate().publicKey });
    // The operator's copy of the table holds one address more than the chain's: the leg's account.
    const longer = new AddressLookupTableAccount({
      key: table.key,
      state: { ...table.state, addresses: [...table.state.addresses, p.legExtra!] },
    });
    expect(
      await refused(
        swap(p, { lookupTables: [longer] }),
        { swapUuid: uuid(), claimed: claimed(p) },
        withChain.client,
      ),
    ).toBe(V2RejectCode.V2_LOOKUP_INDEX_OUT_OF_RANGE);
    const q = params({ legExtra });
    const doomed = await createLookupTable(chain, payer, [makerSol, makerUsdc, legExtra]);
    await deactivateLookupTable(chain, payer, doomed);
    expect(
      await refused(
        swap(q, { lookupTables: [doomed] }),
        { swapUuid: uuid(), claimed: claimed(q) },
        withChain.client,
      ),
    ).toBe(V2RejectCode.V2_LOOKUP_TABLE_DEACTIVATED);
  }, 30_000);

  it("refuses a swap with lookup tables when its chain cannot be read (V2_LOOKUP_TABLES_UNRESOLVED)", async () => {
    // SIGNER_RPC_URL on a loopback port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => resolve(p));
      });
    });
    const down = await signerWithChain(`http://127.0.0.1:${port}`, "chain-down");
    try {
      const p = params({ legExtra });
      expect(
        await refused(
          swap(p, { lookupTables: [table] }),
          { swapUuid: uuid(), claimed: claimed(p) },
          down.client,
        ),
      ).toBe(V2RejectCode.V2_LOOKUP_TABLES_UNRESOLVED);
    } finally {
      down.client.close();
      await down.service.close();
    }
  }, 30_000);

  it("without SIGNER_RPC_URL, refuses any swap with lookup tables (SIGNER_V2_LOOKUP_TABLES), naming the missing setting", async () => {
    const p = params({ legExtra });
    const ctx = { swapUuid: uuid(), claimed: claimed(p) };
    expect(await refused(swap(p, { lookupTables: [table] }), ctx)).toBe(
      SignerRefusalCode.SIGNER_V2_LOOKUP_TABLES,
    );
    expect(logLines.find((l) => l.swapUuid === ctx.swapUuid && l.code)?.context).toContain("SIGNER_RPC_URL");
  });
});
