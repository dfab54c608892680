/**
 * The send step (src/swap/steps/send.ts) through POST /swap: the pre-flight's refusals (nothing signed,
 * the quote given back), the signer's refusals and silences, the chain port's send failures in the
 * words that say what happened to the transaction, and what the journal holds for a fill about to be
 * sent (its fee line and the maker's trade). The chain is the fault injector of faults.ts; the
 * signer is wrapped by a DELIBERATE fault injector (`ScriptedSigner`) that refuses or stays silent
 * when a test says so. Last, the step's own defence in depth, called directly with a fill whose
 * validated maker slot or fee payer is not the transaction's.
 */
import { Keypair, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { creditToken, fundTaker } from "../../src/chain/local/seed.ts";
import type { PendingFill } from "../../src/journal/interface.ts";
import { Budget } from "../../src/lib/bounded.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { type SignContext, type Signer, SignerRefusal } from "../../src/signing/port.ts";
import { checkBeforeClaim } from "../../src/swap/steps/checks.ts";
import { signAndSend } from "../../src/swap/steps/send.ts";
import type { StepPorts, SwapSettings } from "../../src/swap/steps/step.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { FaultyChain } from "./faults.ts";
import { signedJupFill } from "./setup.ts";

/** Signs with the real key unless told to refuse (a SignerRefusal) or to return without signing. */
class ScriptedSigner implements Signer {
  next: SignerRefusal | "silent" | undefined;
  count = 0;
  constructor(private readonly inner: Signer) {}
  get publicKey(): PublicKey {
    return this.inner.publicKey;
  }
  async sign(tx: VersionedTransaction, context?: SignContext): Promise<void> {
    const next = this.next;
    this.next = undefined;
    if (next === "silent") return;
    if (next) throw next;
    this.count++;
    return this.inner.sign(tx, context);
  }
}

const TRACK_FOR_MS = 90_000;
let h: Harness;
let signer: ScriptedSigner;
let chain: FaultyChain;

beforeAll(async () => {
  h = await createHarness({
    swap: { trackForMs: TRACK_FOR_MS },
    wrapSigner: (s) => {
      signer = new ScriptedSigner(s);
      return signer;
    },
    wrapChain: (c) => {
      chain = new FaultyChain(c);
      return chain;
    },
  });
});
afterAll(() => h.close());
afterEach(() => {
  chain.disarm();
  signer.next = undefined;
  vi.restoreAllMocks();
});

const openReservation = async (quoteId: string) =>
  (await h.inventory.reservations()).find((r) => r.quoteId === quoteId);

describe("the pre-flight", () => {
  it("refuses SIMULATION_FAILED with the simulation's error when the fill would fail, unsigned, and gives the quote back", async () => {
    const http = inProcess(h.app);
    const { body, response, taker } = await signedJupFill(h, http, 5_000_000_000n);
    const jup = new PublicKey(MINT.JUP);
    // The taker's JUP leaves after its funds were read (while the maker's inventory is reserved).
    const reserve = h.inventory.reserve.bind(h.inventory);
    vi.spyOn(h.inventory, "reserve").mockImplementationOnce(async (r) => {
      creditToken(h.chain, taker.publicKey, jup, -5_000_000_000n);
      return reserve(r);
    });
    const signs = signer.count;
    const sends = chain.sends;
    const res = (await postSwap(http, body)).body;
    expect(res.state).toBe("rejected");
    expect(res.rejectionReason).toMatch(/^SIMULATION_FAILED: the transaction fails in simulation: \S/);
    expect(signer.count).toBe(signs);
    expect(chain.sends).toBe(sends);
    expect(await openReservation(response.quoteId)).toBeUndefined();
    // The claim was given back: the same bytes fill the quote once the taker can pay.
    creditToken(h.chain, taker.publicKey, jup, 5_000_000_000n);
    expect((await postSwap(http, body)).body.state).toBe("accepted");
  });

  it("refuses SIMULATION_FAILED saying the pre-flight could not run when the chain cannot simulate, unsigned", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    chain.arm("preflight", { kind: "fail", error: "rpc 503" });
    const signs = signer.count;
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "SIMULATION_FAILED: the pre-flight simulation could not run (rpc 503); not sent",
    });
    expect(signer.count).toBe(signs);
    expect(await openReservation(response.quoteId)).toBeUndefined();
  });
});

