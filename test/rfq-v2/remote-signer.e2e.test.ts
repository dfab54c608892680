/**
 * The RFQ v2 channel signing through the signer service (SIGNER_URL): the channel in this process
 * against the operator's stand-in over gRPC, the signer service on its real Unix socket with its own
 * price (SOL/USDC 180.25, 100 bps band), record in real Redis and chain reader (SIGNER_RPC_URL, the
 * local chain behind its JSON-RPC server), swaps landing on the local chain. The stand-in's swaps load
 * accounts from lookup tables it makes on that chain, as the operator's do: the webhook and the signer
 * each resolve them. An honest swap is signed by the signer and lands; a webhook whose price is far off the signer's
 * streams levels the webhook's own checks accept, and the signer refuses the swap on them: nothing
 * moves on the chain, the reservation is given back and the signer's code is counted. A signer that
 * cannot be reached signs nothing either (the webhook holds no key to fall back on).
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PriceSource } from "../../pricing/interface.ts";
import { StaticPriceSource } from "../../pricing/static.ts";
import { type RpcServer, startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import type { RfqV2StandIn } from "../../sandbox/rfq-v2/server.ts";
import { creditSol, creditToken, tokenBalance } from "../../src/chain/local/seed.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { SignerRefusalCode } from "../../src/refusal/codes.ts";
import { type SignerService, startSignerService } from "../../src/signer/service/index.ts";
import { RemoteSigner } from "../../src/signing/remote.ts";
import { makeWorld } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { fileRedis, redisUrl } from "../support/redis.ts";
import { solUsdcBid, standInOver, startV2Channel, swapsWith, until } from "../support/rfq-v2.ts";
import { testService } from "../support/service.ts";
import { fileTempDir } from "../support/tmp.ts";

const MAKER_ID = "maker-signed-remotely";
const TOKEN = "jwt-for-the-stand-in-0123456789";
const dir = fileTempDir("rfq-v2-remote-signer");
const { redis, prefix } = fileRedis();
const w = makeWorld((f) => ({
  ...f,
  // The default validity (10 s): the signer service reads the same default from its CONFIG.
  rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"] },
}));
const signerLog: Record<string, unknown>[] = [];
let service: SignerService;
let signer: RemoteSigner;
let rpc: RpcServer;

beforeAll(async () => {
  const keyFile = join(dir, "maker.json");
  writeFileSync(keyFile, JSON.stringify(Array.from(w.maker.secretKey)), { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  const limitsFile = join(dir, "limits.json");
  const generous = { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" };
  writeFileSync(
    limitsFile,
    JSON.stringify({
      tokens: { "*": generous },
      priceSources: { own: { kind: "static", prices: { "SOL/USDC": "180.25" } } },
      pairs: { "SOL/USDC": { priceSource: "own", bandBps: 100 } },
    }),
  );
  const socketPath = join(dir, "signer.sock");
  rpc = await startRpcServer(w.chain, { host: "127.0.0.1", port: 0 });
  service = await startSignerService(
    {
      SIGNER_KEYPAIR: keyFile,
      SIGNER_SOCKET: socketPath,
      SIGNER_LIMITS: limitsFile,
      SIGNER_RPC_URL: rpc.url,
      REDIS_URL: redisUrl(),
    },
    {
      redis,
      redisPrefix: prefix,
      log: createLogger("info", { write: (s: string) => void signerLog.push(JSON.parse(s)) }),
    },
  );
  signer = await RemoteSigner.connect({ url: `unix://${socketPath}` });
}, 30_000);

afterAll(async () => {
  signer?.close();
  await service?.close();
  await rpc?.close();
});

const closers = cleanupsAfterEach();

/** The operator's payer for the lookup tables its swaps load from. */
const tablePayer = Keypair.generate();
creditSol(w.chain, tablePayer.publicKey, 1_000_000_000n);

/** The channel with the remote signer; `sources`: the webhook's own prices (the test config's by default). */
async function channel(sources?: ReadonlyMap<string, PriceSource>, through: RemoteSigner = signer) {
  const standIn = standInOver(w.chain, {
    makerId: MAKER_ID,
    token: TOKEN,
    land: true,
    tables: { chain: w.chain, payer: tablePayer },
  });
  const url = await standIn.listen("127.0.0.1", 0);
  closers.push(() => standIn.close());
  w.clock.t = Date.now();
  const { inventory, registry } = await startV2Channel({
    w,
    url,
    makerId: MAKER_ID,
    token: TOKEN,
    closers,
    signer: through,
    ...(sources ? { sources } : {}),
  });
  await until(() => standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
  return { standIn, inventory, registry, live: standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC)! };
}

const sol = new PublicKey(MINT.SOL);
const usdc = new PublicKey(MINT.USDC);
const balances = (owner: PublicKey) => ({
  sol: tokenBalance(w.chain, owner, sol),
  usdc: tokenBalance(w.chain, owner, usdc),
});
function newTaker(): Keypair {
  const taker = Keypair.generate();
  creditSol(w.chain, taker.publicKey, 1_000_000_000n);
  creditToken(w.chain, taker.publicKey, usdc, 500_000_000n);
  return taker;
}
const offer = (standIn: RfqV2StandIn, taker: Keypair, timeoutMs: number) =>
  standIn.offerSwap(solUsdcBid({ makerId: MAKER_ID, taker, inAmount: 100_000_000n, timeoutMs }));

