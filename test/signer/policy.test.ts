/**
 * The signer service's policy (src/signer/service/policy.ts) called directly, without a socket: every
 * refusal of `decide` (v1 fills), `decideV2` (RFQ v2 swaps) and `companion`, as an attack refused with
 * its code and the detail the webhook and the log see, the record's answers (its windows, a second
 * message for a quote, a store that fails) as scripted, and the log line of each signature and refusal.
 * test/signer/service.test.ts and test/signer/v2.test.ts show the same decisions through the service.
 */
import {
  AddressLookupTableAccount,
  Keypair,
  PublicKey,
  TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { afterEach, describe, expect, it } from "vitest";
import type { PriceSource } from "../../pricing/interface.ts";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { buildV2SwapTransaction, type V2SwapParams } from "../../sandbox/rfq-v2/build.ts";
import type { Chain } from "../../src/chain/interface.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { fillMessageHash } from "../../src/fill/validate.ts";
import { createLogger } from "../../src/observability/logger.ts";
import type { QuoteStore, StoredQuote } from "../../src/quote-store/interface.ts";
import {
  FillRejectCode,
  SignerRefusalCode as R,
  SwapRefusalCode,
  V2RejectCode,
} from "../../src/refusal/codes.ts";
import {
  parseLimits,
  SignerIssuanceLedger,
  SignerLedger,
  type SpendResult,
} from "../../src/signer/service/limits.ts";
import {
  type SignDecision,
  SigningPolicy,
  type SigningPolicyOptions,
} from "../../src/signer/service/policy.ts";
import type { ClaimedLevelsWire } from "../../src/signing/protocol.ts";
import { honestFillParams, lighthouseIx, signAsTaker, tokenMap } from "../fill/tamper.ts";
import { MINT, testConfig } from "../support/config.ts";
import { permissionedSetup } from "../support/permissioned.ts";
import { storedQuote } from "../support/quotes.ts";
import { fileRedis } from "../support/redis.ts";

const NOW = Date.parse("2031-03-01T12:00:00Z");
const setup = permissionedSetup(1);
const TBILL = setup.mint.toBase58();
const holder = setup.holders[0] as Keypair;
const config = testConfig({}, setup.vary);
const tokens = tokenMap([
  { mint: TBILL, symbol: "TBILL", decimals: 6, tokenProgram: config.tokensByMint.get(TBILL)?.tokenProgram },
]);
const { redis, prefix } = fileRedis();
const maker = Keypair.generate();
const next = Keypair.generate();
const taker = Keypair.generate();
const stranger = Keypair.generate().publicKey;

/**
 * USDC: 5 per fill; SOL: 1 per fill; TBILL and JUP generous; USDT none. The signer's prices: SOL/USDC
 * 150 (100 bps), JUP/USDC 1.5 and TBILL/USDC 1.05 (bands wide enough for any test price); USDT/USDC
 * names a source without its price.
 */
const FILE = parseLimits(
  {
    tokens: {
      USDC: { perFill: "5", perMinute: "1000", perDay: "1000", lossPerDay: "1000" },
      SOL: { perFill: "1", perMinute: "100", perDay: "100", lossPerDay: "100" },
      JUP: { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" },
      TBILL: { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" },
    },
    priceSources: {
      own: { kind: "static", prices: { "SOL/USDC": "150", "JUP/USDC": "1.5", "TBILL/USDC": "1.05" } },
      empty: { kind: "static", prices: { "USDT/USDC": "1" } },
    },
    pairs: {
      "SOL/USDC": { priceSource: "own", bandBps: 100 },
      "JUP/USDC": { priceSource: "own", bandBps: 10_000 },
      "TBILL/USDC": { priceSource: "own", bandBps: 10_000 },
      "USDT/USDC": { priceSource: "empty", bandBps: 10_000 },
    },
  },
  config.file.tokens,
  "policy.test",
);
const MIDS: Record<string, { num: bigint; den: bigint }> = {
  "SOL/USDC": { num: 150n, den: 1n },
  "JUP/USDC": { num: 3n, den: 2n },
  "TBILL/USDC": { num: 21n, den: 20n },
};
const own: PriceSource = {
  name: "own",
  maxAgeMs: Number.POSITIVE_INFINITY,
  price: (pair) => (MIDS[pair] ? { mid: MIDS[pair], updatedAtMs: NOW } : undefined),
  start: async () => {},
  close: async () => {},
};

/** The record as scripted: the answers queued in `spend` come first, then the real record's. */
class ScriptedLedger extends SignerLedger {
  spend: (SpendResult | Error)[] = [];
  prior: (string | undefined)[] = [];
  override async recordAndSpend(input: Parameters<SignerLedger["recordAndSpend"]>[0]): Promise<SpendResult> {
    const next = this.spend.shift();
    if (next instanceof Error) throw next;
    return next ?? super.recordAndSpend(input);
  }
  override async quoteRecord(quoteId: string) {
    if (this.prior.length) {
      const p = this.prior.shift();
      return p === undefined ? undefined : { messageHash: p, blockhash: "bh" };
    }
    return super.quoteRecord(quoteId);
  }
}

let instances = 0;
/** Every policy's log lines, per test. */
let logs: Record<string, unknown>[][] = [];
/** Refusals made before the message is read, or of a request, name no message. */
const beforeTheMessage = (l: Record<string, unknown>) =>
  l.code === FillRejectCode.MALFORMED_TRANSACTION ||
  l.code === FillRejectCode.MALFORMED_TRANSACTION ||
  l.code === R.SIGNER_BAD_REQUEST ||
  l.context === "this signer holds no issuer key (SIGNER_ISSUER_KEYPAIR)";
afterEach(() => {
  // Every refusal of a message is one log line naming that message by its hash.
  for (const lines of logs)
    for (const l of lines)
      if ((l.msg === "signature refused" || l.msg === "companion refused") && !beforeTheMessage(l))
        expect(l.messageHash, JSON.stringify(l)).toMatch(/^[0-9a-f]{64}$/);
  logs = [];
});
function policyWith(over: Partial<SigningPolicyOptions> = {}) {
  const quotes = new Map<string, StoredQuote>();
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("info", { write: (s: string) => void lines.push(JSON.parse(s)) });
  logs.push(lines);
  const p = `${prefix}${++instances}:`;
  const ledger = new ScriptedLedger(redis, p);
  const storeFails = { on: false };
  const store = {
    get: async (id: string) => {
      if (storeFails.on) throw new Error("store down");
      return quotes.get(id);
    },
  } as unknown as QuoteStore;
  const options: SigningPolicyOptions = {
    config,
    store,
    ledger,
    limits: FILE.limits,
    bands: FILE.bands,
    priceSources: new Map([
      ["own", own],
      ["empty", { ...own, name: "empty", price: () => undefined }],
    ]),
    keys: [maker, next],
    log,
    now: () => NOW,
    ...over,
  };
  const policy = new SigningPolicy(options);
  return { policy, quotes, lines, ledger, storeFails, prefix: p, options };
}

let seq = 0;
/** A quote for `taker` in the map: the maker pays `amountOut` of `tokenOut` for `amountIn` of `tokenIn`. */
function quote(
  quotes: Map<string, StoredQuote>,
  o: {
    tokenIn?: string;
    tokenOut?: string;
    amountIn?: bigint;
    amountOut?: bigint;
    taker?: Keypair;
    maker?: Keypair;
  } = {},
) {
  const q = storedQuote({
    quoteId: `pq-${++seq}`,
    maker: (o.maker ?? maker).publicKey,
    taker: (o.taker ?? taker).publicKey,
    tokenIn: o.tokenIn ?? MINT.JUP,
    tokenOut: o.tokenOut ?? MINT.USDC,
    amountIn: o.amountIn ?? 1_000_000n,
    amountOut: o.amountOut ?? 2_000_000n,
    quoteType: "exactIn",
    feeBps: 0,
    createdAtMs: NOW,
    prioritizationFee: 53_770,
  });
  quotes.set(q.quoteId, q);
  return q;
}
/** The honest fill of `q`, signed by its taker unless told. */
function fillOf(
  q: StoredQuote,
  o: {
    signed?: boolean;
    taker?: Keypair;
    maker?: Keypair;
    blockhash?: string;
    expireLater?: bigint;
    lighthouse?: TransactionInstruction[];
  } = {},
) {
  const t = o.taker ?? taker;
  const params = honestFillParams(q, {
    maker: (o.maker ?? maker).publicKey,
    taker: t.publicKey,
    tokens,
    recentBlockhash: o.blockhash ?? Keypair.generate().publicKey.toBase58(),
    ...(o.lighthouse ? { lighthouseInstructions: o.lighthouse } : {}),
  });
  params.expireAt += o.expireLater ?? 0n;
  const tx = buildFillTransaction(params);
  if (o.signed !== false) signAsTaker(tx, t);
  return tx;
}
const b64 = (tx: VersionedTransaction) => Buffer.from(tx.serialize()).toString("base64");
const no = (code: string, context: string) => ({ ok: false, code, context });
const refusedLine = (lines: Record<string, unknown>[], code: string) =>
  lines.find((l) => l.code === code && (l.msg === "signature refused" || l.msg === "companion refused"));

describe("SigningPolicy.keys", () => {
  it("advertises the active key first, every key it signs for, and its issuer key only when it holds one", () => {
    expect(policyWith().policy.keys()).toStrictEqual({
      active: maker.publicKey.toBase58(),
      keys: [maker.publicKey.toBase58(), next.publicKey.toBase58()],
      v2ExpirySeconds: 15,
    });
    const issuer = { keypair: setup.issuer, ledger: new SignerIssuanceLedger(redis, `${prefix}iss:`) };
    expect(policyWith({ issuer }).policy.keys().issuer).toBe(setup.issuer.publicKey.toBase58());
  });
  it("refuses to start without a key", () => {
    expect(() => policyWith({ keys: [] })).toThrow("the signer needs at least one key");
  });
});

describe("SigningPolicy.decide (a v1 fill)", () => {
  it("signs an honest fill with the key the fill names, answering its message hash, and logs it by quote", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    const tx = fillOf(q);
    const d = await w.policy.decide(q.quoteId, b64(tx));
    expect(d).toMatchObject({
      ok: true,
      maker: maker.publicKey.toBase58(),
      messageHash: fillMessageHash(tx),
    });
    if (!d.ok) return;
    expect(verifyEd25519(tx.message.serialize(), bs58.decode(d.signature), maker.publicKey.toBytes())).toBe(
      true,
    );
    expect(w.lines.find((l) => l.msg === "signed")).toMatchObject({
      quoteId: q.quoteId,
      messageHash: d.messageHash,
      maker: maker.publicKey.toBase58(),
      mint: MINT.USDC,
      amount: "2000000",
      pair: "JUP/USDC",
      mid: "3/2",
      // 2 USDC for 1 JUP at the signer's 1.5: 0.5 USDC beyond its price.
      loss: "500000",
    });
  });

  it("signs with the next key of a rotation when the fill names it", async () => {
    const w = policyWith();
    const q = quote(w.quotes, { maker: next });
    const d = await w.policy.decide(q.quoteId, b64(fillOf(q, { maker: next })));
    expect(d).toMatchObject({ ok: true, maker: next.publicKey.toBase58() });
  });

  it("signs a rotation's fill with the key that signs it, not an active key the message only names (a Lighthouse assertion reading it)", async () => {
    const w = policyWith();
    const q = quote(w.quotes, { maker: next });
    const tx = fillOf(q, { maker: next, lighthouse: [lighthouseIx(5, [maker.publicKey])] });
    const keys = tx.message.staticAccountKeys;
    expect(keys.findIndex((k) => k.equals(maker.publicKey))).toBeGreaterThanOrEqual(
      tx.message.header.numRequiredSignatures,
    );
    const d = await w.policy.decide(q.quoteId, b64(tx));
    expect(d).toMatchObject({ ok: true, maker: next.publicKey.toBase58() });
  });

  it("lets a fill's expire_at pass the quote's expiry by the 5 s grace by default, not by 6", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    expect(await w.policy.decide(q.quoteId, b64(fillOf(q, { expireLater: 5n })))).toMatchObject({ ok: true });
    const late = quote(w.quotes);
    expect(await w.policy.decide(late.quoteId, b64(fillOf(late, { expireLater: 6n })))).toMatchObject({
      ok: false,
    });
  });

  it("refuses bytes that are no transaction (MALFORMED_TRANSACTION), logged with the quote", async () => {
    const w = policyWith();
    const d = await w.policy.decide("q-x", "bm90IGEgdHg=");
    expect(d).toMatchObject({ ok: false, code: FillRejectCode.MALFORMED_TRANSACTION });
    expect(refusedLine(w.lines, FillRejectCode.MALFORMED_TRANSACTION)).toMatchObject({ quoteId: "q-x" });
  });

  it("refuses when the quote store fails (SIGNER_STORE_UNAVAILABLE), and an unknown quote (QUOTE_NOT_FOUND)", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    const tx = fillOf(q);
    w.storeFails.on = true;
    expect(await w.policy.decide(q.quoteId, b64(tx))).toEqual(
      no(R.SIGNER_STORE_UNAVAILABLE, "quote store: store down"),
    );
    w.storeFails.on = false;
    expect(await w.policy.decide("nope", b64(tx))).toEqual(
      no(SwapRefusalCode.QUOTE_NOT_FOUND, "no quote nope in the store"),
    );
    expect(refusedLine(w.lines, SwapRefusalCode.QUOTE_NOT_FOUND)).toMatchObject({
      quoteId: "nope",
      messageHash: fillMessageHash(tx),
    });
  });

  it("refuses a fill the rules refuse, with the rule's code (a fill of a bigger quote than the stored one)", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    const bigger = { ...q, response: { ...q.response, amountOut: "3000000" } } as StoredQuote;
    const d = await w.policy.decide(q.quoteId, b64(fillOf(bigger)));
    expect(d.ok).toBe(false);
    expect((d as { code: string }).code).not.toMatch(/^SIGNER_/);
    expect(refusedLine(w.lines, (d as { code: string }).code)).toHaveProperty("rule");
  });

  it("refuses a fill without the taker's signature (SIGNATURE_VERIFICATION_FAILED)", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    expect(await w.policy.decide(q.quoteId, b64(fillOf(q, { signed: false })))).toMatchObject({
      ok: false,
      code: SwapRefusalCode.SIGNATURE_VERIFICATION_FAILED,
    });
  });

  it("refuses a stranger buying the issued token (HOLDER_NOT_ALLOWED); signs its holder", async () => {
    const w = policyWith();
    const q = quote(w.quotes, {
      tokenIn: MINT.USDC,
      tokenOut: TBILL,
      amountIn: 1_050_000n,
      amountOut: 1_000_000n,
    });
    expect(await w.policy.decide(q.quoteId, b64(fillOf(q)))).toMatchObject({
      ok: false,
      code: SwapRefusalCode.HOLDER_NOT_ALLOWED,
    });
    const h = quote(w.quotes, {
      tokenIn: MINT.USDC,
      tokenOut: TBILL,
      amountIn: 1_050_000n,
      amountOut: 1_000_000n,
      taker: holder,
    });
    expect(await w.policy.decide(h.quoteId, b64(fillOf(h, { taker: holder })))).toMatchObject({ ok: true });
  });

  it("refuses a token without a limit (SIGNER_NO_LIMIT), over the per-fill limit (SIGNER_LIMIT_PER_FILL), exactly at it signs", async () => {
    const w = policyWith();
    const usdt = quote(w.quotes, {
      tokenIn: MINT.USDC,
      tokenOut: MINT.USDT,
      amountIn: 1_000_000n,
      amountOut: 1_000_000n,
    });
    expect(await w.policy.decide(usdt.quoteId, b64(fillOf(usdt)))).toEqual(
      no(R.SIGNER_NO_LIMIT, `no signer limit is configured for the token ${MINT.USDT}`),
    );
    const over = quote(w.quotes, { amountIn: 3_000_000n, amountOut: 5_000_001n });
    expect(await w.policy.decide(over.quoteId, b64(fillOf(over)))).toEqual(
      no(
        R.SIGNER_LIMIT_PER_FILL,
        `the fill pays out 5000001 of ${MINT.USDC}, over the per-fill limit 5000000`,
      ),
    );
    const at = quote(w.quotes, { amountIn: 3_000_000n, amountOut: 5_000_000n });
    expect(await w.policy.decide(at.quoteId, b64(fillOf(at)))).toMatchObject({ ok: true });
  });

  it("refuses a pair without a band (SIGNER_NO_PRICE_BAND), a band without a price (SIGNER_NO_PRICE), a price outside it (SIGNER_PRICE_BAND)", async () => {
    const w = policyWith();
    const solJup = quote(w.quotes, {
      tokenIn: MINT.SOL,
      tokenOut: MINT.JUP,
      amountIn: 1_000n,
      amountOut: 1_000n,
    });
    expect(await w.policy.decide(solJup.quoteId, b64(fillOf(solJup)))).toEqual(
      no(
        R.SIGNER_NO_PRICE_BAND,
        `no signer price band is configured for the pair of ${MINT.SOL} and ${MINT.JUP}`,
      ),
    );
    const usdt = quote(w.quotes, {
      tokenIn: MINT.USDT,
      tokenOut: MINT.USDC,
      amountIn: 1_000_000n,
      amountOut: 1_000_000n,
    });
    expect(await w.policy.decide(usdt.quoteId, b64(fillOf(usdt)))).toEqual(
      no(R.SIGNER_NO_PRICE, "the signer's price source empty has no price for USDT/USDC"),
    );
    const cheap = quote(w.quotes, {
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amountIn: 1_000_000n,
      amountOut: 1_000_000_000n,
    });
    const d = await w.policy.decide(cheap.quoteId, b64(fillOf(cheap)));
    expect(d).toMatchObject({ ok: false, code: R.SIGNER_PRICE_BAND });
    expect(refusedLine(w.lines, R.SIGNER_PRICE_BAND)).toMatchObject({
      pair: "SOL/USDC",
      quoteId: cheap.quoteId,
    });
  });

  it("refuses the same message twice (SIGNER_ALREADY_SIGNED)", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    const tx = b64(fillOf(q));
    expect(await w.policy.decide(q.quoteId, tx)).toMatchObject({ ok: true });
    expect(await w.policy.decide(q.quoteId, tx)).toEqual(
      no(R.SIGNER_ALREADY_SIGNED, "this message was signed before"),
    );
  });

  it("refuses a second message for a signed quote while the first can land, or cannot be told; signs it once the first cannot", async () => {
    const valid = { answer: true as boolean | Error };
    const chain = {
      isBlockhashValid: async () => {
        if (valid.answer instanceof Error) throw valid.answer;
        return valid.answer;
      },
      getAccounts: async () => [],
    } as unknown as Pick<Chain, "isBlockhashValid" | "getAccounts">;
    const w = policyWith({ chain });
    const q = quote(w.quotes);
    const first = fillOf(q);
    expect(await w.policy.decide(q.quoteId, b64(first))).toMatchObject({ ok: true });
    const h1 = fillMessageHash(first);
    expect(await w.policy.decide(q.quoteId, b64(fillOf(q)))).toEqual(
      no(
        R.SIGNER_QUOTE_ALREADY_SIGNED,
        `quote ${q.quoteId} was signed for another message (${h1}) that can still land (its blockhash is valid)`,
      ),
    );
    valid.answer = new Error("rpc down");
    expect(await w.policy.decide(q.quoteId, b64(fillOf(q)))).toEqual(
      no(
        R.SIGNER_QUOTE_ALREADY_SIGNED,
        `quote ${q.quoteId} was signed for another message (${h1}) that may still land (its blockhash could not be checked: rpc down)`,
      ),
    );
    expect(refusedLine(w.lines, R.SIGNER_QUOTE_ALREADY_SIGNED)).toMatchObject({ signedMessageHash: h1 });
    valid.answer = false;
    const second = fillOf(q);
    expect(await w.policy.decide(q.quoteId, b64(second))).toMatchObject({
      ok: true,
      messageHash: fillMessageHash(second),
    });
    expect(await w.ledger.quoteRecord(q.quoteId)).toMatchObject({ messageHash: fillMessageHash(second) });
  });

  it("without a chain reader, never signs a second message for a quote", async () => {
    const w = policyWith();
    const q = quote(w.quotes);
    const first = fillOf(q);
    expect(await w.policy.decide(q.quoteId, b64(first))).toMatchObject({ ok: true });
    expect(await w.policy.decide(q.quoteId, b64(fillOf(q)))).toEqual(
      no(
        R.SIGNER_QUOTE_ALREADY_SIGNED,
        `quote ${q.quoteId} was signed for another message (${fillMessageHash(first)}) that may still land (the signer has no chain reader (SIGNER_RPC_URL) to tell)`,
      ),
    );
  });

  it("answers each of the record's refusals with its code and what it would cross", async () => {
    const w = policyWith();
    const run = async (answers: (SpendResult | Error)[], prior: (string | undefined)[] = []) => {
      w.ledger.spend = answers;
      w.ledger.prior = prior;
      const q = quote(w.quotes);
      return w.policy.decide(q.quoteId, b64(fillOf(q)));
    };
    expect(await run(["perMinute"])).toEqual(
      no(
        R.SIGNER_LIMIT_PER_MINUTE,
        `paying out 2000000 of ${MINT.USDC} would cross this minute's limit 1000000000`,
      ),
    );
    expect(await run(["perDay"])).toEqual(
      no(R.SIGNER_LIMIT_PER_DAY, `paying out 2000000 of ${MINT.USDC} would cross today's limit 1000000000`),
    );
    expect(await run(["lossPerDay"])).toEqual(
      no(
        R.SIGNER_LIMIT_LOSS_PER_DAY,
        `giving away 500000 of ${MINT.USDC} beyond the signer's price would cross today's loss limit 1000000000`,
      ),
    );
    expect(await run([new Error("redis down")])).toEqual(
      no(R.SIGNER_STORE_UNAVAILABLE, "signer record: redis down"),
    );
    // The quote's record went to another message and back between the two reads: asked again, refused.
    const raced = await run(["quoteSignedForAnother"], [undefined]);
    expect(raced).toMatchObject({ ok: false, code: R.SIGNER_QUOTE_ALREADY_SIGNED });
    expect((raced as { context: string }).context).toMatch(
      /^quote pq-\d+ was signed for another message meanwhile$/,
    );
    // Or the record names this very message (signed meanwhile under the same quote): not asked of the chain.
    const q = quote(w.quotes);
    const tx = fillOf(q);
    w.ledger.spend = ["quoteSignedForAnother"];
    w.ledger.prior = [fillMessageHash(tx)];
    expect(await w.policy.decide(q.quoteId, b64(tx))).toEqual(
      no(R.SIGNER_QUOTE_ALREADY_SIGNED, `quote ${q.quoteId} was signed for another message meanwhile`),
    );
    // A replayed message offered under a quote that holds another one: named a replay, the chain not asked.
    expect(await run(["alreadySigned"], ["another message"])).toEqual(
      no(R.SIGNER_ALREADY_SIGNED, "this message was signed before"),
    );
    w.ledger.prior = [];
  });
});

