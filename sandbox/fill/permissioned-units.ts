/**
 * Measures, for `npm run bench:permissioned` (bench/permissioned-cu.ts) and its test, the compute units of the largest permissioned
 * fill the configuration allows, measured on the local chain (docs/contract.md, "Permissioned tokens":
 * the operator runs no quote-time simulation, sets the limit to 200,000 and the fill must fit).
 *
 * For every token in the configuration's `issuance` (CONFIG; when it has none, the sandbox's TBILL,
 * sandbox/operator/issued-token.ts), against each pair it trades in: the buy (the issuer's companion
 * mints, then the fill pays it out) and the sell (the fill, then the companion burns), each at the
 * largest size the caps and the pair allow, with the taker's output token account created in the fill
 * (the operator's worst case). The fill is simulated with signatures verified after the companion that
 * precedes it has run, as it runs in its bundle. Compute units are deterministic: the figures are exact.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair, PublicKey } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { creditToken, fundTaker, seedFromConfig } from "../../src/chain/local/seed.ts";
import { PERMISSIONED_COMPUTE_UNIT_LIMIT } from "../../src/fill/rules/compute-unit-limit.ts";
import { buildCompanion } from "../../src/issuance/companion.ts";
import type { IssuanceNeed } from "../../src/issuance/policy.ts";
import { NATIVE_MINT } from "../../src/program/layout.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import { withIssuedToken } from "../operator/issued-token.ts";
import { buildFillTransaction } from "./builder.ts";

export interface PermissionedMeasurement {
  symbol: string;
  pair: string;
  direction: "buy (mint first)" | "sell (burn after)";
  /** What the fill moves of the issued token (its largest allowed size). */
  amount: bigint;
  fillUnits: bigint;
  companionUnits: bigint;
}

