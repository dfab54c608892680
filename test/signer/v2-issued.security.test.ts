/**
 * The signer service judging RFQ v2 swaps of a permissioned token the maker issues (TBILL against
 * USDC, test/support/permissioned.ts, here 2 TBILL per fill and 3 a day) by the rules every signing path
 * shares (src/policy/trade.ts): a hostile webhook sends the swaps straight to the signer, with the
 * level set it "claims", so only the signer's own checks stand between them and the maker's signature.
 * The holder rules hold on both sides (a stranger buying TBILL from the maker's asks, or selling it
 * into its bids), the issuer's per-fill cap on the swap's own walk, and its daily cap in the signer's
 * own record (real Redis), counted once per message: the same message under another swap id is
 * refused and counts nothing again.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../config/schema.ts";
import { buildV2SwapTransaction, type V2SwapParams } from "../../sandbox/rfq-v2/build.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { SignerRefusalCode, SwapRefusalCode } from "../../src/refusal/codes.ts";
import { type SignerService, startSignerService } from "../../src/signer/service/index.ts";
import { SignerRefusal, type V2SignContext } from "../../src/signing/port.ts";
import { RemoteSigner } from "../../src/signing/remote.ts";
import { MINT } from "../support/config.ts";
import { permissionedSetup } from "../support/permissioned.ts";
import { fileRedis, redisUrl } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("signer-v2-issued");
const { redis, prefix } = fileRedis();
const maker = Keypair.generate();
/** 2 TBILL per fill, 3 a day. */
const setup = permissionedSetup(1, { maxPerFill: "2000000", maxPerDay: "3000000" });
const holder = setup.holders[0]!;
const stranger = Keypair.generate();
const NOW = Date.parse("2031-03-02T12:00:00Z");
/** 0.01 TBILL a lot; the signer's own NAV is 1.05 USDC, so a lot is worth 10,500 USDC atoms. */
const LOT = 10_000n;
let service: SignerService;
let client: RemoteSigner;