// ---- RFQ v2 ----

const LOT = 1_000_000n;
/** A taker's Bid on SOL/USDC at 150.3 per SOL: 10 lots (0.01 SOL) for 1,503,000 USDC units. */
function v2(over: Partial<V2SwapParams> = {}): V2SwapParams {
  return {
    taker: taker.publicKey,
    maker: maker.publicKey,
    baseMint: new PublicKey(MINT.SOL),
    quoteMint: new PublicKey(MINT.USDC),
    baseTokenProgram: new PublicKey(tokens.get(MINT.SOL)!.tokenProgram),
    quoteTokenProgram: new PublicKey(tokens.get(MINT.USDC)!.tokenProgram),
    takerSide: "bid",
    inAmount: 10n * 150_300n,
    quotedOutAmount: 0n,
    expireAt: BigInt(NOW / 1000 + 15),
    tickSizeQpb: 1n,
    lotSizeBase: LOT,
    levels: [{ pxTicks: 150_300n, qtyLots: 50n }],
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    ...over,
  };
}
function claimedOf(p: V2SwapParams, over: Partial<ClaimedLevelsWire> = {}): ClaimedLevelsWire {
  return {
    pair: "SOL/USDC",
    sequence: "41",
    lotSizeBase: p.lotSizeBase.toString(),
    validUntilMs: NOW + 15_000,
    levels: p.levels.map((l) => ({
      lots: l.qtyLots.toString(),
      perLot: (l.pxTicks * p.tickSizeQpb).toString(),
    })),
    ...over,
  };
}
function swapTx(
  p: V2SwapParams,
  opts: Parameters<typeof buildV2SwapTransaction>[1] & { signer?: Keypair } = {},
) {
  const tx = buildV2SwapTransaction(p, opts);
  tx.sign([opts.signer ?? (p.taker.equals(holder.publicKey) ? holder : taker)]);
  return tx;
}
let uuids = 0;
const uuid = () => `pu-${++uuids}`;

