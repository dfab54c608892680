/**
 * POST /swap refuses taker signatures the chain's strict verification refuses, even though they satisfy
 * the plain ed25519 equation (and node:crypto alone would take them): a taker key that is the identity
 * point (which "signs" every message), and the taker's own signature with S replaced by S + L. Both are
 * answered `{"rejectedWithReason":"signatureVerificationFailed"}` with no maker signature and no send;
 * the honest signature is then accepted, so the quote and the fill were good all along.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { ed25519SigningKey, signEd25519, verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Fetcher,
  type Harness,
  listen,
  ObservedChain as Observed,
  type ObservedChain,
  observedHarness,
  operatorFill,
  postSwap,
} from "../support/harness.ts";

/** L, the order of the ed25519 base point. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

let h: Harness;
let signer: CountingSigner;
let chain: ObservedChain;
let server: Awaited<ReturnType<typeof listen>>;
let http: Fetcher;

beforeAll(async () => {
  ({ h, signer, chain } = await observedHarness({}, (c) => new Observed(c)));
  server = await listen(h.app);
  http = server.fetch;
  // The first quote of a fresh process pays for warming the quote path and can miss the operator's
  // 250 ms on a busy machine; these tests are about signatures, so warm it up once.
  await askQuote(h, http, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n }).catch(() => {});
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const le32 = (n: bigint) => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));
const fromLe = (b: Uint8Array) => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);

const ask = (taker: PublicKey) =>
  askQuote(h, http, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n, taker });

describe("POST /swap refuses signatures the chain would refuse", () => {
  it("refuses a fill signed by the identity-point taker key (valid for every message to OpenSSL)", async () => {
    const identity = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0)));
    const { stored } = await ask(identity);
    const tx = await operatorFill(h, stored, identity);
    // With A the identity, [k]A is the identity for every k: R = [r]B, S = r satisfies [S]B = R + [k]A.
    // R = [1]B is the base point's encoding, so S = 1.
    const baseB = Buffer.from("5866666666666666666666666666666666666666666666666666666666666666", "hex");
    tx.signatures[1] = Uint8Array.from([...baseB, ...le32(1n)]);
    const signs = signer.count;
    const sends = chain.sends;
    const res = await postSwap(http, {
      requestId: stored.requestId,
      quoteId: stored.quoteId,
      transaction: tx,
    });
    expect(res.status).toBe(200);
    expect(res.body.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
    expect(signer.count).toBe(signs);
    expect(chain.sends).toBe(sends);
  });

  it("refuses the taker's signature with a non-canonical S (S + L), then accepts the honest one", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.JUP]: 10_000_000_000n } });
    const { stored } = await ask(taker.publicKey);
    const tx = await operatorFill(h, stored, taker.publicKey);
    const message = tx.message.serialize();
    const honest = signEd25519(message, ed25519SigningKey(taker.secretKey));
    const malleated = Uint8Array.from([...honest.subarray(0, 32), ...le32(fromLe(honest.subarray(32)) + L)]);
    expect(verifyEd25519(message, honest, taker.publicKey.toBytes())).toBe(true);

    tx.signatures[1] = malleated;
    const signs = signer.count;
    const sends = chain.sends;
    const refused = await postSwap(http, {
      requestId: stored.requestId,
      quoteId: stored.quoteId,
      transaction: tx,
    });
    expect(refused.body.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
    expect(signer.count).toBe(signs);
    expect(chain.sends).toBe(sends);

    tx.signatures[1] = honest;
    const ok = await postSwap(http, {
      requestId: stored.requestId,
      quoteId: stored.quoteId,
      transaction: tx,
    });
    expect(ok.body.state).toBe("accepted");
  });
});
