/**
 * The load test's traffic: operator-shaped POST /quote requests in a realistic mix, built before the
 * run so the sender only copies bytes. Pairs and sizes come from the webhook's own configuration:
 * both directions of every enabled pair, sizes log-uniform inside the pair's bounds, both quote types,
 * with and without a taker; a share of requests must be declined (unknown mint, size beyond the
 * pair's maximum) and are expected to answer 404.
 *
 * Amounts here are only request sizes, never signed: a float is fine for spreading them.
 */
import { createHash, randomBytes } from "node:crypto";
import { Keypair, PublicKey } from "@solana/web3.js";
import type { FileConfig } from "../../config/schema.ts";

export type Expect = "quote" | "noQuote";

export interface MixOptions {
  /** Share of requests naming a mint the maker does not trade (must 404). */
  unknownMintShare: number;
  /** Share of requests larger than the pair's maximum (must 404). */
  oversizeShare: number;
  /** Share of requests carrying a taker (the rest are indicative quotes). */
  takerShare: number;
  exactOutShare: number;
  /** Distinct takers to draw from. */
  takers: number;
  feeBps: number;
  stableMints: ReadonlySet<string>;
  seed: string;
  /** The takers' seed when not `seed` (the soak's segments draw from one set of takers). */
  takerSeed?: string;
}

export const DEFAULT_MIX: MixOptions = {
  unknownMintShare: 0.04,
  oversizeShare: 0.02,
  takerShare: 0.6,
  exactOutShare: 0.4,
  takers: 500,
  feeBps: 10,
  stableMints: new Set([
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  ]),
  seed: "loadtest",
};

export interface MixRequest {
  /** JSON body without the quoteId (spliced in at build time, unique per request). */
  expect: Expect;
  kind: string;
  body: Buffer;
  requestId: string;
  quoteId: string;
}