describe("the RFQ v2 channel signing through the signer service", () => {
  it("lands a swap loading its accounts from lookup tables that the signer service resolved itself and signed, moving the balances exactly as the levels say", async () => {
    const c = await channel();
    const taker = newTaker();
    const maker = balances(w.maker.publicKey);
    const r = await offer(c.standIn, taker, 10_000);
    expect(r).toMatchObject({ ok: true });
    // As the operator's: the maker's token accounts are loaded from the stand-in's tables, not static.
    expect(r.offered.message.addressTableLookups).toHaveLength(2);
    const makerSol = getAssociatedTokenAddressSync(sol, w.maker.publicKey);
    const statics = r.offered.message.staticAccountKeys;
    expect(statics.some((k) => k.equals(makerSol) || k.equals(c.standIn.legExtra))).toBe(false);
    const lot = BigInt(c.live.quote.lot_size_base);
    const asks = c.live.quote.ask_levels.map((l) => ({
      perLot: (BigInt(l.price) * lot) / 10n ** 9n,
      lots: BigInt(l.volume) / lot,
    }));
    const walk = sweep("bid", 100_000_000n, asks, lot);
    expect(balances(w.maker.publicKey)).toEqual({ sol: maker.sol - walk.out, usdc: maker.usdc + walk.spent });
    expect(signerLog.find((l) => l.msg === "signed" && l.swapUuid === r.swapUuid)).toMatchObject({
      channel: "rfq-v2",
      amount: walk.out.toString(),
      received: walk.spent.toString(),
      // The signer read both tables itself, through its own SIGNER_RPC_URL.
      tables: 2,
    });
    expect(await swapsWith(c.registry, "signed")).toBe(1);
  });

  it("refuses (SIGNER_PRICE_BAND) a swap on levels a webhook priced 17% under the signer's price: nothing moves, the reservation is given back, the code counted", async () => {
    const source = w.config.file.priceSources.static;
    if (source?.kind !== "static") throw new Error("static prices expected");
    // The webhook's price for SOL/USDC at 150 against the signer's 180.25: its asks give SOL away.
    const cheap = new Map<string, PriceSource>([
      ["static", new StaticPriceSource("static", { ...source.prices, "SOL/USDC": "150" })],
    ]);
    const c = await channel(cheap);
    const taker = newTaker();
    const maker = balances(w.maker.publicKey);
    const before = balances(taker.publicKey);
    const r = await offer(c.standIn, taker, 2_000);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(balances(w.maker.publicKey)).toEqual(maker);
    expect(balances(taker.publicKey)).toEqual(before);
    expect(
      signerLog.some(
        (l) =>
          l.msg === "signature refused" &&
          l.swapUuid === r.swapUuid &&
          l.code === SignerRefusalCode.SIGNER_PRICE_BAND,
      ),
    ).toBe(true);
    expect(await swapsWith(c.registry, SignerRefusalCode.SIGNER_PRICE_BAND)).toBe(1);
    expect(await swapsWith(c.registry, "signed")).toBe(0);
    const open = (await c.inventory.reservations()).filter((x) => x.quoteId === `v2:${r.swapUuid}`);
    expect(open).toEqual([]);
  });

  it("lets a swap pass unsigned when the signer cannot be reached (SIGNATURE_UNAVAILABLE): nothing moves, the reservation is given back", async () => {
    // A second signer service, connected to and then stopped: the webhook holds no key to fall back on.
    const socketPath = join(dir, "gone.sock");
    const keyFile = join(dir, "maker.json");
    const gone = await startSignerService(
      {
        SIGNER_KEYPAIR: keyFile,
        SIGNER_SOCKET: socketPath,
        SIGNER_LIMITS: join(dir, "limits.json"),
        REDIS_URL: redisUrl(),
      },
      { redis, redisPrefix: prefix, log: createLogger("silent") },
    );
    const unreachable = await RemoteSigner.connect({ url: `unix://${socketPath}`, timeoutMs: 500 });
    closers.push(() => unreachable.close());
    await gone.close();
    const c = await channel(undefined, unreachable);
    const taker = newTaker();
    const maker = balances(w.maker.publicKey);
    const r = await offer(c.standIn, taker, 2_000);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(balances(w.maker.publicKey)).toEqual(maker);
    expect(await swapsWith(c.registry, "SIGNATURE_UNAVAILABLE")).toBe(1);
    const open = (await c.inventory.reservations()).filter((x) => x.quoteId === `v2:${r.swapUuid}`);
    expect(open).toEqual([]);
  });
});

describe("the webhook's level validity against the signer service's", () => {
  const compose = (quoteExpirySeconds: number) =>
    testService({
      signer,
      env: {
        // Nothing listens here: the stream reconnects on its own, the composition does not wait for it.
        RFQ_V2_URL: "http://127.0.0.1:9",
        RFQ_V2_MAKER_ID: MAKER_ID,
        RFQ_V2_AUTH_TOKEN: TOKEN,
      },
      vary: (f) => ({ ...f, rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"], quoteExpirySeconds } }),
    });

  it("refuses to start the channel when its levels stay valid longer than the signer signs for (rfqV2.quoteExpirySeconds named, both figures given)", async () => {
    // The signer reads the default validity (10 s) and allows its 5 s grace: 15 s at the most.
    expect(signer.v2ExpirySeconds).toBe(15);
    await expect(compose(16)).rejects.toThrow(
      /^rfqV2\.quoteExpirySeconds: 16 s, longer than the signer service .* signs RFQ v2 swaps for \(15 s with its grace\)/,
    );
  });

  it("starts the channel when the signer signs for as long as the levels stay valid", async () => {
    const service = await compose(15);
    closers.push(() => service.close());
    expect(service).toBeDefined();
  });
});
