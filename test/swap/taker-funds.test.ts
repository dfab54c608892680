/**
 * The taker's funds check (src/swap/taker-funds.ts) on a local chain, at its edges: the input token
 * account (missing, not of the input mint, frozen, one unit short), the rent of the ATAs the fill
 * creates (per payer, once per ATA, Token-2022's larger account), native SOL input, and a chain that
 * cannot be read. The same refusals through POST /swap are in rejections.error.test.ts.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { Chain } from "../../src/chain/interface.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { ata, creditToken, fundTaker, seedFromConfig } from "../../src/chain/local/seed.ts";
import type { ValidatedFill } from "../../src/fill/validate.ts";
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { checkTakerFunds } from "../../src/swap/taker-funds.ts";
import { MINT, testConfig } from "../support/config.ts";

const JUP = new PublicKey(MINT.JUP);
const USDC = new PublicKey(MINT.USDC);

function bed() {
  const chain = LocalChain.create();
  seedFromConfig(chain, testConfig().file, Keypair.generate().publicKey);
  return chain;
}

/** The fields of a validated fill the check reads: the taker sells `inputAmount` JUP from its ATA. */
function fillOf(chain: LocalChain, taker: PublicKey, inputAmount: bigint, over: Partial<ValidatedFill> = {}) {
  return {
    taker,
    nativeSolIn: false,
    takerInputTokenAccount: ata(chain, taker, JUP),
    inputMint: JUP,
    inputAmount,
    ataCreations: [],
    ...over,
  } as unknown as ValidatedFill;
}

/** A CreateIdempotent of `owner`'s ATA of `mint`, paid by `payer`. */
function creation(
  chain: LocalChain,
  payer: PublicKey,
  owner: PublicKey,
  mint: PublicKey,
  program = TOKEN_PROGRAM_ID,
) {
  return {
    payer,
    owner,
    mint,
    tokenProgram: program,
    ata: program.equals(TOKEN_PROGRAM_ID) ? ata(chain, owner, mint) : Keypair.generate().publicKey,
  };
}

const rent = (chain: LocalChain, size: number) => chain.getMinimumBalanceForRentExemption(size);

describe("the taker's input token account", () => {
  it("passes a taker holding exactly the input amount, and refuses one unit short, saying both", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 10_000_000n, tokens: { [MINT.JUP]: 1_000n } });
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1_000n), 5_000)).toEqual({
      ok: true,
      takerLamports: 10_000_000n,
      ataRentLamports: 0n,
    });
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1_001n), 5_000)).toEqual({
      ok: false,
      code: "INSUFFICIENT_BALANCE",
      context: "the taker holds 1000 of the input mint, the fill needs 1001",
    });
  });

  it("answers insufficient balance, naming the account, when the taker has no input token account", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 10_000_000n });
    const account = ata(chain, taker, JUP);
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1n), 5_000)).toEqual({
      ok: false,
      code: "INSUFFICIENT_BALANCE",
      context: `the taker's input token account ${account.toBase58()} does not exist`,
    });
  });

  it("does not call an account of another mint, or no token account at all, a balance problem", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 10_000_000n, tokens: { [MINT.USDC]: 5_000n } });
    const unverifiable = {
      ok: false,
      code: "TAKER_FUNDS_UNVERIFIABLE",
      context: "the taker's input account is not a token account of the input mint",
    };
    const usdcAccount = ata(chain, taker, USDC);
    expect(
      await checkTakerFunds(chain, fillOf(chain, taker, 1n, { takerInputTokenAccount: usdcAccount }), 5_000),
    ).toEqual(unverifiable);
    // The taker's wallet: an account, but no token account data.
    expect(
      await checkTakerFunds(chain, fillOf(chain, taker, 1n, { takerInputTokenAccount: taker }), 5_000),
    ).toEqual(unverifiable);
  });

  it("does not read a balance from an account too short to be a token account, even one starting with the mint", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 10_000_000n });
    const account = ata(chain, taker, JUP);
    chain.svm.setAccount(account, {
      lamports: 10_000_000,
      data: Uint8Array.from([...JUP.toBytes(), ...new Uint8Array(132)]), // 164 bytes
      owner: TOKEN_PROGRAM_ID,
      executable: false,
    });
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1n), 5_000)).toEqual({
      ok: false,
      code: "TAKER_FUNDS_UNVERIFIABLE",
      context: "the taker's input account is not a token account of the input mint",
    });
  });

  it("does not count on a frozen input token account", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 10_000_000n, tokens: { [MINT.JUP]: 5_000n } });
    const address = ata(chain, taker, JUP);
    const acc = chain.svm.getAccount(address)!;
    const data = Uint8Array.from(acc.data);
    data[108] = 2; // AccountState::Frozen
    chain.svm.setAccount(address, { ...acc, data });
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1n), 5_000)).toEqual({
      ok: false,
      code: "TAKER_FUNDS_UNVERIFIABLE",
      context: "the taker's input token account is frozen",
    });
  });
});