describe("SigningPolicy.decideV2 (an RFQ v2 swap)", () => {
  it("signs an honest swap as swap v2:<uuid>, logging the side, what it receives, the claimed sequence, the taker and the tables", async () => {
    const w = policyWith();
    const p = v2();
    const tx = swapTx(p);
    const id = uuid();
    const d = await w.policy.decideV2(id, b64(tx), claimedOf(p));
    expect(d).toMatchObject({ ok: true, maker: maker.publicKey.toBase58() });
    expect(w.lines.find((l) => l.msg === "signed")).toMatchObject({
      swapUuid: id,
      channel: "rfq-v2",
      side: "bid",
      received: "1503000",
      sequence: "41",
      taker: taker.publicKey.toBase58(),
      tables: 0,
      mint: MINT.SOL,
      amount: "10000000",
    });
    // The record is the swap's: a second message for it is refused as for a quote.
    expect(await w.policy.decideV2(id, b64(swapTx(v2())), claimedOf(p))).toMatchObject({
      code: R.SIGNER_QUOTE_ALREADY_SIGNED,
      context: expect.stringMatching(new RegExp(`^swap ${id} was signed for another message`)),
    });
  });

  it("signs with the next key of a rotation when the swap names it at slot 1", async () => {
    const w = policyWith();
    const p = v2({ maker: next.publicKey });
    expect(await w.policy.decideV2(uuid(), b64(swapTx(p)), claimedOf(p))).toMatchObject({
      ok: true,
      maker: next.publicKey.toBase58(),
    });
  });

  it("refuses bytes that are no transaction (V2_MALFORMED_TRANSACTION)", async () => {
    const w = policyWith();
    expect(await w.policy.decideV2(uuid(), "", claimedOf(v2()))).toMatchObject({
      ok: false,
      code: FillRejectCode.MALFORMED_TRANSACTION,
    });
  });

  it("refuses a swap loading from lookup tables without a chain reader (SIGNER_V2_LOOKUP_TABLES), and one whose table the chain lacks", async () => {
    const table = new AddressLookupTableAccount({
      key: Keypair.generate().publicKey,
      state: {
        deactivationSlot: 0xffff_ffff_ffff_ffffn,
        lastExtendedSlot: 0,
        lastExtendedSlotStartIndex: 0,
        authority: undefined,
        addresses: [new PublicKey("Sysvar1nstructions1111111111111111111111111")],
      },
    });
    const p = v2();
    const tx = b64(swapTx(p, { lookupTables: [table] }));
    expect(await policyWith().policy.decideV2(uuid(), tx, claimedOf(p))).toEqual(
      no(
        R.SIGNER_V2_LOOKUP_TABLES,
        "the swap loads accounts from 1 lookup table(s), and the signer has no chain reader (SIGNER_RPC_URL) to resolve them",
      ),
    );
    const chain = { isBlockhashValid: async () => true, getAccounts: async () => [null] } as unknown as Chain;
    const w = policyWith({ chain });
    expect(await w.policy.decideV2(uuid(), tx, claimedOf(p))).toMatchObject({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
    });
    expect(refusedLine(w.lines, V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND)).toMatchObject({ tables: 1 });
  });

  it("refuses what the route check refuses with its code; a pair without a band is SIGNER_NO_PRICE_BAND", async () => {
    const w = policyWith();
    const other = v2({ maker: stranger });
    expect(await w.policy.decideV2(uuid(), b64(swapTx(other)), claimedOf(other))).toMatchObject({
      ok: false,
      code: V2RejectCode.V2_INVALID_SIGNERS,
    });
    const jupSol = v2({
      baseMint: new PublicKey(MINT.JUP),
      quoteMint: new PublicKey(MINT.SOL),
    });
    expect(await w.policy.decideV2(uuid(), b64(swapTx(jupSol)), claimedOf(jupSol))).toEqual(
      no(R.SIGNER_NO_PRICE_BAND, `no streamed pair ${MINT.JUP}/${MINT.SOL}`),
    );
  });

  it("refuses a top-level program an offered swap never holds (INVALID_PROGRAM), naming it", async () => {
    const w = policyWith();
    const program = Keypair.generate().publicKey;
    const p = v2();
    const tx = swapTx(p, {
      after: [new TransactionInstruction({ programId: program, keys: [], data: Buffer.alloc(0) })],
    });
    expect(await w.policy.decideV2(uuid(), b64(tx), claimedOf(p))).toEqual(
      no(
        FillRejectCode.INVALID_PROGRAM,
        `instruction 4 runs ${program.toBase58()}, not a program an offered swap holds`,
      ),
    );
  });

  it("refuses a swap the taker did not sign (SIGNATURE_VERIFICATION_FAILED)", async () => {
    const w = policyWith();
    const p = v2();
    const tx = buildV2SwapTransaction(p);
    expect(await w.policy.decideV2(uuid(), b64(tx), claimedOf(p))).toMatchObject({
      ok: false,
      code: SwapRefusalCode.SIGNATURE_VERIFICATION_FAILED,
    });
  });

  it("refuses an expire_at beyond the levels' validity and the grace (V2_EXPIRED): 5 s by default, as configured", async () => {
    const w = policyWith();
    const at = (s: number) => v2({ expireAt: BigInt(NOW / 1000 + s) });
    expect(
      await w.policy.decideV2(uuid(), b64(swapTx(at(16))), claimedOf(at(16), { validUntilMs: NOW + 20_000 })),
    ).toEqual(
      no(
        V2RejectCode.V2_EXPIRED,
        `expire_at ${NOW / 1000 + 16} is more than 15 s ahead (latest ${NOW / 1000 + 15}): longer than levels stay valid`,
      ),
    );
    const strict = policyWith({ expiryGraceSeconds: 0n });
    expect(await strict.policy.decideV2(uuid(), b64(swapTx(at(11))), claimedOf(at(11)))).toMatchObject({
      code: V2RejectCode.V2_EXPIRED,
    });
    expect(await strict.policy.decideV2(uuid(), b64(swapTx(at(10))), claimedOf(at(10)))).toMatchObject({
      ok: true,
    });
  });

  it("refuses a swap outside the claimed set (SIGNER_V2_LEVELS_NOT_CLAIMED), logged with the claimed sequence", async () => {
    const w = policyWith();
    const p = v2();
    expect(await w.policy.decideV2(uuid(), b64(swapTx(p)), claimedOf(p, { lotSizeBase: "2000000" }))).toEqual(
      no(R.SIGNER_V2_LEVELS_NOT_CLAIMED, "the swap's lot 1000000 is not the claimed set's 2000000"),
    );
    expect(refusedLine(w.lines, R.SIGNER_V2_LEVELS_NOT_CLAIMED)).toMatchObject({ sequence: "41" });
  });

  it("refuses a swap whose input buys no whole lot (V2_INVALID_AMOUNTS)", async () => {
    const w = policyWith();
    const p = v2({ inAmount: 150_299n });
    expect(await w.policy.decideV2(uuid(), b64(swapTx(p)), claimedOf(p))).toEqual(
      no(V2RejectCode.V2_INVALID_AMOUNTS, "150299 buys no whole lot"),
    );
  });

  it("refuses over the per-fill limit (SIGNER_LIMIT_PER_FILL) and outside the band (SIGNER_PRICE_BAND, logged with the sequence)", async () => {
    const w = policyWith();
    // 1.001 SOL: one lot over the 1 SOL a fill.
    const big = v2({ inAmount: 1_001n * 150_300n, levels: [{ pxTicks: 150_300n, qtyLots: 2_000n }] });
    expect(await w.policy.decideV2(uuid(), b64(swapTx(big)), claimedOf(big))).toEqual(
      no(
        R.SIGNER_LIMIT_PER_FILL,
        `the swap pays out 1001000000 of ${MINT.SOL}, over the per-fill limit 1000000000`,
      ),
    );
    const cheap = v2({ inAmount: 10n * 140_000n, levels: [{ pxTicks: 140_000n, qtyLots: 50n }] });
    expect(await w.policy.decideV2(uuid(), b64(swapTx(cheap)), claimedOf(cheap))).toMatchObject({
      code: R.SIGNER_PRICE_BAND,
    });
    expect(refusedLine(w.lines, R.SIGNER_PRICE_BAND)).toMatchObject({ pair: "SOL/USDC", sequence: "41" });
  });

  describe("an issued token", () => {
    const tbill = (over: Partial<V2SwapParams> = {}) =>
      v2({
        taker: holder.publicKey,
        baseMint: setup.mint,
        baseTokenProgram: new PublicKey(tokens.get(TBILL)!.tokenProgram),
        levels: [{ pxTicks: 1_050n, qtyLots: 50n }],
        inAmount: 10n * 1_050n,
        ...over,
      });
    const claimed = (p: V2SwapParams) => claimedOf(p, { pair: "TBILL/USDC" });
    const record = (answer: "recorded" | "alreadyMade" | "dailyCap" | Error) => {
      const calls: unknown[] = [];
      const ledger = {
        record: async (input: unknown) => {
          calls.push(input);
          if (answer instanceof Error) throw answer;
          return answer;
        },
      } as unknown as SignerIssuanceLedger;
      return { calls, ledger };
    };

    it("refuses a stranger (HOLDER_NOT_ALLOWED)", async () => {
      const p = tbill({ taker: taker.publicKey });
      expect(await policyWith().policy.decideV2(uuid(), b64(swapTx(p)), claimed(p))).toMatchObject({
        ok: false,
        code: SwapRefusalCode.HOLDER_NOT_ALLOWED,
      });
    });

    it("refuses without a record to hold the daily cap (SIGNER_STORE_UNAVAILABLE), or when the record fails", async () => {
      const p = tbill();
      expect(await policyWith().policy.decideV2(uuid(), b64(swapTx(p)), claimed(p))).toEqual(
        no(R.SIGNER_STORE_UNAVAILABLE, "the signer has no issuance record to hold the issuer's daily cap"),
      );
      const r = record(new Error("redis down"));
      expect(
        await policyWith({ issuanceRecord: r.ledger }).policy.decideV2(
          uuid(),
          b64(swapTx(tbill())),
          claimed(p),
        ),
      ).toEqual(no(R.SIGNER_STORE_UNAVAILABLE, "signer record: redis down"));
    });

    it("counts a buy as a mint and a sell as a burn, once per message, and refuses past the daily cap (ISSUANCE_CAP_EXCEEDED)", async () => {
      const ok = record("recorded");
      const w = policyWith({ issuanceRecord: ok.ledger });
      const p = tbill();
      const tx = swapTx(p);
      expect(await w.policy.decideV2(uuid(), b64(tx), claimed(p))).toMatchObject({ ok: true });
      expect(ok.calls).toEqual([
        {
          quoteId: `v2:${fillMessageHash(tx)}`,
          mint: TBILL,
          amount: 10_000_000n,
          dailyCap: 3_000_000_000n,
          nowMs: NOW,
        },
      ]);
      const sell = tbill({ takerSide: "ask", inAmount: 10n * LOT });
      const sold = swapTx(sell);
      expect(await w.policy.decideV2(uuid(), b64(sold), claimed(sell))).toMatchObject({ ok: true });
      expect(ok.calls[1]).toEqual({
        quoteId: `v2:${fillMessageHash(sold)}`,
        mint: `${TBILL}:burn`,
        amount: 10_000_000n,
        dailyCap: 3_000_000_000n,
        nowMs: NOW,
      });
      const full = record("dailyCap");
      const capped = policyWith({ issuanceRecord: full.ledger });
      expect(await capped.policy.decideV2(uuid(), b64(swapTx(tbill())), claimed(p))).toEqual(
        no(
          SwapRefusalCode.ISSUANCE_CAP_EXCEEDED,
          "selling 10000000 TBILL would cross the issuer's daily cap of 3000000000 (the signer's record)",
        ),
      );
      expect(await capped.policy.decideV2(uuid(), b64(swapTx(sell)), claimed(sell))).toEqual(
        no(
          SwapRefusalCode.ISSUANCE_CAP_EXCEEDED,
          "buying 10000000 TBILL would cross the issuer's daily cap of 3000000000 (the signer's record)",
        ),
      );
    });

    it("holds the cap in the issuer's record when it has one, before its own", async () => {
      const issuerRecord = record("dailyCap");
      const own = record("recorded");
      const w = policyWith({
        issuer: { keypair: setup.issuer, ledger: issuerRecord.ledger },
        issuanceRecord: own.ledger,
      });
      const p = tbill();
      expect(await w.policy.decideV2(uuid(), b64(swapTx(p)), claimed(p))).toMatchObject({
        code: SwapRefusalCode.ISSUANCE_CAP_EXCEEDED,
      });
      expect(own.calls).toEqual([]);
    });
  });
});

