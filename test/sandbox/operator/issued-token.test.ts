/**
 * The sandbox's permissioned token (sandbox/operator/issued-token.ts) answers a quote above its
 * per-fill issuance cap as README says: 404 ISSUANCE_CAP_EXCEEDED, counted under that reason (not
 * SIZE_ABOVE_MAX: the pair quotes past the cap), and the cap itself is quoted.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IssuedToken, withIssuedToken } from "../../../sandbox/operator/issued-token.ts";
import type { Service } from "../../../src/compose.ts";
import { MINT } from "../../support/config.ts";
import { jsonPost, quoteBody } from "../../support/quotes.ts";
import { testService } from "../../support/service.ts";

let svc: Service;
let issued: IssuedToken;
const holder = Keypair.generate().publicKey;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "issued-"));
  svc = await testService({
    env: { ISSUER_KEYPAIR: join(dir, "issuer-keypair.json") },
    vary: (f) => {
      const made = withIssuedToken(f, {
        dir,
        holders: [holder],
        burnOnSell: true,
      });
      issued = made.issued;
      return made.config;
    },
  });
});
afterAll(() => svc?.close());

const buy = (amount: bigint) =>
  svc.app.request(
    "/quote",
    jsonPost(
      quoteBody({
        tokenIn: MINT.USDC,
        tokenOut: issued.mint,
        amount: amount.toString(),
        quoteType: "exactOut",
        taker: holder.toBase58(),
      }),
    ),
  );

describe("the sandbox's issued token", () => {
  it("answers a quote one unit above the per-fill cap 404 ISSUANCE_CAP_EXCEEDED", async () => {
    const res = await buy(issued.maxPerFill + 1n);
    expect(res.status).toBe(404);
    expect(await svc.metrics.registry.metrics()).toMatch(
      /rfq_no_quote_total\{reason="ISSUANCE_CAP_EXCEEDED"\} 1\b/,
    );
  });

  it("does not answer it SIZE_ABOVE_MAX (the pair quotes past the cap)", async () => {
    expect(await svc.metrics.registry.metrics()).toMatch(
      /\nrfq_no_quote_total\{reason="SIZE_ABOVE_MAX"\} 0\n/,
    );
  });
});