beforeAll(async () => {
  const keyFile = join(dir, "maker.json");
  writeFileSync(keyFile, JSON.stringify(Array.from(maker.secretKey)), { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  const configFile = join(dir, "config.json");
  const base = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);
  writeFileSync(configFile, JSON.stringify(setup.vary(base)));
  const limitsFile = join(dir, "limits.json");
  const generous = { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" };
  writeFileSync(
    limitsFile,
    JSON.stringify({
      tokens: { "*": generous },
      priceSources: { own: { kind: "static", prices: { "TBILL/USDC": "1.05" } } },
      pairs: { "TBILL/USDC": { priceSource: "own", bandBps: 100 } },
    }),
  );
  const sock = join(dir, "signer.sock");
  service = await startSignerService(
    {
      SIGNER_KEYPAIR: keyFile,
      SIGNER_SOCKET: sock,
      SIGNER_LIMITS: limitsFile,
      REDIS_URL: redisUrl(),
      CONFIG: configFile,
    },
    { redis, redisPrefix: prefix, log: createLogger("silent"), now: () => NOW },
  );
  client = await RemoteSigner.connect({ url: `unix://${sock}` });
}, 30_000);

afterAll(async () => {
  client?.close();
  await service?.close();
});

/** A fresh blockhash per swap, so no two swaps share a message by accident. */
const blockhash = () => Keypair.generate().publicKey.toBase58();

/**
 * `taker` buying `lots` lots of TBILL from the maker's asks (bid, at 1.051) or selling them into its
 * bids (ask, at 1.049): within the signer's band either way.
 */
function params(taker: Keypair, side: "bid" | "ask", lots: bigint): V2SwapParams {
  const perLot = side === "bid" ? 10_510n : 10_490n;
  return {
    taker: taker.publicKey,
    maker: maker.publicKey,
    baseMint: setup.mint,
    quoteMint: new PublicKey(MINT.USDC),
    baseTokenProgram: new PublicKey(TOKEN_2022_PROGRAM),
    quoteTokenProgram: new PublicKey(TOKEN_PROGRAM),
    takerSide: side,
    inAmount: side === "bid" ? lots * perLot : lots * LOT,
    quotedOutAmount: 0n,
    expireAt: BigInt(NOW / 1000 + 5),
    tickSizeQpb: 1n,
    lotSizeBase: LOT,
    levels: [{ pxTicks: perLot, qtyLots: 1_000n }],
    recentBlockhash: blockhash(),
  };
}

const claimed = (p: V2SwapParams): V2SignContext["claimed"] => ({
  pair: "TBILL/USDC",
  sequence: 7n,
  lotSizeBase: p.lotSizeBase,
  levels: p.levels.map((l) => ({ lots: l.qtyLots, perLot: l.pxTicks * p.tickSizeQpb })),
  validUntilMs: NOW + 30_000,
});

function swap(p: V2SwapParams, taker: Keypair): VersionedTransaction {
  const tx = buildV2SwapTransaction(p);
  tx.sign([taker]);
  return tx;
}

let uuids = 0;
const uuid = () => `issued-${++uuids}`;
const makerSigned = (tx: VersionedTransaction) =>
  verifyEd25519(tx.message.serialize(), tx.signatures[1]!, maker.publicKey.toBytes());

/** The signer's refusal code; fails the test when it signed. */
async function refusal(tx: VersionedTransaction, p: V2SwapParams, swapUuid = uuid()): Promise<string> {
  const e = await client.sign(tx, { swapUuid, claimed: claimed(p) }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, "the swap was signed").toBeInstanceOf(SignerRefusal);
  expect(makerSigned(tx)).toBe(false);
  return (e as SignerRefusal).code;
}

describe("the signer service holds the issued token's rules on RFQ v2 swaps (decideV2)", () => {
  it("refuses a stranger buying TBILL from the maker's asks (HOLDER_NOT_ALLOWED, /quote's code)", async () => {
    const p = params(stranger, "bid", 100n);
    expect(await refusal(swap(p, stranger), p)).toBe(SwapRefusalCode.HOLDER_NOT_ALLOWED);
  });

  it("refuses a stranger selling TBILL into the maker's bids (HOLDER_NOT_ALLOWED)", async () => {
    const p = params(stranger, "ask", 100n);
    expect(await refusal(swap(p, stranger), p)).toBe(SwapRefusalCode.HOLDER_NOT_ALLOWED);
  });

  it("refuses a holder's swap above the issuer's per-fill cap (ISSUANCE_CAP_EXCEEDED: 2.5 TBILL against 2)", async () => {
    const p = params(holder, "bid", 250n);
    expect(await refusal(swap(p, holder), p)).toBe(SwapRefusalCode.ISSUANCE_CAP_EXCEEDED);
  });

  it("holds the daily cap in its own record, once per message: 2 TBILL signed, its message again under another id refused (SIGNER_ALREADY_SIGNED) and not counted, 1 more signed, then 1 more refused (ISSUANCE_CAP_EXCEEDED)", async () => {
    const first = params(holder, "bid", 200n);
    const tx = swap(first, holder);
    await client.sign(tx, { swapUuid: uuid(), claimed: claimed(first) });
    expect(makerSigned(tx)).toBe(true);
    // The same message, the maker's slot empty again, under a new swap id.
    expect(await refusal(swap(first, holder), first)).toBe(SignerRefusalCode.SIGNER_ALREADY_SIGNED);
    const second = params(holder, "bid", 100n);
    const tx2 = swap(second, holder);
    await client.sign(tx2, { swapUuid: uuid(), claimed: claimed(second) });
    expect(makerSigned(tx2)).toBe(true);
    const third = params(holder, "bid", 100n);
    expect(await refusal(swap(third, holder), third)).toBe(SwapRefusalCode.ISSUANCE_CAP_EXCEEDED);
  });
});