/** A small deterministic PRNG (mulberry32) so that a run's mix can be repeated from its seed. */
function prng(seed: string): () => number {
  let a = createHash("sha256").update(seed).digest().readUInt32LE(0);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface PairView {
  base: { mint: string; decimals: number };
  quote: { mint: string; decimals: number };
  minBase: number;
  maxBase: number;
  /** Quote units per base unit (human). */
  price: number;
  key: string;
}

function pairsOf(file: FileConfig): PairView[] {
  const bySymbol = new Map(file.tokens.map((t) => [t.symbol, t]));
  const out: PairView[] = [];
  for (const p of file.pairs) {
    if (p.enabled === false) continue;
    const base = bySymbol.get(p.base);
    const quote = bySymbol.get(p.quote);
    const source = file.priceSources[p.priceSource];
    const price = source?.kind === "static" ? Number(source.prices[`${p.base}/${p.quote}`]) : Number.NaN;
    if (!base || !quote || !Number.isFinite(price)) continue;
    out.push({
      base: { mint: base.mint, decimals: base.decimals },
      quote: { mint: quote.mint, decimals: quote.decimals },
      minBase: Number(p.minBase),
      maxBase: Number(p.maxBase),
      price,
      key: `${p.base}/${p.quote}`,
    });
  }
  return out;
}

/** A base size converted to the smallest units of the side the amount is on. */
function amountOnSide(pair: PairView, baseUnits: number, side: "base" | "quote"): bigint {
  if (side === "base") return BigInt(Math.max(1, Math.round(baseUnits)));
  const human = (baseUnits / 10 ** pair.base.decimals) * pair.price;
  return BigInt(Math.max(1, Math.round(human * 10 ** pair.quote.decimals)));
}

/**
 * Builds `count` requests. Each has its own quoteId (the webhook keys stored quotes by it); identical
 * parameters repeat their requestId, as the operator's do.
 */
export function buildMix(file: FileConfig, count: number, opts: MixOptions = DEFAULT_MIX): MixRequest[] {
  return Array.from(mixRequests(file, count, opts));
}

/**
 * The same requests as `buildMix`, built `chunk` at a time with the event loop let run between
 * chunks: a generator that sends from this process meanwhile (the soak builds each 30 s segment
 * while the previous one runs) never stalls its sends for a whole build (200-340 ms for 15,000).
 */
export async function buildMixPaced(
  file: FileConfig,
  count: number,
  opts: MixOptions = DEFAULT_MIX,
  chunk = 250,
): Promise<MixRequest[]> {
  const out: MixRequest[] = [];
  for (const r of mixRequests(file, count, opts)) {
    out.push(r);
    if (out.length % chunk === 0) await new Promise((go) => setImmediate(go));
  }
  return out;
}

/** The takers a mix draws from, derived from its seed (ed25519 keys: built once per seed and count). */
const takersBySeed = new Map<string, string[]>();
function takersOf(seed: string, n: number): string[] {
  const key = `${seed}\u0000${n}`;
  let takers = takersBySeed.get(key);
  if (!takers) {
    takers = Array.from({ length: n }, (_, i) =>
      Keypair.fromSeed(createHash("sha256").update(`${seed}:taker:${i}`).digest()).publicKey.toBase58(),
    );
    takersBySeed.set(key, takers);
  }
  return takers;
}

function* mixRequests(file: FileConfig, count: number, opts: MixOptions): Generator<MixRequest> {
  const rand = prng(opts.seed);
  const pairs = pairsOf(file);
  if (pairs.length === 0) throw new Error("loadtest: the webhook configuration has no priced pair");
  const takers = takersOf(opts.takerSeed ?? opts.seed, opts.takers);
  const unknownMints = Array.from({ length: 16 }, (_, i) =>
    new PublicKey(createHash("sha256").update(`${opts.seed}:unknown:${i}`).digest()).toBase58(),
  );
  const quoteIdSalt = randomBytes(6).toString("hex");
  for (let i = 0; i < count; i++) {
    const pair = pairs[Math.floor(rand() * pairs.length)] as PairView;
    const sell = rand() < 0.5; // taker sells base (base -> quote) or buys it
    const exactOut = rand() < opts.exactOutShare;
    const r = rand();
    let kind: string;
    let expect: Expect = "quote";
    // Log-uniform inside [2 x min, 0.5 x max]: away from the edges, so conversion and spread
    // never push a request that should be quoted over a bound.
    const lo = Math.log(pair.minBase * 2);
    const hi = Math.log(pair.maxBase * 0.5);
    let baseUnits = Math.exp(lo + rand() * (hi - lo));
    let tokenIn = sell ? pair.base.mint : pair.quote.mint;
    let tokenOut = sell ? pair.quote.mint : pair.base.mint;
    if (r < opts.unknownMintShare) {
      kind = "unknownMint";
      expect = "noQuote";
      const unknown = unknownMints[Math.floor(rand() * unknownMints.length)] as string;
      if (rand() < 0.5) tokenIn = unknown;
      else tokenOut = unknown;
    } else if (r < opts.unknownMintShare + opts.oversizeShare) {
      kind = "oversize";
      expect = "noQuote";
      baseUnits = pair.maxBase * (3 + rand() * 10);
    } else {
      kind = `${pair.key}:${sell ? "sell" : "buy"}:${exactOut ? "exactOut" : "exactIn"}`;
    }
    // The amount is on the input side for exactIn, on the output side for exactOut.
    const amountMint = exactOut ? tokenOut : tokenIn;
    const side = amountMint === pair.quote.mint ? "quote" : "base";
    const amount = amountOnSide(pair, baseUnits, side);
    const taker = rand() < opts.takerShare ? takers[Math.floor(rand() * takers.length)] : undefined;
    const feeBps = opts.stableMints.has(tokenIn) && opts.stableMints.has(tokenOut) ? 0 : opts.feeBps;
    const params = `${tokenIn}|${tokenOut}|${amount}|${exactOut}|${feeBps}|${taker ?? ""}`;
    const h = createHash("sha256").update(params).digest("hex");
    const requestId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
    const quoteId = `${quoteIdSalt}-${i.toString(16).padStart(8, "0")}`;
    const body: Record<string, unknown> = {
      requestId,
      quoteId,
      tokenIn,
      tokenOut,
      amount: amount.toString(),
      quoteType: exactOut ? "exactOut" : "exactIn",
      protocol: "v1",
      feeBps,
    };
    if (taker) body.taker = taker;
    if (rand() < 0.5) body.suggestedPrioritizationFees = 1_000 + Math.floor(rand() * 50_000);
    yield { expect, kind, body: Buffer.from(JSON.stringify(body)), requestId, quoteId };
  }
}