// ---- companions ----

describe("SigningPolicy.companion", () => {
  const tip = Keypair.generate().publicKey.toBase58();
  function issuing(answer?: "alreadyMade" | "dailyCap" | Error) {
    const real = new SignerIssuanceLedger(redis, `${prefix}c${++instances}:`);
    const ledger = {
      record: async (input: Parameters<SignerIssuanceLedger["record"]>[0]) => {
        if (answer instanceof Error) throw answer;
        return answer ?? real.record(input);
      },
    } as unknown as SignerIssuanceLedger;
    return policyWith({ issuer: { keypair: setup.issuer, ledger } });
  }
  /** A holder's buy of `amount` TBILL units, signed by the policy. */
  async function signedBuy(w: ReturnType<typeof policyWith>, amount = 1_000_000n, who = holder) {
    const q = quote(w.quotes, {
      tokenIn: MINT.USDC,
      tokenOut: TBILL,
      amountIn: (amount * 21n) / 20n,
      amountOut: amount,
      taker: who,
    });
    const tx = fillOf(q, { taker: who });
    const d = await w.policy.decide(q.quoteId, b64(tx));
    return { q, tx, d };
  }

  it("makes the mint companion of a fill it signed", async () => {
    const w = issuing();
    const { q, tx, d } = await signedBuy(w);
    expect(d.ok).toBe(true);
    const c = await w.policy.companion(q.quoteId, b64(tx), tip);
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    // The companion travels as base64: a transaction on the fill's blockhash, paid by the issuer, tipping.
    const made = VersionedTransaction.deserialize(Buffer.from(c.companion, "base64"));
    expect(made.message.recentBlockhash).toBe(tx.message.recentBlockhash);
    expect(made.message.staticAccountKeys[0]?.toBase58()).toBe(setup.issuer.publicKey.toBase58());
    expect(made.message.staticAccountKeys.map((k) => k.toBase58())).toContain(tip);
    expect(w.lines.find((l) => l.msg === "companion signed")).toMatchObject({
      quoteId: q.quoteId,
      issued: "1000000",
      mint: TBILL,
      tipAccount: tip,
    });
  });

  it("refuses without an issuer key (SIGNER_NO_ISSUER), bytes that are no transaction, and a tip account that is no key", async () => {
    const w = policyWith();
    expect(await w.policy.companion("q", "", tip)).toEqual(
      no(R.SIGNER_NO_ISSUER, "this signer holds no issuer key (SIGNER_ISSUER_KEYPAIR)"),
    );
    const i = issuing();
    expect(await i.policy.companion("q", "bm90IGEgdHg=", tip)).toMatchObject({
      code: FillRejectCode.MALFORMED_TRANSACTION,
    });
    const { q, tx } = await signedBuy(i);
    expect(await i.policy.companion(q.quoteId, b64(tx), "not-a-key")).toEqual(
      no(R.SIGNER_BAD_REQUEST, "tipAccount not-a-key is not a public key"),
    );
    expect(refusedLine(i.lines, R.SIGNER_BAD_REQUEST)).toMatchObject({ quoteId: q.quoteId });
  });

  it("refuses when its stores fail, a fill it did not sign, and a quote the store no longer holds", async () => {
    const w = issuing();
    const { q, tx } = await signedBuy(w);
    w.storeFails.on = true;
    expect(await w.policy.companion(q.quoteId, b64(tx), tip)).toEqual(
      no(R.SIGNER_STORE_UNAVAILABLE, "store down"),
    );
    w.storeFails.on = false;
    const unsigned = fillOf(q, { taker: holder });
    expect(await w.policy.companion(q.quoteId, b64(unsigned), tip)).toEqual(
      no(R.SIGNER_COMPANION_UNSIGNED_FILL, `this signer did not sign this message for quote ${q.quoteId}`),
    );
    w.quotes.delete(q.quoteId);
    expect(await w.policy.companion(q.quoteId, b64(tx), tip)).toEqual(
      no(SwapRefusalCode.QUOTE_NOT_FOUND, `no quote ${q.quoteId} in the store`),
    );
  });

  it("refuses the companion of a fill the rules refuse now: its quote changed in the store, or its taker no longer a holder", async () => {
    const w = issuing();
    const { q, tx, d } = await signedBuy(w);
    expect(d.ok).toBe(true);
    w.quotes.set(q.quoteId, { ...q, response: { ...q.response, amountOut: "2000000" } } as StoredQuote);
    const changed = await w.policy.companion(q.quoteId, b64(tx), tip);
    expect(changed.ok).toBe(false);
    expect((changed as { code: string }).code).not.toMatch(/^SIGNER_|ISSUANCE|HOLDER/);
    // The same record and quotes, judged under holder rules that no longer list the taker.
    const { q: q2, tx: tx2 } = await signedBuy(w);
    const moved = new SigningPolicy({
      ...w.options,
      config: testConfig({}, (f) => {
        const v = setup.vary(f);
        const tbill = (v.issuance as Record<string, Record<string, unknown>>).TBILL as Record<
          string,
          unknown
        >;
        tbill.holders = { allowlist: [stranger.toBase58()] };
        return v;
      }),
    });
    expect(await moved.companion(q2.quoteId, b64(tx2), tip)).toMatchObject({
      ok: false,
      code: SwapRefusalCode.HOLDER_NOT_ALLOWED,
    });
  });

  it("refuses a fill of no issued token, and a burn (the signer makes mint companions only)", async () => {
    const w = issuing();
    const q = quote(w.quotes);
    const tx = fillOf(q);
    expect((await w.policy.decide(q.quoteId, b64(tx))).ok).toBe(true);
    expect(await w.policy.companion(q.quoteId, b64(tx), tip)).toEqual(
      no(R.SIGNER_NO_ISSUER, "the fill trades no issued token"),
    );
    const s = quote(w.quotes, {
      tokenIn: TBILL,
      tokenOut: MINT.USDC,
      amountIn: 1_000_000n,
      amountOut: 1_000_000n,
      taker: holder,
    });
    const sell = fillOf(s, { taker: holder });
    expect((await w.policy.decide(s.quoteId, b64(sell))).ok).toBe(true);
    expect(await w.policy.companion(s.quoteId, b64(sell), tip)).toEqual(
      no(R.SIGNER_NO_ISSUER, "the signer service makes mint companions only (a burn needs burnOnSell off)"),
    );
  });

  it("refuses when the issuer's record fails, a second companion for a quote, and one past the daily cap", async () => {
    for (const [answer, expected] of [
      [new Error("redis down"), no(R.SIGNER_STORE_UNAVAILABLE, "signer record: redis down")],
      ["alreadyMade", { ok: false, code: R.SIGNER_COMPANION_ALREADY_MADE }],
      [
        "dailyCap",
        no(
          "ISSUANCE_CAP_EXCEEDED",
          "minting 1000000 TBILL would cross the daily cap of 3000000000 (the signer's record)",
        ),
      ],
    ] as const) {
      const w = issuing(answer as "alreadyMade" | "dailyCap" | Error);
      const { q, tx } = await signedBuy(w);
      const c = await w.policy.companion(q.quoteId, b64(tx), tip);
      expect(c).toMatchObject(expected);
      if (answer === "alreadyMade")
        expect((c as SignDecision & { context: string }).context).toBe(
          `a companion was made for quote ${q.quoteId} before`,
        );
    }
  });
});
