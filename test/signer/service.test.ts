/**
 * The signer service (src/signer/service/) through its real listeners: a Unix socket and mutual TLS
 * (throwaway certificates made with openssl), real Redis for the quotes and the signer's own record,
 * and the webhook's RemoteSigner as the client. Fills are built as the operator builds them; the
 * tampered ones are the attack table's (test/fill/tamper.ts), sent straight to the signer so the
 * webhook's own validation never runs.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey, SystemProgram, VersionedTransaction } from "@solana/web3.js";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH, loadConfig, parseFileConfig } from "../../config/load.ts";
import { TOKEN_2022_PROGRAM, type TokenConfig, tokenSchema } from "../../config/schema.ts";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { fillMessageHash } from "../../src/fill/validate.ts";
import { loadIssuer } from "../../src/issuance/issuer.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { opsContext } from "../../src/ops/context.ts";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { FillRejectCode, SignerRefusalCode, SwapRefusalCode } from "../../src/refusal/codes.ts";
import { type SignerService, startSignerService } from "../../src/signer/service/index.ts";
import { parseLimits } from "../../src/signer/service/limits.ts";
import { SignerRefusal } from "../../src/signing/port.ts";
import { RemoteSigner } from "../../src/signing/remote.ts";
import {
  newSmartAccount,
  signAsMembers,
  smartAccountScenarioFromQuote,
  wrapped,
} from "../fill/smart-account-attacks.ts";
import { FILL_ATTACKS, honestFillParams, scenarioFromQuote, signAsTaker, tokenMap } from "../fill/tamper.ts";
import { MINT } from "../support/config.ts";
import { permissionedSetup, TBILL_LIMITS } from "../support/permissioned.ts";
import { storedQuote } from "../support/quotes.ts";
import { clusterNodes, deleteKeys, fileRedis, mastersOf, redisUrl } from "../support/redis.ts";
import { makeTestPki, type TestPki } from "../support/tls.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("signer-service");
const { redis, prefix } = fileRedis();
const store = new RedisQuoteStore(redis, `${prefix}quote:`);
const tokens = tokenMap();
const maker = Keypair.generate();
const taker = Keypair.generate();
const keyFile = join(dir, "maker.json");
const limitsFile = join(dir, "limits.json");
const socketPath = join(dir, "signer.sock");
const logLines: Record<string, unknown>[] = [];
let clock = Date.now();
let service: SignerService;
let pki: TestPki;

/**
 * USDC limits: 5 per fill, 5 per minute, 7 per day; USDT: a loss of at most 1 USDT a day against the
 * signer's own price; everything else generous. The signer's own prices: USDC/USDT at 1.0001 with a
 * 100 bps band (the price-band tests); JUP/USDC, which the rule and limit tests trade at made-up
 * prices, inside a band wide enough for all of them.
 */
const LIMITS = {
  tokens: {
    USDC: { perFill: "5", perMinute: "5", perDay: "7", lossPerDay: "100" },
    USDT: { perFill: "1000", perMinute: "1000", perDay: "1000", lossPerDay: "1" },
    "*": { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" },
  },
  priceSources: { own: { kind: "static", prices: { "USDC/USDT": "1.0001", "JUP/USDC": "1.5" } } },
  pairs: {
    "USDC/USDT": { priceSource: "own", bandBps: 100 },
    "JUP/USDC": { priceSource: "own", bandBps: 10_000 },
  },
};

function writeKey(path: string, key: Keypair, mode = 0o600) {
  writeFileSync(path, JSON.stringify(Array.from(key.secretKey)), { mode });
  chmodSync(path, mode);
}

beforeAll(async () => {
  writeKey(keyFile, maker);
  writeFileSync(limitsFile, JSON.stringify(LIMITS));
  pki = makeTestPki(dir);
  const log = createLogger("info", {
    write: (s: string) => {
      logLines.push(JSON.parse(s) as Record<string, unknown>);
    },
  });
  service = await startSignerService(
    {
      SIGNER_KEYPAIR: keyFile,
      SIGNER_SOCKET: socketPath,
      SIGNER_TLS_LISTEN: "127.0.0.1:0",
      SIGNER_TLS_CERT: pki.serverCert,
      SIGNER_TLS_KEY: pki.serverKey,
      SIGNER_TLS_CLIENT_CA: pki.caCert,
      SIGNER_LIMITS: limitsFile,
      REDIS_URL: redisUrl(),
    },
    { redis, redisPrefix: prefix, log, now: () => clock },
  );
}, 30_000);

afterAll(async () => {
  await service?.close();
});

let seq = 0;
/** A quote stored where the webhook stores it: `amountOut` of `tokenOut` leaves the maker. */
async function quote(
  tokenOut: string = MINT.USDC,
  amountOut = 2_000_000n,
  tokenIn: string = tokenOut === MINT.JUP ? MINT.USDC : MINT.JUP,
  amountIn = 1_000_000n,
) {
  const q = storedQuote({
    quoteId: `signer-q-${++seq}-${Date.now()}`,
    maker: maker.publicKey,
    taker: taker.publicKey,
    tokenIn,
    tokenOut,
    amountIn,
    amountOut,
    quoteType: "exactIn",
    feeBps: 0,
    createdAtMs: Date.now(),
    prioritizationFee: 53_770,
  });
  await store.put(q);
  return q;
}

const blockhash = () => Keypair.generate().publicKey.toBase58();

/** The honest fill of a quote, signed by the taker. */
function honestFill(
  q: Awaited<ReturnType<typeof quote>>,
  opts: { recentBlockhash?: string; computeUnitPrice?: bigint } = {},
): VersionedTransaction {
  const tx = buildFillTransaction(
    honestFillParams(q, {
      maker: maker.publicKey,
      taker: taker.publicKey,
      tokens,
      recentBlockhash: opts.recentBlockhash ?? blockhash(),
      ...(opts.computeUnitPrice !== undefined ? { computeUnitPrice: opts.computeUnitPrice } : {}),
    }),
  );
  return signAsTaker(tx, taker);
}

async function refusal(p: Promise<unknown>, what = "the request"): Promise<SignerRefusal> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, `${what} was signed`).toBeInstanceOf(SignerRefusal);
  return e as SignerRefusal;
}