describe("the signer", () => {
  it("refuses with the signer's own code and detail when it is one of the contract's codes, and releases the reservation", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    signer.next = new SignerRefusal("SIGNER_PRICE_BAND", "the price is 3% off the band");
    const sends = chain.sends;
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "SIGNER_PRICE_BAND: the price is 3% off the band",
    });
    expect(chain.sends).toBe(sends);
    expect(await openReservation(response.quoteId)).toBeUndefined();
  });

  it("refuses (SIGNER_REFUSED) naming a code the contract does not list", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    signer.next = new SignerRefusal("SIGNER_SOMETHING_NEW", "a rule of a newer signer");
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "SIGNER_SOMETHING_NEW: a rule of a newer signer",
    });
  });

  it("refuses (SIGNATURE_UNAVAILABLE) and sends nothing when the signer returns without signing", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    signer.next = "silent";
    const sends = chain.sends;
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "the maker signature could not be produced",
    });
    expect(chain.sends).toBe(sends);
    expect(await openReservation(response.quoteId)).toBeUndefined();
  });
});

describe("a send the chain port fails", () => {
  it("says the chain refused the transaction when the node refused it", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    chain.arm("send", { kind: "refuse", error: "Blockhash not found", reached: "refused" });
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "the chain refused the transaction: Blockhash not found",
    });
  });

  it("says the transaction did not reach the chain when no node took it", async () => {
    const http = inProcess(h.app);
    const { body } = await signedJupFill(h, http, 5_000_000_000n);
    chain.arm("send", { kind: "refuse", error: "ECONNREFUSED", reached: "no" });
    expect((await postSwap(http, body)).body.rejectionReason).toBe(
      "the transaction did not reach the chain: ECONNREFUSED",
    );
  });

  it("says the transaction is not on any RPC endpoint when where it went is unknown", async () => {
    const http = inProcess(h.app);
    const { body } = await signedJupFill(h, http, 5_000_000_000n);
    chain.arm("send", { kind: "refuse", error: "socket hang up", reached: "unknown" });
    expect((await postSwap(http, body)).body.rejectionReason).toBe(
      "the transaction did not reach the chain as far as any RPC endpoint shows (socket hang up)",
    );
  });

  it("says sending failed, with the port's error, when the send throws", async () => {
    const http = inProcess(h.app);
    const { body } = await signedJupFill(h, http, 5_000_000_000n);
    chain.arm("send", { kind: "fail", error: "rpc exploded" });
    expect((await postSwap(http, body)).body.rejectionReason).toBe("sending failed: rpc exploded");
  });
});