describe("the rent of the ATAs the fill creates", () => {
  it("passes a taker with exactly the new ATA's rent plus its own rent exemption, and refuses one lamport less", async () => {
    const chain = bed();
    const ataRent = await rent(chain, 165);
    const walletRent = await rent(chain, 0);
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: ataRent + walletRent, tokens: { [MINT.JUP]: 5_000n } });
    const create = { ataCreations: [creation(chain, taker, taker, USDC)] };
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1n, create), 5_000)).toEqual({
      ok: true,
      takerLamports: ataRent + walletRent,
      ataRentLamports: ataRent,
    });
    const poorer = Keypair.generate().publicKey;
    fundTaker(chain, poorer, { sol: ataRent + walletRent - 1n, tokens: { [MINT.JUP]: 5_000n } });
    expect(
      await checkTakerFunds(
        chain,
        fillOf(chain, poorer, 1n, { ataCreations: [creation(chain, poorer, poorer, USDC)] }),
        5_000,
      ),
    ).toEqual({
      ok: false,
      code: "INSUFFICIENT_BALANCE_FOR_ATA_CREATION",
      context: `${poorer.toBase58()} has ${ataRent + walletRent - 1n} lamports; creating the token account needs ${ataRent} and ${walletRent} must remain`,
    });
  });

  it("charges an ATA created twice once, and one that exists already nothing", async () => {
    const chain = bed();
    const ataRent = await rent(chain, 165);
    const walletRent = await rent(chain, 0);
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: ataRent + walletRent, tokens: { [MINT.JUP]: 5_000n } });
    const twice = [creation(chain, taker, taker, USDC), creation(chain, taker, taker, USDC)];
    expect(
      await checkTakerFunds(chain, fillOf(chain, taker, 1n, { ataCreations: twice }), 5_000),
    ).toMatchObject({
      ok: true,
      ataRentLamports: ataRent,
    });
    creditToken(chain, taker, USDC, 0n);
    expect(
      await checkTakerFunds(chain, fillOf(chain, taker, 1n, { ataCreations: twice }), 5_000),
    ).toMatchObject({
      ok: true,
      ataRentLamports: 0n,
    });
  });

  it("charges an ATA created by two payers to the first, whose creation is the one that pays", async () => {
    const chain = bed();
    const ataRent = await rent(chain, 165);
    const walletRent = await rent(chain, 0);
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: ataRent + walletRent, tokens: { [MINT.JUP]: 5_000n } });
    const broke = Keypair.generate().publicKey;
    const both = [creation(chain, taker, taker, USDC), creation(chain, broke, taker, USDC)];
    expect(
      await checkTakerFunds(chain, fillOf(chain, taker, 1n, { ataCreations: both }), 5_000),
    ).toMatchObject({
      ok: true,
      ataRentLamports: ataRent,
    });
  });

  it("charges a Token-2022 ATA the rent of its larger account", async () => {
    const chain = bed();
    const ataRent = await rent(chain, 170);
    const walletRent = await rent(chain, 0);
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: ataRent + walletRent, tokens: { [MINT.JUP]: 5_000n } });
    const create = [creation(chain, taker, taker, USDC, TOKEN_2022_PROGRAM_ID)];
    expect(
      await checkTakerFunds(chain, fillOf(chain, taker, 1n, { ataCreations: create }), 5_000),
    ).toMatchObject({
      ok: true,
      ataRentLamports: ataRent,
    });
    const poorer = Keypair.generate().publicKey;
    fundTaker(chain, poorer, { sol: ataRent + walletRent - 1n, tokens: { [MINT.JUP]: 5_000n } });
    const poorerCreate = [creation(chain, poorer, poorer, USDC, TOKEN_2022_PROGRAM_ID)];
    expect(
      await checkTakerFunds(chain, fillOf(chain, poorer, 1n, { ataCreations: poorerCreate }), 5_000),
    ).toMatchObject({ ok: false, code: "INSUFFICIENT_BALANCE_FOR_ATA_CREATION" });
  });

  it("charges the rent to the payer of each creation, not the taker", async () => {
    const chain = bed();
    const ataRent = await rent(chain, 165);
    const walletRent = await rent(chain, 0);
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: walletRent, tokens: { [MINT.JUP]: 5_000n } });
    const payer = Keypair.generate().publicKey;
    fundTaker(chain, payer, { sol: ataRent + walletRent });
    const create = [creation(chain, payer, taker, USDC)];
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1n, { ataCreations: create }), 5_000)).toEqual({
      ok: true,
      takerLamports: walletRent,
      ataRentLamports: 0n,
    });
    const broke = Keypair.generate().publicKey;
    const unpaid = [creation(chain, broke, taker, USDC)];
    expect(await checkTakerFunds(chain, fillOf(chain, taker, 1n, { ataCreations: unpaid }), 5_000)).toEqual({
      ok: false,
      code: "INSUFFICIENT_BALANCE_FOR_ATA_CREATION",
      context: `${broke.toBase58()} has 0 lamports; creating the token account needs ${ataRent} and ${walletRent} must remain`,
    });
  });
});