/** Measures every issued token's largest buy and sell fill; throws if a simulation fails. */
export async function measurePermissionedFills(file: FileConfig): Promise<PermissionedMeasurement[]> {
  const out: PermissionedMeasurement[] = [];
  for (const [symbol, policy] of Object.entries(file.issuance)) {
    const token = file.tokens.find((t) => t.symbol === symbol);
    if (!token) continue;
    for (const pair of file.pairs.filter((p) => p.base === symbol || p.quote === symbol)) {
      const other = file.tokens.find((t) => t.symbol === (pair.base === symbol ? pair.quote : pair.base));
      if (!other) continue;
      // The issued token's largest size: the per-fill cap, and the pair's maxBase when it is the base.
      const cap = BigInt(policy.maxPerFill);
      const amount = pair.base === symbol && BigInt(pair.maxBase) < cap ? BigInt(pair.maxBase) : cap;
      for (const direction of ["mint", "burn"] as const) {
        const chain = LocalChain.create({ slotMs: 3_600_000 });
        const maker = Keypair.generate();
        const taker = Keypair.generate();
        const issuer = Keypair.generate();
        seedFromConfig(chain, file, maker.publicKey, { issuer: issuer.publicKey });
        const tip = Keypair.generate().publicKey;
        chain.airdrop(tip, 1_000_000_000n);
        const issuedMint = new PublicKey(token.mint);
        const otherMint = new PublicKey(other.mint);
        const otherNative = otherMint.equals(NATIVE_MINT);
        // The taker pays with the other token (buy) or with the issued one it holds (sell).
        fundTaker(chain, taker.publicKey, { sol: 100_000_000_000n });
        if (direction === "mint" && !otherNative) creditToken(chain, taker.publicKey, otherMint, 10n ** 18n);
        const need: IssuanceNeed = {
          issued: {
            token,
            policy,
            maxPerFill: cap,
            maxPerDay: BigInt(policy.maxPerDay),
            tipLamports: BigInt(policy.tipLamports),
            allowlist: undefined,
          },
          direction,
          amount,
        };
        const { blockhash } = await chain.getLatestBlockhash();
        const makerSigner = new KeypairSigner(maker);
        const issuerSigner = new KeypairSigner(issuer);
        const makerAta = (mint: PublicKey, program: PublicKey) =>
          PublicKey.findProgramAddressSync(
            [maker.publicKey.toBuffer(), program.toBuffer(), mint.toBuffer()],
            new PublicKey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"),
          )[0];
        const issuedProgram = new PublicKey(token.tokenProgram);
        const otherProgram = new PublicKey(other.tokenProgram);
        const companion = await buildCompanion({
          need,
          makerTokenAccount: makerAta(issuedMint, issuedProgram),
          maker: makerSigner,
          issuer: issuerSigner,
          tipAccount: tip,
          recentBlockhash: blockhash,
          quoteId: "permissioned-units",
        });
        if (direction === "burn") creditToken(chain, taker.publicKey, issuedMint, amount);
        const fill = buildFillTransaction({
          maker: maker.publicKey,
          taker: taker.publicKey,
          inputMint: direction === "mint" ? otherMint : issuedMint,
          outputMint: direction === "mint" ? issuedMint : otherMint,
          inputTokenProgram: direction === "mint" ? otherProgram : issuedProgram,
          outputTokenProgram: direction === "mint" ? issuedProgram : otherProgram,
          inputAmount: direction === "mint" ? 1_000_000n : amount,
          outputAmount: direction === "mint" ? amount : 1_000_000n,
          expireAt: (await chain.getUnixTimestamp()) + 60n,
          feeBps: 10,
          exactOut: false,
          computeUnitLimit: PERMISSIONED_COMPUTE_UNIT_LIMIT,
          computeUnitPrice: 10_000n,
          recentBlockhash: blockhash,
          createTakerOutputAta: !(direction === "burn" && otherNative),
          nativeSolIn: direction === "mint" && otherNative,
          nativeSolOut: direction === "burn" && otherNative,
        });
        fill.sign([taker]);
        await makerSigner.sign(fill);
        let companionUnits: bigint;
        let fillUnits: bigint;
        if (direction === "mint") {
          const c = chain.submit(companion);
          if (c.kind !== "confirmed")
            throw new Error(`${symbol} mint companion: ${c.kind}: ${"error" in c ? c.error : ""}`);
          companionUnits = c.unitsConsumed;
          const f = chain.simulate(fill, { sigVerify: true });
          if (f.errJson !== null) throw new Error(`${symbol} buy fill: simulation failed: ${f.error}`);
          fillUnits = f.unitsConsumed;
        } else {
          const f = chain.submit(fill);
          if (f.kind !== "confirmed")
            throw new Error(`${symbol} sell fill: ${f.kind}: ${"error" in f ? f.error : ""}`);
          fillUnits = f.unitsConsumed;
          const c = chain.simulate(companion, { sigVerify: true });
          if (c.errJson !== null) throw new Error(`${symbol} burn companion: simulation failed: ${c.error}`);
          companionUnits = c.unitsConsumed;
        }
        out.push({
          symbol,
          pair: `${pair.base}/${pair.quote}`,
          direction: direction === "mint" ? "buy (mint first)" : "sell (burn after)",
          amount,
          fillUnits,
          companionUnits,
        });
      }
    }
  }
  return out;
}

/** The configuration to measure: CONFIG's issued tokens, else the sandbox's TBILL beside them. */
export function benchConfig(): { file: FileConfig; note: string } {
  const path = process.env.CONFIG || DEFAULT_CONFIG_PATH;
  const file = parseFileConfig(JSON.parse(readFileSync(path, "utf8")), path);
  if (Object.keys(file.issuance).length > 0) return { file, note: path };
  const dir = mkdtempSync(join(tmpdir(), "rfq-bench-issued-"));
  const { config } = withIssuedToken(file, {
    dir,
    holders: [Keypair.generate().publicKey],
    burnOnSell: true,
  });
  return { file: config, note: `${path} + the sandbox's TBILL (sandbox/operator/issued-token.ts)` };
}
