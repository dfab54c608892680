/**
 * The operator's acceptance-suite fill transaction (sandbox/fixtures/acceptance-fill-tx.json, the
 * bytes the operator's public suite sends) and the parameters it was built from, recovered by decoding
 * it.
 */
import { readFileSync } from "node:fs";
import { VersionedTransaction } from "@solana/web3.js";
import type { BuildFillParams } from "../../sandbox/fill/builder.ts";
import { decodeFillTransaction } from "../../src/program/decode.ts";

interface FixtureFile {
  transactionBase64: string;
  decoded: { bytes: number; recentBlockhash: string; accountKeys: string[] };
}

export const acceptanceFixture: FixtureFile = JSON.parse(
  readFileSync(new URL("../../sandbox/fixtures/acceptance-fill-tx.json", import.meta.url), "utf8"),
);

export function acceptanceFixtureBytes(): Buffer {
  return Buffer.from(acceptanceFixture.transactionBase64, "base64");
}

export function acceptanceFixtureTx(): VersionedTransaction {
  return VersionedTransaction.deserialize(acceptanceFixtureBytes());
}

/** Recovers the builder parameters from a decoded fill transaction (throws if it is not one). */
export function paramsFromFillTx(tx: VersionedTransaction): BuildFillParams {
  const r = decodeFillTransaction(tx);
  if (!r.ok) throw new Error(r.problem);
  const d = r.decoded;
  const fill = d.fills[0];
  if (!fill?.named || !fill.args) throw new Error("no well-formed fill");
  const key = (a: { key: import("@solana/web3.js").PublicKey | undefined }) => {
    if (!a.key) throw new Error("lookup-table account");
    return a.key;
  };
  const limit = d.computeBudget.find((i) => i.kind === "computeUnitLimit");
  const price = d.computeBudget.find((i) => i.kind === "computeUnitPrice");
  if (limit?.kind !== "computeUnitLimit" || price?.kind !== "computeUnitPrice") throw new Error("no budget");
  const n = fill.named;
  return {
    maker: key(n.maker),
    taker: key(n.taker),
    inputMint: key(n.inputMint),
    outputMint: key(n.outputMint),
    inputTokenProgram: key(n.inputTokenProgram),
    outputTokenProgram: key(n.outputTokenProgram),
    inputAmount: fill.args.inputAmount,
    outputAmount: fill.args.outputAmount,
    expireAt: fill.args.expireAt,
    feeBps: fill.args.feeBps,
    exactOut: fill.args.exactOut,
    computeUnitLimit: limit.units,
    computeUnitPrice: price.microLamports,
    recentBlockhash: d.recentBlockhash,
    createTakerOutputAta: d.ataCreations.length > 0,
    nativeSolIn: key(n.takerInputTokenAccount).toBase58() === "61DFfeTKM7trxYcPQCM78bJ794ddZprZpAwAnLiwTpYH",
    nativeSolOut: n.temporaryWsolTokenAccount !== undefined,
    lighthouseInstructions: [],
  };
}