describe("native SOL input", () => {
  it("passes a taker whose lamports cover exactly the input, the ATA rent and its rent exemption, and refuses one less", async () => {
    const chain = bed();
    const ataRent = await rent(chain, 165);
    const walletRent = await rent(chain, 0);
    const need = 1_000_000n + ataRent + walletRent;
    const placeholder = Keypair.generate().publicKey; // the order engine's id, not an account
    const check = async (lamports: bigint) => {
      const taker = Keypair.generate().publicKey;
      fundTaker(chain, taker, { sol: lamports });
      const fill = fillOf(chain, taker, 1_000_000n, {
        nativeSolIn: true,
        takerInputTokenAccount: placeholder,
        ataCreations: [creation(chain, taker, taker, USDC)],
      });
      return checkTakerFunds(chain, fill, 5_000);
    };
    expect(await check(need)).toEqual({ ok: true, takerLamports: need, ataRentLamports: ataRent });
    expect(await check(need - 1n)).toEqual({
      ok: false,
      code: "INSUFFICIENT_BALANCE",
      context: `the taker has ${need - 1n} lamports; the fill needs 1000000 plus ${ataRent} of token account rent, and ${walletRent} must remain`,
    });
  });

  it("needs the input plus the taker's rent exemption when no ATA is created", async () => {
    const chain = bed();
    const walletRent = await rent(chain, 0);
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 1_000_000n + walletRent - 1n });
    const fill = fillOf(chain, taker, 1_000_000n, {
      nativeSolIn: true,
      takerInputTokenAccount: Keypair.generate().publicKey,
    });
    expect(await checkTakerFunds(chain, fill, 5_000)).toMatchObject({
      ok: false,
      code: "INSUFFICIENT_BALANCE",
    });
  });
});

describe("a chain that cannot be read", () => {
  it("says it could not read the balances, never that the taker cannot pay", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    const failing = {
      getAccounts: () => Promise.reject(new Error("rpc 503")),
      getMinimumBalanceForRentExemption: (n: number) => chain.getMinimumBalanceForRentExemption(n),
    } as unknown as Chain;
    expect(await checkTakerFunds(failing, fillOf(chain, taker, 1n), 5_000)).toEqual({
      ok: false,
      code: "TAKER_FUNDS_UNVERIFIABLE",
      context: "could not read the taker's balances: rpc 503",
    });
  });

  it("does not trust an answer with a different number of accounts than asked", async () => {
    const chain = bed();
    const taker = Keypair.generate().publicKey;
    fundTaker(chain, taker, { sol: 10_000_000n, tokens: { [MINT.JUP]: 5_000n } });
    const short = {
      getAccounts: async (keys: PublicKey[]) => (await chain.getAccounts(keys)).slice(1),
      getMinimumBalanceForRentExemption: (n: number) => chain.getMinimumBalanceForRentExemption(n),
    } as unknown as Chain;
    expect(await checkTakerFunds(short, fillOf(chain, taker, 1n), 5_000)).toEqual({
      ok: false,
      code: "TAKER_FUNDS_UNVERIFIABLE",
      context: "the chain answered a different number of accounts",
    });
  });
});
