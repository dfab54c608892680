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
import { Keypair, VersionedTransaction } from "@solana/web3.js";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../config/load.ts";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { FillRejectCode } from "../../src/fill/codes.ts";
import { fillMessageHash } from "../../src/fill/validate.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { opsContext } from "../../src/ops/context.ts";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { SignerRefusal } from "../../src/signer/index.ts";
import { SignerRefusalCode } from "../../src/signer/protocol.ts";
import { RemoteSigner } from "../../src/signer/remote.ts";
import { type SignerService, startSignerService } from "../../src/signer/service/index.ts";
import {
  newSmartAccount,
  signAsMembers,
  smartAccountScenarioFromQuote,
  wrapped,
} from "../fill/smart-account-attacks.ts";
import { FILL_ATTACKS, honestFillParams, scenarioFromQuote, signAsTaker, tokenMap } from "../fill/tamper.ts";
import { MINT } from "../support/config.ts";
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

/** USDC limits: 5 per fill, 5 per minute, 7 per day; everything else generous. */
const LIMITS = {
  tokens: {
    USDC: { perFill: "5", perMinute: "5", perDay: "7" },
    "*": { perFill: "1000000", perMinute: "1000000", perDay: "1000000" },
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
async function quote(tokenOut: string = MINT.USDC, amountOut = 2_000_000n) {
  const q = storedQuote({
    quoteId: `signer-q-${++seq}-${Date.now()}`,
    maker: maker.publicKey,
    taker: taker.publicKey,
    tokenIn: tokenOut === MINT.JUP ? MINT.USDC : MINT.JUP,
    tokenOut,
    amountIn: 1_000_000n,
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
function honestFill(q: Awaited<ReturnType<typeof quote>>): VersionedTransaction {
  const tx = buildFillTransaction(
    honestFillParams(q, {
      maker: maker.publicKey,
      taker: taker.publicKey,
      tokens,
      recentBlockhash: blockhash(),
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
      SignerRefusalCode.TAKER_SIGNATURE,
    );
    expect((await refusal(client.sign(honestFill(q), { quoteId: "never-quoted" }))).code).toBe(
      SignerRefusalCode.UNKNOWN_QUOTE,
    );
  });

  it("the ops commands (doctor, registration) with SIGNER_URL take the signer's key and never make one", async () => {
    const dataDir = join(dir, "ops-data");
    const config = loadConfig({
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
    expect(r.code).toBe(SignerRefusalCode.ALREADY_SIGNED);
    expect(logLines.some((l) => l.code === SignerRefusalCode.ALREADY_SIGNED && l.quoteId === q.quoteId)).toBe(
      true,
    );
  });

  it("per token: refuses a fill over the per-fill limit, the fill that would cross the minute's limit, then the day's", async () => {
    clock = Date.parse("2030-02-01T10:00:05Z");
    const big = await quote(MINT.USDC, 5_000_001n);
    expect((await refusal(client.sign(honestFill(big), { quoteId: big.quoteId }))).code).toBe(
      SignerRefusalCode.LIMIT_PER_FILL,
    );
    // 2 + 2 USDC fit in the minute's 5; the third 2 would make 6.
    for (let i = 0; i < 2; i++) {
      const q = await quote(MINT.USDC, 2_000_000n);
      await client.sign(honestFill(q), { quoteId: q.quoteId });
    }
    const third = await quote(MINT.USDC, 2_000_000n);
    const crossing = honestFill(third);
    expect((await refusal(client.sign(crossing, { quoteId: third.quoteId }))).code).toBe(
      SignerRefusalCode.LIMIT_PER_MINUTE,
    );
    // A refused fill leaves no record: the same message is signed once the next minute begins, which
    // brings the day to 6 of 7; one more 2 USDC would make 8.
    clock = Date.parse("2030-02-01T10:01:00Z");
    await client.sign(crossing, { quoteId: third.quoteId });
    const fourth = await quote(MINT.USDC, 2_000_000n);
    expect((await refusal(client.sign(honestFill(fourth), { quoteId: fourth.quoteId }))).code).toBe(
      SignerRefusalCode.LIMIT_PER_DAY,
    );
    // Another token has its own windows.
    const jup = await quote(MINT.JUP, 3_000_000n);
    await client.sign(honestFill(jup), { quoteId: jup.quoteId });
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
          SignerRefusalCode.ALREADY_SIGNED,
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