describe("what the journal holds for a fill about to be sent", () => {
  async function journaledFor(ask: { tokenIn: string; tokenOut: string; amount: bigint }) {
    const http = inProcess(h.app);
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, {
      sol: 100_000_000n,
      tokens: { [MINT.JUP]: 5_000_000_000n, [MINT.USDC]: 5_000_000_000n },
    });
    const { response, stored } = await askQuote(h, http, { ...ask, taker: taker.publicKey });
    const tx = await operatorFill(h, stored, taker.publicKey);
    tx.sign([taker]);
    const added = vi.spyOn(h.journal, "addPending");
    const before = Date.now();
    const res = await postSwap(http, {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    const after = Date.now();
    expect(res.body.state).toBe("accepted");
    const pending = added.mock.calls
      .map(([f]) => f)
      .find((f) => f.quoteId === response.quoteId) as PendingFill;
    expect(pending).toBeDefined();
    return { pending, stored, tx, taker, res, before, after };
  }

  it("journals the fill's ids, blockhash, fee line and tracking window, and the maker's buy of the base token", async () => {
    const { pending, stored, tx, taker, res, before, after } = await journaledFor({
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000_000_000n,
    });
    expect(pending).toMatchObject({
      quoteId: stored.quoteId,
      requestId: stored.requestId,
      signature: res.body.txSignature,
      blockhash: tx.message.recentBlockhash,
      trade: {
        pair: "JUP/USDC",
        side: "buy",
        taker: taker.publicKey.toBase58(),
        baseAmount: stored.response.amountIn,
        quoteAmount: stored.response.amountOut,
      },
    });
    expect(pending.messageHash).toMatch(/^[0-9a-f]{64}$/);
    expect(pending.fee.feeBps).toBe(10);
    expect(BigInt(pending.fee.amount)).toBeGreaterThan(0n);
    expect([MINT.JUP, MINT.USDC]).toContain(pending.fee.mint);
    expect(pending.sentAtMs).toBeGreaterThanOrEqual(before);
    expect(pending.sentAtMs).toBeLessThanOrEqual(after);
    expect(pending.trackUntilMs - pending.sentAtMs).toBeGreaterThanOrEqual(TRACK_FOR_MS);
    expect(pending.trackUntilMs - pending.sentAtMs).toBeLessThan(TRACK_FOR_MS + 1_000);
    expect(pending.decision).toBeUndefined();
  });

  it("journals the maker's sell of the base token: the base is what leaves the maker", async () => {
    const { pending, stored } = await journaledFor({
      tokenIn: MINT.USDC,
      tokenOut: MINT.JUP,
      amount: 1_000_000n,
    });
    expect(pending.trade).toMatchObject({
      pair: "JUP/USDC",
      side: "sell",
      baseAmount: stored.response.amountOut,
      quoteAmount: stored.response.amountIn,
    });
  });
});

describe("the step's own check of the fee payer and the maker's slot", () => {
  /** A fill checked as the executor checks it (steps 1 to 4), for signAndSend to be handed as held. */
  async function held() {
    const { ports, settings } = h.executor as unknown as { ports: StepPorts; settings: SwapSettings };
    const http = inProcess(h.app);
    const { req } = await signedJupFill(h, http, 5_000_000_000n);
    const log = createLogger("silent");
    const budget = new Budget(Date.now() + 10_000);
    const seen = {};
    const checked = await checkBeforeClaim(ports, settings, req, log, budget, seen);
    if ("response" in checked) throw new Error(`the fill was refused: ${checked.response.rejectionReason}`);
    return {
      ports,
      settings,
      req,
      checked,
      base: { req, quote: checked.quote, tx: checked.tx, budget, log, seen },
    };
  }

  type Held = Parameters<typeof signAndSend>[2];
  /** A copy of `tx` with the maker's key also at `slot` (past the signers: a key no signature covers). */
  const makerAlsoAt = (tx: VersionedTransaction, slot: number) => {
    const copy = VersionedTransaction.deserialize(tx.serialize());
    copy.message.staticAccountKeys[slot] = h.maker.publicKey;
    return copy;
  };
  const cases: [string, (fill: Held["fill"], tx: Held["tx"]) => Partial<Pick<Held, "fill" | "tx">>][] = [
    [
      "a plain fill said to be a smart account's",
      (f) => ({ fill: { ...f, smartAccount: { settings: PublicKey.default, members: [] } } }),
    ],
    ["a maker slot past the required signers", (f) => ({ fill: { ...f, makerSlot: f.makerSlot + 1 } })],
    ["a maker slot holding the taker's key", (f) => ({ fill: { ...f, makerSlot: 1 } })],
    // The maker's key in the slot: only the count of required signers tells it is not a signer's.
    ...[0, 1].map((past): (typeof cases)[number] => [
      `the maker's key at slot numRequiredSignatures + ${past}`,
      (f, tx) => {
        const slot = tx.message.header.numRequiredSignatures + past;
        return { fill: { ...f, makerSlot: slot }, tx: makerAlsoAt(tx, slot) };
      },
    ]),
  ];
  for (const [name, tamper] of cases) {
    it(`refuses INVALID_FEE_PAYER, unsigned and unsent, for ${name}`, async () => {
      const { ports, settings, req, checked, base } = await held();
      const released = vi.spyOn(h.inventory, "release");
      const signs = signer.count;
      const sends = chain.sends;
      const decision = await signAndSend(ports, settings, {
        ...base,
        fill: checked.fill,
        ...tamper(checked.fill, checked.tx),
      });
      expect(decision.response).toEqual({
        quoteId: req.quoteId,
        state: "rejected",
        rejectionReason: "INVALID_FEE_PAYER: the fee payer or the maker's slot is not as validated",
      });
      expect(signer.count).toBe(signs);
      expect(chain.sends).toBe(sends);
      expect(released).toHaveBeenCalledWith(req.quoteId);
    });
  }
});
