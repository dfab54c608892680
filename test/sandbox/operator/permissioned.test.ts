/**
 * Permissioned pairs through the operator simulator, over real sockets: the webhook (composed as
 * `npm start` composes it) advertises JUP on /permissioned-tokens; the simulator must then skip the
 * taker balance pre-check and the simulation and set the compute-unit limit to the 200,000 maximum,
 * leaving the balance check to the maker (docs/contract.md, "Permissioned tokens").
 */
import { Keypair, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker } from "../../../src/chain/local/seed.ts";
import { decodeFillTransaction } from "../../../src/program/decode.ts";
import { MINT } from "../../support/config.ts";
import { createHarness, type Harness } from "../../support/harness.ts";
import { type Simulator, startSimulator } from "./simulator.ts";

let h: Harness;
let sim: Simulator;
const taker = Keypair.generate();

beforeAll(async () => {
  h = await createHarness({
    vary: (f) => ({
      ...f,
      tokens: f.tokens.map((t) => (t.mint === MINT.JUP ? { ...t, permissioned: true } : t)),
    }),
  });
  // USDC to pay with, but no JUP: a JUP sale cannot be paid.
  fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 100_000_000n } });
  sim = await startSimulator(h);
});

afterAll(async () => {
  await sim?.close();
  await h?.close();
});

describe("operator simulator: permissioned pairs", () => {
  it("flags the mint from /permissioned-tokens", () => {
    expect([...(sim.op.registry.get("mm")?.permissioned ?? [])]).toEqual([MINT.JUP]);
  });

  it("sets the 200,000 compute-unit limit without simulating, and skips the taker pre-check", async () => {
    const simulationsBefore = sim.simulations;
    const r = await sim.order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "50000000",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.status).toBe(200);
    // The taker holds no JUP, yet a transaction is built: the maker is the one to check.
    expect(r.body.errorCode).toBeUndefined();
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    const decoded = decodeFillTransaction(tx);
    if (!decoded.ok) throw new Error(decoded.problem);
    const limit = decoded.decoded.computeBudget.find((i) => i.kind === "computeUnitLimit");
    expect(limit && "units" in limit ? limit.units : undefined).toBe(200_000);
    expect(sim.simulations).toBe(simulationsBefore);
  });

  it("does simulate a pair that is not permissioned (the counter above can move)", async () => {
    const before = sim.simulations;
    const r = await sim.order({
      inputMint: MINT.USDC,
      outputMint: MINT.SOL,
      amount: "10000000",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.status).toBe(200);
    expect(sim.simulations).toBe(before + 1);
  });

  it("lets the maker refuse a taker that cannot pay, and does not count the honest refusal", async () => {
    const r = await sim.order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "50000000",
      taker: taker.publicKey.toBase58(),
    });
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    tx.sign([taker]);
    const { body } = await sim.execute("/swap/v2/execute", {
      signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
      requestId: r.body.requestId,
    });
    expect(body).toMatchObject({ status: "Failed", code: -2004 });
    expect(body.error).toMatch(/insufficientBalance/);
    expect(sim.op.fillRate.status("mm")).toMatchObject({ fills: 0, failures: 0 });
  });

  it("still pre-checks the taker on an open pair", async () => {
    const r = await sim.order({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: "5000000000",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.body).toMatchObject({ errorCode: 1, transaction: "" });
  });
});