describe("the signer service over its Unix socket", () => {
  let client: RemoteSigner;
  beforeAll(async () => {
    client = await RemoteSigner.connect({ url: `unix://${socketPath}` });
  });
  afterAll(() => client?.close());

  it("listens on a socket file only its owner may use (mode 0600) and advertises the maker key", () => {
    expect(statSync(socketPath).isSocket()).toBe(true);
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    expect(client.publicKey.toBase58()).toBe(maker.publicKey.toBase58());
  });

  it("co-signs an honest fill: a valid maker signature in slot 0, logged with quoteId and message hash", async () => {
    clock = Date.parse("2030-01-01T00:00:00Z");
    const q = await quote(MINT.JUP, 3_000_000n);
    const tx = honestFill(q);
    await client.sign(tx, { quoteId: q.quoteId });
    expect(verifyEd25519(tx.message.serialize(), tx.signatures[0]!, maker.publicKey.toBytes())).toBe(true);
    const line = logLines.find((l) => l.msg === "signed" && l.quoteId === q.quoteId);
    expect(line).toMatchObject({ quoteId: q.quoteId, messageHash: fillMessageHash(tx) });
  });

  it("co-signs a smart-account fill in the maker's own slot (found by its key, not slot 0)", async () => {
    clock = Date.parse("2030-01-01T00:00:00Z");
    const sa = newSmartAccount();
    const q = storedQuote({
      quoteId: `signer-sa-${++seq}-${Date.now()}`,
      maker: maker.publicKey,
      taker: sa.account.vault,
      tokenIn: MINT.USDC,
      tokenOut: MINT.JUP,
      amountIn: 1_000_000n,
      amountOut: 3_000_000n,
      quoteType: "exactIn",
      feeBps: 0,
      createdAtMs: Date.now(),
      prioritizationFee: 53_770,
    });
    await store.put(q);
    const s = smartAccountScenarioFromQuote(q, {
      ...sa,
      maker: maker.publicKey,
      tokens,
      recentBlockhash: blockhash(),
      nowUnix: BigInt(Math.floor(Date.now() / 1000)),
    });
    const tx = signAsMembers(wrapped(s), sa.members);
    const slot = tx.message.staticAccountKeys.findIndex((k) => k.equals(maker.publicKey));
    expect(slot).toBeGreaterThan(0);
    await client.sign(tx, { quoteId: q.quoteId });
    const bytes = tx.message.serialize();
    expect(verifyEd25519(bytes, tx.signatures[slot]!, maker.publicKey.toBytes())).toBe(true);
    expect(verifyEd25519(bytes, tx.signatures[0]!, sa.account.members[0]!.toBytes())).toBe(true);
  });

  it("refuses every tampered fill of the attack table, sent straight to it, with the rule's code and a log line", async () => {
    const q = await quote(MINT.JUP, 3_000_000n);
    const s = scenarioFromQuote(q, {
      maker: maker.publicKey,
      taker: taker.publicKey,
      tokens,
      recentBlockhash: blockhash(),
      nowUnix: BigInt(Math.floor(Date.now() / 1000)),
    });
    expect(FILL_ATTACKS.length).toBeGreaterThan(20);
    for (const attack of FILL_ATTACKS) {
      const tx = signAsTaker(attack.tamper(s), taker);
      const r = await refusal(client.sign(tx, { quoteId: q.quoteId }), attack.name);
      expect(r.code, attack.name).toBe(attack.code);
      const message = tx.message.serialize();
      expect(tx.signatures.some((sig) => verifyEd25519(message, sig, maker.publicKey.toBytes()))).toBe(false);
    }
    const refusals = logLines.filter((l) => l.msg === "signature refused" && l.quoteId === q.quoteId);
    expect(refusals).toHaveLength(FILL_ATTACKS.length);
    expect(refusals.every((l) => typeof l.code === "string" && typeof l.messageHash === "string")).toBe(true);
  });

  it("judges the fill against the quote it reads itself: a fill for a bigger quote than the stored one is refused", async () => {
    const q = await quote(MINT.JUP, 3_000_000n);
    // The webhook's copy says 4 JUP out; the store says 3: the signer believes the store.
    const inflated = { ...q, response: { ...q.response, amountOut: "4000000" } };
    const tx = honestFill(inflated);
    const r = await refusal(client.sign(tx, { quoteId: q.quoteId }));
    expect(r.code).toBe(FillRejectCode.INVALID_OUTPUT_AMOUNT);
  });

  it("refuses an unknown quote and a fill without the taker's signature", async () => {
    const q = await quote(MINT.JUP, 3_000_000n);
    const unsigned = buildFillTransaction(
      honestFillParams(q, {
        maker: maker.publicKey,
        taker: taker.publicKey,
        tokens,
        recentBlockhash: blockhash(),
      }),
    );
    expect((await refusal(client.sign(unsigned, { quoteId: q.quoteId }))).code).toBe(
      SwapRefusalCode.SIGNATURE_VERIFICATION_FAILED,
    );
    expect((await refusal(client.sign(honestFill(q), { quoteId: "never-quoted" }))).code).toBe(
      SwapRefusalCode.QUOTE_NOT_FOUND,
    );
  });

  it("the ops commands (doctor, registration) with SIGNER_URL take the signer's key and never make one", async () => {
    const dataDir = join(dir, "ops-data");
    const config = loadConfig({
      PAPER: "1",
      SIGNER_URL: `unix://${socketPath}`,
      REDIS_URL: redisUrl(),
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
    });
    const ctx = await opsContext(config);
    try {
      expect(ctx.signer.publicKey.toBase58()).toBe(maker.publicKey.toBase58());
      expect(existsSync(join(dataDir, "maker-keypair.json"))).toBe(false);
    } finally {
      await ctx.close();
    }
  }, 30_000);

  it("refuses a replayed message: the same bytes signed once are never signed again", async () => {
    const q = await quote(MINT.JUP, 3_000_000n);
    const tx = honestFill(q);
    const bytes = tx.serialize();
    await client.sign(tx, { quoteId: q.quoteId });
    const again = VersionedTransaction.deserialize(bytes);
    const r = await refusal(client.sign(again, { quoteId: q.quoteId }));
    expect(r.code).toBe(SignerRefusalCode.SIGNER_ALREADY_SIGNED);
    expect(
      logLines.some((l) => l.code === SignerRefusalCode.SIGNER_ALREADY_SIGNED && l.quoteId === q.quoteId),
    ).toBe(true);
  });

  it("per token: refuses a fill over the per-fill limit, the fill that would cross the minute's limit, then the day's", async () => {
    clock = Date.parse("2030-02-01T10:00:05Z");
    const big = await quote(MINT.USDC, 5_000_001n);
    expect((await refusal(client.sign(honestFill(big), { quoteId: big.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_LIMIT_PER_FILL,
    );
    // 2 + 2 USDC fit in the minute's 5; the third 2 would make 6.
    for (let i = 0; i < 2; i++) {
      const q = await quote(MINT.USDC, 2_000_000n);
      await client.sign(honestFill(q), { quoteId: q.quoteId });
    }
    const third = await quote(MINT.USDC, 2_000_000n);
    const crossing = honestFill(third);
    expect((await refusal(client.sign(crossing, { quoteId: third.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_LIMIT_PER_MINUTE,
    );
    // A refused fill leaves no record: the same message is signed once the next minute begins, which
    // brings the day to 6 of 7; one more 2 USDC would make 8.
    clock = Date.parse("2030-02-01T10:01:00Z");
    await client.sign(crossing, { quoteId: third.quoteId });
    const fourth = await quote(MINT.USDC, 2_000_000n);
    expect((await refusal(client.sign(honestFill(fourth), { quoteId: fourth.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_LIMIT_PER_DAY,
    );
    // Another token has its own windows.
    const jup = await quote(MINT.JUP, 3_000_000n);
    await client.sign(honestFill(jup), { quoteId: jup.quoteId });
  });
});

describe("the signer decides alone: its own price band, one landable fill per quote, its own loss limit", () => {
  let client: RemoteSigner;
  beforeAll(async () => {
    client = await RemoteSigner.connect({ url: `unix://${socketPath}` });
  });
  afterAll(() => client?.close());

  /** The maker takes in `usdcIn` USDC and pays out `usdtOut` USDT (smallest units). */
  const buysUsdc = (usdcIn: bigint, usdtOut: bigint) => quote(MINT.USDT, usdtOut, MINT.USDC, usdcIn);
  const signedByMaker = (tx: VersionedTransaction) =>
    tx.signatures.some((sig) => verifyEd25519(tx.message.serialize(), sig, maker.publicKey.toBytes()));

  it("refuses a quote a compromised webhook made more generous in the store (amountOut rewritten with KEEPTTL): SIGNER_PRICE_BAND", async () => {
    clock = Date.parse("2030-03-01T00:00:00Z");
    // Control: the honest quote, 100 USDC for 100 USDT (better than the signer's 1.0001), is signed.
    const honest = await buysUsdc(100_000_000n, 100_000_000n);
    const control = honestFill(honest);
    await client.sign(control, { quoteId: honest.quoteId });
    expect(signedByMaker(control)).toBe(true);

    const q = await buysUsdc(100_000_000n, 100_000_000n);
    // What a webhook holding the Redis credentials can do: rewrite the quote, keeping its expiry.
    const key = `${prefix}quote:{${q.quoteId}}:q`;
    const record = JSON.parse((await redis.get(key)) as string) as Record<string, unknown> & {
      response?: { amountOut: string };
    };
    if (record.v === 2) record.amountOut = "150000000";
    else record.response!.amountOut = "150000000";
    const ttl = await redis.pttl(key);
    expect(await redis.set(key, JSON.stringify(record), "KEEPTTL")).toBe("OK");
    expect(await redis.pttl(key)).toBeGreaterThan(0);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(ttl);
    const rewritten = await store.get(q.quoteId);
    expect(rewritten?.response.amountOut).toBe("150000000");

    // The fill of the rewritten quote passes every fill rule against the store; the band refuses it.
    const tx = honestFill(rewritten!);
    const r = await refusal(client.sign(tx, { quoteId: q.quoteId }));
    expect(r.code).toBe(SignerRefusalCode.SIGNER_PRICE_BAND);
    expect(r.context).toContain("USDC/USDT");
    expect(signedByMaker(tx)).toBe(false);
    expect(
      logLines.some(
        (l) =>
          l.code === SignerRefusalCode.SIGNER_PRICE_BAND && l.quoteId === q.quoteId && l.pair === "USDC/USDT",
      ),
    ).toBe(true);
  });

  it("refuses a fill worse for the maker than the band on either side, and signs one inside it", async () => {
    clock = Date.parse("2030-03-01T01:00:00Z");
    // Buying USDC: paying 101.1 USDT for 100 is 1.09% above the signer's 1.0001, over its 100 bps.
    const over = await buysUsdc(100_000_000n, 101_100_000n);
    expect((await refusal(client.sign(honestFill(over), { quoteId: over.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_PRICE_BAND,
    );
    // Selling USDC: 4 USDC for 3.9 USDT is 2.5% below.
    const under = await quote(MINT.USDC, 4_000_000n, MINT.USDT, 3_900_000n);
    expect((await refusal(client.sign(honestFill(under), { quoteId: under.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_PRICE_BAND,
    );
    // 1 USDC for 0.995 USDT is 0.51% below: inside.
    const inside = await quote(MINT.USDC, 1_000_000n, MINT.USDT, 995_000n);
    const tx = honestFill(inside);
    await client.sign(tx, { quoteId: inside.quoteId });
    expect(signedByMaker(tx)).toBe(true);
  });

  it("refuses a pair it has no band for (SIGNER_NO_PRICE_BAND)", async () => {
    const q = await quote(MINT.USDT, 1_000_000n, MINT.JUP, 1_000_000n);
    expect((await refusal(client.sign(honestFill(q), { quoteId: q.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_NO_PRICE_BAND,
    );
  });

  it("counts what each fill gives away beyond its own price against the token's daily loss limit (SIGNER_LIMIT_LOSS_PER_DAY)", async () => {
    clock = Date.parse("2030-03-02T12:00:00Z");
    // 100.5 USDT for 100 USDC: 0.49 USDT beyond the fair 100.01 (1 USDT a day allowed).
    const first = await buysUsdc(100_000_000n, 100_500_000n);
    await client.sign(honestFill(first), { quoteId: first.quoteId });
    // 100.6 for 100 gives away 0.59 more: 1.08 in the day.
    const second = await buysUsdc(100_000_000n, 100_600_000n);
    const crossing = honestFill(second);
    expect((await refusal(client.sign(crossing, { quoteId: second.quoteId }))).code).toBe(
      SignerRefusalCode.SIGNER_LIMIT_LOSS_PER_DAY,
    );
    // A fill at the signer's price or better gives nothing away: still signed.
    const fair = await buysUsdc(100_000_000n, 100_000_000n);
    await client.sign(honestFill(fair), { quoteId: fair.quoteId });
    // The refused fill left no trace: the next UTC day it is signed.
    clock = Date.parse("2030-03-03T00:00:01Z");
    await client.sign(crossing, { quoteId: second.quoteId });
    expect(signedByMaker(crossing)).toBe(true);
  });

  it("refuses a second landable fill of one quote (the same quote, the compute-unit price 1 lower) when it has no chain to tell the first cannot land", async () => {
    clock = Date.parse("2030-03-04T00:00:00Z");
    const q = await buysUsdc(10_000_000n, 10_000_000n);
    await client.sign(honestFill(q), { quoteId: q.quoteId });
    const again = honestFill(q, { computeUnitPrice: BigInt(q.response.prioritizationFeeToUse ?? 0) - 1n });
    const r = await refusal(client.sign(again, { quoteId: q.quoteId }));
    expect(r.code).toBe(SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED);
    expect(r.context).toContain("SIGNER_RPC_URL");
    expect(signedByMaker(again)).toBe(false);
  });

  it("with its own chain reader: signs another message for a quote only once the first one's blockhash has expired", async () => {
    const chain = LocalChain.create({ slotMs: 60_000 });
    const sock = join(dir, "chain.sock");
    const s = await startSignerService(
      { SIGNER_KEYPAIR: keyFile, SIGNER_SOCKET: sock, SIGNER_LIMITS: limitsFile, REDIS_URL: redisUrl() },
      { redis, redisPrefix: prefix, log: createLogger("silent"), now: () => clock, chain },
    );
    const c = await RemoteSigner.connect({ url: `unix://${sock}` });
    try {
      const q = await buysUsdc(10_000_000n, 10_000_000n);
      const first = honestFill(q, { recentBlockhash: (await chain.getLatestBlockhash()).blockhash });
      await c.sign(first, { quoteId: q.quoteId });
      const fee = BigInt(q.response.prioritizationFeeToUse ?? 0);
      chain.advanceBlocks(1);
      const second = honestFill(q, {
        recentBlockhash: (await chain.getLatestBlockhash()).blockhash,
        computeUnitPrice: fee - 1n,
      });
      const r = await refusal(c.sign(second, { quoteId: q.quoteId }));
      expect(r.code).toBe(SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED);
      expect(r.context).toContain("can still land");
      // The first message's blockhash expires: it can no longer land, so the second may be signed.
      chain.advanceBlocks(200);
      expect(await chain.isBlockhashValid(first.message.recentBlockhash)).toBe(false);
      const third = honestFill(q, {
        recentBlockhash: (await chain.getLatestBlockhash()).blockhash,
        computeUnitPrice: fee - 2n,
      });
      await c.sign(third, { quoteId: q.quoteId });
      expect(signedByMaker(third)).toBe(true);
      // ... and now that one holds the quote.
      const fourth = honestFill(q, {
        recentBlockhash: (await chain.getLatestBlockhash()).blockhash,
        computeUnitPrice: fee - 3n,
      });
      expect((await refusal(c.sign(fourth, { quoteId: q.quoteId }))).code).toBe(
        SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED,
      );
    } finally {
      c.close();
      await s.close();
    }
  });
});

describe("the signer service over mutual TLS", () => {
  it("co-signs for a client presenting a certificate from its client CA", async () => {
    const client = await RemoteSigner.connect({
      url: `https://127.0.0.1:${service.listeners.tlsPort}`,
      caFile: pki.caCert,
      clientCertFile: pki.clientCert,
      clientKeyFile: pki.clientKey,
    });
    try {
      expect(client.publicKey.toBase58()).toBe(maker.publicKey.toBase58());
      const q = await quote(MINT.JUP, 3_000_000n);
      const tx = honestFill(q);
      await client.sign(tx, { quoteId: q.quoteId });
      expect(verifyEd25519(tx.message.serialize(), tx.signatures[0]!, maker.publicKey.toBytes())).toBe(true);
    } finally {
      client.close();
    }
  });

  it.each([
    ["no client certificate", () => ({})],
    [
      "a client certificate from another CA",
      () => {
        const other = makeTestPki(dir, "other");
        return { cert: readFileSync(other.clientCert), key: readFileSync(other.clientKey) };
      },
    ],
  ])("refuses a client with %s: no answer is ever given", async (_name, creds) => {
    const answer = await new Promise<string>((resolve) => {
      const socket = tlsConnect({
        host: "127.0.0.1",
        port: service.listeners.tlsPort!,
        ca: readFileSync(pki.caCert),
        ...creds(),
      });
      let got = "";
      socket.on("secureConnect", () => socket.write(`${JSON.stringify({ id: 1, op: "keys" })}\n`));
      socket.on("data", (d) => {
        got += d.toString();
      });
      socket.on("error", () => resolve(`error:${got}`));
      socket.on("close", () => resolve(`closed:${got}`));
    });
    expect(answer).not.toContain("active");
  });
});

describe("the issuer key in the signer (SIGNER_ISSUER_KEYPAIR): it makes the companion mint itself", () => {
  // Burns need the maker key in the webhook: with SIGNER_URL a configuration mints only.
  const setup = permissionedSetup(2, { burnOnSell: false });
  const issuerFile = join(dir, "issuer.json");
  const configFile = join(dir, "issuance-config.json");
  const policyFile = join(dir, "issuance-limits.json");
  const sock = join(dir, "issuer.sock");
  const tip = Keypair.generate().publicKey;
  const holder = setup.holders[0]!;
  let s: SignerService;
  let c: RemoteSigner;
  let issuedTokens: Map<string, TokenConfig>;

  beforeAll(async () => {
    writeKey(issuerFile, setup.issuer);
    const base = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);
    const varied = setup.vary(base);
    writeFileSync(configFile, JSON.stringify(varied));
    issuedTokens = new Map(varied.tokens.map((t) => [t.mint, tokenSchema.parse(t)]));
    writeFileSync(
      policyFile,
      JSON.stringify({
        tokens: {
          "*": { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" },
        },
        priceSources: { own: { kind: "static", prices: { "TBILL/USDC": "1.05" } } },
        pairs: { "TBILL/USDC": { priceSource: "own", bandBps: 100 } },
      }),
    );
    s = await startSignerService(
      {
        SIGNER_KEYPAIR: keyFile,
        SIGNER_ISSUER_KEYPAIR: issuerFile,
        SIGNER_SOCKET: sock,
        SIGNER_LIMITS: policyFile,
        REDIS_URL: redisUrl(),
        CONFIG: configFile,
      },
      { redis, redisPrefix: prefix, log: createLogger("silent"), now: () => clock },
    );
    c = await RemoteSigner.connect({ url: `unix://${sock}` });
  });
  afterAll(async () => {
    c?.close();
    await s?.close();
  });

  /** A buy of `amount` TBILL by `taker` (USDC in at the NAV), stored as the webhook stores it. */
  async function buy(amount: bigint, taker: Keypair = holder, computeUnitPrice?: bigint) {
    const q = storedQuote({
      quoteId: `tbill-${++seq}-${Date.now()}`,
      maker: maker.publicKey,
      taker: taker.publicKey,
      tokenIn: MINT.USDC,
      tokenOut: setup.mint.toBase58(),
      amountIn: (amount * 105n) / 100n,
      amountOut: amount,
      quoteType: "exactIn",
      feeBps: 0,
      createdAtMs: Date.now(),
      prioritizationFee: 53_770,
    });
    await store.put(q);
    const tx = signAsTaker(
      buildFillTransaction(
        honestFillParams(q, {
          maker: maker.publicKey,
          taker: taker.publicKey,
          tokens: issuedTokens,
          recentBlockhash: blockhash(),
          ...(computeUnitPrice === undefined ? {} : { computeUnitPrice }),
        }),
      ),
      taker,
    );
    return { q, tx };
  }
  const companionOf = (quoteId: string, fill: VersionedTransaction) =>
    // The signer works out the need and the maker's account from the fill.
    c.companion({ fill, tipAccount: tip, quoteId });

  it("advertises its issuer key; for a fill it signed, mints exactly the fill's amount into the maker's account, tips, and signs as the issuer", async () => {
    clock = Date.parse("2030-04-01T00:00:00Z");
    expect(c.issuerKey?.toBase58()).toBe(setup.issuer.publicKey.toBase58());
    const { q, tx } = await buy(1_000_000_000n);
    await c.sign(tx, { quoteId: q.quoteId });
    const companion = await companionOf(q.quoteId, tx);
    const keys = companion.message.staticAccountKeys;
    expect(keys[0]!.toBase58()).toBe(setup.issuer.publicKey.toBase58());
    expect(
      verifyEd25519(
        companion.message.serialize(),
        companion.signatures[0]!,
        setup.issuer.publicKey.toBytes(),
      ),
    ).toBe(true);
    expect(companion.message.recentBlockhash).toBe(tx.message.recentBlockhash);
    const mintIx = companion.message.compiledInstructions.find(
      (i) => keys[i.programIdIndex]!.toBase58() === TOKEN_2022_PROGRAM,
    );
    // MintToChecked (14): amount (u64 LE) and decimals, into the maker's TBILL account of the fill.
    expect(mintIx!.data[0]).toBe(14);
    expect(Buffer.from(mintIx!.data).readBigUInt64LE(1)).toBe(1_000_000_000n);
    const makerAta = getAssociatedTokenAddressSync(
      setup.mint,
      maker.publicKey,
      true,
      new PublicKey(TOKEN_2022_PROGRAM),
    );
    expect(keys[mintIx!.accountKeyIndexes[1]!]!.equals(makerAta)).toBe(true);
    const transfer = companion.message.compiledInstructions.find((i) =>
      keys[i.programIdIndex]!.equals(SystemProgram.programId),
    );
    expect(keys[transfer!.accountKeyIndexes[1]!]!.equals(tip)).toBe(true);
    expect(Buffer.from(transfer!.data).readBigUInt64LE(4)).toBe(TBILL_LIMITS.tipLamports);
  });

  it("makes the companion of a raised-fee fill it signed: the fill and its companion are judged by one validation", async () => {
    clock = Date.parse("2030-04-01T00:00:00Z");
    // One micro-lamport above the quoted compute-unit price: inside the default raise cap, so signed.
    const { q, tx } = await buy(10_000_000n, holder, 53_771n);
    await c.sign(tx, { quoteId: q.quoteId });
    const companion = await companionOf(q.quoteId, tx);
    expect(companion.message.staticAccountKeys[0]!.equals(setup.issuer.publicKey)).toBe(true);
  });

  it("refuses a companion for a fill it did not sign for that quote (SIGNER_COMPANION_UNSIGNED_FILL), and a second one for a quote (SIGNER_COMPANION_ALREADY_MADE)", async () => {
    const { q, tx } = await buy(10_000_000n);
    expect((await refusal(companionOf(q.quoteId, tx))).code).toBe(
      SignerRefusalCode.SIGNER_COMPANION_UNSIGNED_FILL,
    );
    await c.sign(tx, { quoteId: q.quoteId });
    await companionOf(q.quoteId, tx);
    expect((await refusal(companionOf(q.quoteId, tx))).code).toBe(
      SignerRefusalCode.SIGNER_COMPANION_ALREADY_MADE,
    );
  });

  it("refuses a taker outside the holder rules the fill itself (HOLDER_NOT_ALLOWED), not only its companion: a fill signed alone would pay a stranger out of held inventory", async () => {
    const { q, tx } = await buy(10_000_000n, taker);
    expect((await refusal(c.sign(tx, { quoteId: q.quoteId }))).code).toBe("HOLDER_NOT_ALLOWED");
    expect((await refusal(companionOf(q.quoteId, tx))).code).toBe(
      SignerRefusalCode.SIGNER_COMPANION_UNSIGNED_FILL,
    );
  });

  it("refuses a fill above the issuer's per-fill cap (ISSUANCE_CAP_EXCEEDED) and makes no companion for it; a fill at the cap is signed and gets one", async () => {
    clock = Date.parse("2030-04-03T00:00:00Z");
    const over = await buy(TBILL_LIMITS.maxPerFill + 1n);
    expect((await refusal(c.sign(over.tx, { quoteId: over.q.quoteId }))).code).toBe("ISSUANCE_CAP_EXCEEDED");
    expect((await refusal(companionOf(over.q.quoteId, over.tx))).code).toBe(
      SignerRefusalCode.SIGNER_COMPANION_UNSIGNED_FILL,
    );
    const at = await buy(TBILL_LIMITS.maxPerFill);
    await c.sign(at.tx, { quoteId: at.q.quoteId });
    expect(
      (await companionOf(at.q.quoteId, at.tx)).message.staticAccountKeys[0]!.equals(setup.issuer.publicKey),
    ).toBe(true);
  });

  it("keeps the daily issuance cap in its own record (ISSUANCE_CAP_EXCEEDED), whatever the webhook's book says", async () => {
    clock = Date.parse("2030-04-02T00:00:00Z");
    // 3,000 TBILL a day: 2,000 + 1,000 fit, 1 more does not.
    for (const amount of [2_000_000_000n, 1_000_000_000n]) {
      const { q, tx } = await buy(amount);
      await c.sign(tx, { quoteId: q.quoteId });
      await companionOf(q.quoteId, tx);
    }
    const { q, tx } = await buy(1_000_000n);
    await c.sign(tx, { quoteId: q.quoteId });
    expect((await refusal(companionOf(q.quoteId, tx))).code).toBe("ISSUANCE_CAP_EXCEEDED");
  });

  it("a webhook with SIGNER_URL refuses ISSUER_KEYPAIR, and a configuration that issues a token needs a signer that holds the issuer key", async () => {
    const env = {
      PAPER: "1",
      SIGNER_URL: `unix://${sock}`,
      REDIS_URL: redisUrl(),
      CONFIG: configFile,
      DATA_DIR: join(dir, "iss-data"),
      LOG_LEVEL: "silent",
    };
    expect(() => loadIssuer(loadConfig({ ...env, ISSUER_KEYPAIR: issuerFile }), c, c)).toThrow(
      "ISSUER_KEYPAIR: not with SIGNER_URL",
    );
    expect(loadIssuer(loadConfig(env), c, c)?.publicKey.toBase58()).toBe(setup.issuer.publicKey.toBase58());
    const keyless = await RemoteSigner.connect({ url: `unix://${socketPath}` });
    try {
      expect(() =>
        loadIssuer(loadConfig({ ...env, SIGNER_URL: `unix://${socketPath}` }), keyless, keyless),
      ).toThrow("holds no issuer key (start it with SIGNER_ISSUER_KEYPAIR)");
    } finally {
      keyless.close();
    }
  });
});

describe("the signer's policy file", () => {
  it("parses the shipped example (config/signer-limits.example.json) against the shipped configuration: a limit per token and a band per pair", () => {
    const config = loadConfig({ DATA_DIR: join(dir, "example-data"), LOG_LEVEL: "silent" });
    const path = "config/signer-limits.example.json";
    const parsed = parseLimits(JSON.parse(readFileSync(path, "utf8")), config.file.tokens, path);
    expect(parsed.limits.size).toBe(config.file.tokens.length);
    expect([...parsed.bands.keys()].sort()).toEqual(
      config.file.pairs.map((p) => `${p.base}/${p.quote}`).sort(),
    );
  });

  it("refuses a token entry without its daily loss limit, and a band naming a source it does not define, naming the entry", () => {
    const tokensOf = loadConfig({ DATA_DIR: join(dir, "example-data"), LOG_LEVEL: "silent" }).file.tokens;
    expect(() =>
      parseLimits({ tokens: { "*": { perFill: "1", perMinute: "1", perDay: "1" } } }, tokensOf, "f.json"),
    ).toThrow("SIGNER_LIMITS: f.json: tokens.*.lossPerDay");
    expect(() =>
      parseLimits(
        { tokens: {}, pairs: { "SOL/USDC": { priceSource: "nowhere", bandBps: 10 } } },
        tokensOf,
        "f.json",
      ),
    ).toThrow("SIGNER_LIMITS: f.json: pairs.SOL/USDC.priceSource: nowhere is not in the file's priceSources");
  });
});

describe("starting the signer", () => {
  const env = () => ({
    SIGNER_KEYPAIR: keyFile,
    SIGNER_SOCKET: join(dir, "other.sock"),
    SIGNER_LIMITS: limitsFile,
    REDIS_URL: redisUrl(),
  });

  it("npm run signer refuses a world-readable keypair file, the chmod in the message (exit 78)", () => {
    const readable = join(dir, "readable.json");
    writeKey(readable, Keypair.generate(), 0o644);
    const r = spawnSync(process.execPath, ["--import", "tsx", "src/signer/main.ts"], {
      env: { ...process.env, ...env(), SIGNER_KEYPAIR: readable },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain(`SIGNER_KEYPAIR: ${readable} is accessible to group or others (mode 0644)`);
    expect(r.stderr).toContain(`fix: chmod 600 ${readable}`);
  });

  it("refuses a group-readable next key of a rotation the same way", async () => {
    const next = join(dir, "next.json");
    writeKey(next, Keypair.generate(), 0o640);
    await expect(startSignerService({ ...env(), SIGNER_NEXT_KEYPAIR: next }, { redis })).rejects.toThrow(
      `fix: chmod 600 ${next}`,
    );
  });

  it("refuses to start without the webhook's Redis, naming every setting that can give it", async () => {
    const { REDIS_URL: _r, ...noRedis } = env();
    await expect(startSignerService(noRedis, { redis })).rejects.toThrow(
      "env: REDIS_URL | REDIS_CLUSTER_NODES | REDIS_SENTINELS: required: the webhook's Redis",
    );
    await expect(
      startSignerService({ ...env(), REDIS_CLUSTER_NODES: "127.0.0.1:7000" }, { redis }),
    ).rejects.toThrow("REDIS_URL, REDIS_CLUSTER_NODES: set only one Redis topology");
  });

  it.skipIf(!clusterNodes())(
    "runs on a Redis Cluster named as the webhook names it (REDIS_CLUSTER_NODES): reads the quote there and keeps its record there",
    async () => {
      const nodes = clusterNodes()!;
      const cluster = { redis: new Cluster(nodes), prefix: `test:${randomUUID()}:` };
      const clusterStore = new RedisQuoteStore(cluster.redis, `${cluster.prefix}quote:`);
      const { REDIS_URL: _r, ...noUrl } = env();
      const sock = join(dir, "cluster.sock");
      const s = await startSignerService(
        {
          ...noUrl,
          SIGNER_SOCKET: sock,
          REDIS_CLUSTER_NODES: nodes.map((n) => `${n.host}:${n.port}`).join(","),
        },
        { redisPrefix: cluster.prefix, log: createLogger("silent") },
      );
      const client = await RemoteSigner.connect({ url: `unix://${sock}` });
      try {
        const q = storedQuote({
          quoteId: `cluster-${Date.now()}`,
          maker: maker.publicKey,
          taker: taker.publicKey,
          tokenIn: MINT.USDC,
          tokenOut: MINT.JUP,
          amountIn: 1_000_000n,
          amountOut: 1_000_000n,
          quoteType: "exactIn",
          feeBps: 0,
          createdAtMs: Date.now(),
        });
        await clusterStore.put(q);
        const tx = honestFill(q);
        const bytes = tx.serialize();
        await client.sign(tx, { quoteId: q.quoteId });
        expect(verifyEd25519(tx.message.serialize(), tx.signatures[0]!, maker.publicKey.toBytes())).toBe(
          true,
        );
        // Its record is on the cluster: the same bytes are refused, and the record key is there.
        const again = VersionedTransaction.deserialize(bytes);
        expect((await refusal(client.sign(again, { quoteId: q.quoteId }))).code).toBe(
          SignerRefusalCode.SIGNER_ALREADY_SIGNED,
        );
        const records = (
          await Promise.all(
            mastersOf(cluster.redis).map((m) => m.keys(`${cluster.prefix}*{signer}:signed:*`)),
          )
        ).flat();
        expect(records).toHaveLength(1);
      } finally {
        client.close();
        await s.close();
        await deleteKeys(cluster.redis, `${cluster.prefix}*`);
        cluster.redis.disconnect();
      }
    },
    30_000,
  );

  it("refuses to start without a listener, and TLS without its three files", async () => {
    const { SIGNER_SOCKET: _s, ...noListener } = env();
    await expect(startSignerService(noListener, { redis })).rejects.toThrow(
      /SIGNER_SOCKET or SIGNER_TLS_LISTEN/,
    );
    await expect(
      startSignerService({ ...noListener, SIGNER_TLS_LISTEN: "127.0.0.1:0" }, { redis }),
    ).rejects.toThrow(/SIGNER_TLS_CERT, SIGNER_TLS_KEY, SIGNER_TLS_CLIENT_CA: required/);
  });

  it("signs with the next key of a rotation when the fill's fee payer is that key, and advertises both", async () => {
    const nextKey = Keypair.generate();
    const next = join(dir, "next-ok.json");
    writeKey(next, nextKey);
    const s = await startSignerService(
      { ...env(), SIGNER_SOCKET: join(dir, "rot.sock"), SIGNER_NEXT_KEYPAIR: next },
      { redis, redisPrefix: prefix, log: createLogger("silent") },
    );
    try {
      expect(s.policy.keys()).toEqual({
        active: maker.publicKey.toBase58(),
        keys: [maker.publicKey.toBase58(), nextKey.publicKey.toBase58()],
        // The default level validity (10 s) and the signer's grace (5 s).
        v2ExpirySeconds: 15,
      });
      const client = await RemoteSigner.connect({ url: `unix://${join(dir, "rot.sock")}` });
      try {
        const q = storedQuote({
          quoteId: `rot-${Date.now()}`,
          maker: nextKey.publicKey,
          taker: taker.publicKey,
          tokenIn: MINT.USDC,
          tokenOut: MINT.JUP,
          amountIn: 1_000_000n,
          amountOut: 1_000_000n,
          quoteType: "exactIn",
          feeBps: 0,
          createdAtMs: Date.now(),
        });
        await store.put(q);
        const tx = signAsTaker(
          buildFillTransaction(
            honestFillParams(q, {
              maker: nextKey.publicKey,
              taker: taker.publicKey,
              tokens,
              recentBlockhash: blockhash(),
            }),
          ),
          taker,
        );
        await client.sign(tx, { quoteId: q.quoteId });
        expect(verifyEd25519(tx.message.serialize(), tx.signatures[0]!, nextKey.publicKey.toBytes())).toBe(
          true,
        );
      } finally {
        client.close();
      }
    } finally {
      await s.close();
    }
  });
});
