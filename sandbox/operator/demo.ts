/**
 * `npm run demo`: plays a taker against the sandbox. Starts a private stack (local chain server,
 * Redis-backed webhook, operator simulator) in data/demo/, then for each swap: asks the operator for
 * an order, signs it, executes it, and compares the taker's balances before and after with the order.
 * Exits non-zero if any swap fails or any balance moved by anything other than what was quoted.
 *
 *   npm run demo
 */
import { join } from "node:path";

import type { Keypair } from "@solana/web3.js";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import { STAND_IN_POOL_AUTHORITY } from "../../src/chain/local/rfq-v2-emulation.ts";
import { parseArgs } from "../../src/cli/args.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { startStack } from "./stack.ts";
import { expectedDeltas, type OrderAsk, TakerClient } from "./taker.ts";
import { NATIVE, TokenUnits } from "./units.ts";

const SOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";
const JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";
const SYMBOL: Record<string, string> = { [SOL]: "SOL", [USDC]: "USDC", [USDT]: "USDT", [JUP]: "JUP" };

type DemoSwap = OrderAsk & {
  what: string;
  /** By the sandbox's smart-account (Squads) taker: its vault takes, its members sign. */
  smartAccount?: boolean;
};

const SWAPS: DemoSwap[] = [
  {
    what: "sell 25 USDC for JUP (exactIn, token to token)",
    inputMint: USDC,
    outputMint: JUP,
    amount: 25_000_000n,
  },
  {
    what: "sell 10 USDC for SOL (exactIn, native SOL out)",
    inputMint: USDC,
    outputMint: SOL,
    amount: 10_000_000n,
  },
  {
    what: "buy 5 USDC with SOL (exactOut, native SOL in; the operator fee comes out of the 5)",
    inputMint: SOL,
    outputMint: USDC,
    amount: 5_000_000n,
    swapMode: "ExactOut",
  },
  {
    what: "sell 0.1 SOL for USDT (the taker has no USDT account: it pays the rent for one)",
    inputMint: SOL,
    outputMint: USDT,
    amount: 100_000_000n,
  },
  {
    what: "sell 20 USDC for JUP from a smart account (Squads): the fill wrapped in executeTransactionSyncV2, its members sign, the first pays the fees",
    inputMint: USDC,
    outputMint: JUP,
    amount: 20_000_000n,
    smartAccount: true,
  },
];

/**
 * The permissioned token the sandbox's maker issues (sandbox/operator/issued-token.ts): the maker holds
 * none, so the buy is minted in one bundle with the fill, and the sell burned in one bundle with it.
 */
function issuedSwaps(mint: string): (OrderAsk & { what: string; supply: "rises" | "falls" })[] {
  return [
    {
      what: "buy 100 TBILL with USDC (exactOut; permissioned: the maker holds none, the issuer mints it in the fill's bundle)",
      inputMint: USDC,
      outputMint: mint,
      amount: 100_000_000n,
      swapMode: "ExactOut",
      supply: "rises",
    },
    {
      what: "sell the 100 TBILL back for USDC (exactIn; permissioned: burned in the fill's bundle)",
      inputMint: mint,
      outputMint: USDC,
      amount: 100_000_000n,
      supply: "falls",
    },
  ];
}

/** Tokens with their units (the configuration's decimals), set once the stack is up. */
let units = new TokenUnits([]);
/** A change in tokens with the unit, signed ("-9.99139 USDC"): never smallest units labelled as tokens. */
const fmt = (mint: string, v: bigint) => units.delta(mint, v);

const USAGE = {
  command: "npm run demo",
  summary:
    "Plays a taker against a private sandbox (local chain server, Redis-backed webhook, operator\n" +
    "simulator, in data/demo/): four swaps, one more by a smart-account (Squads) taker, then a buy of the permissioned token TBILL the maker holds\n" +
    "none of (minted in one bundle with the fill) and its sale back (burned with it), each ordered,\n" +
    "signed, executed and checked against the taker's balances and TBILL's supply. Exits non-zero if\n" +
    "any swap fails or any balance moved by anything else.",
  flags: {},
} as const;

async function main(): Promise<number> {
  parseArgs(process.argv.slice(2), USAGE);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  say("starting the sandbox (chain, webhook, operator) for the demo ...");
  const stack = await startStack({
    dir: join(REPO_ROOT, "data", "demo"),
    takers: [{ name: "demo", sol: 20_000_000_000n, tokens: { USDC: 1_000_000_000n, JUP: 1_000_000_000n } }],
    issuedToken: true,
    smartAccountTaker: { name: "squads", sol: 1_000_000_000n, tokens: { USDC: 1_000_000_000n } },
    rfqV2: true,
    say: (s) => say(`  ${s}`),
  });
  const issued = stack.issued;
  if (issued) SYMBOL[issued.mint] = issued.symbol;
  units = new TokenUnits(stack.config.tokens);
  const swaps: (DemoSwap & { supply?: "rises" | "falls" })[] = [
    ...SWAPS,
    ...(issued ? issuedSwaps(issued.mint) : []),
  ];
  let failures = 0;
  try {
    const taker = stack.takers[0]!.keypair;
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const mints = [SOL, USDC, USDT, JUP, ...(issued ? [issued.mint] : [])];
    const sa = stack.smartAccount;
    say(`taker ${taker.publicKey.toBase58()}`);
    if (sa)
      say(
        `smart-account taker: vault ${sa.vault.toBase58()}, members ${sa.members.map((m) => m.publicKey.toBase58()).join(", ")}`,
      );
    say("");
    for (const [i, swap] of swaps.entries()) {
      say(`${i + 1}. ${swap.what}`);
      if (swap.smartAccount && !sa) {
        say("   FAIL the stack has no smart-account taker");
        failures++;
        continue;
      }
      const takerKey = swap.smartAccount && sa ? sa.vault : taker.publicKey;
      const signers = swap.smartAccount && sa ? sa.members : taker;
      const order = await client.order(swap, takerKey);
      if (!order.ok) {
        say(`   FAIL order: ${order.status} ${order.error}`);
        failures++;
        continue;
      }
      const o = order.body;
      say(
        `   order ${o.requestId}: in ${units.amount(o.inputMint, o.inAmount)}, out ${units.amount(o.outputMint, o.outAmount)} ` +
          `(fee ${units.amount(o.feeMint ?? o.outputMint, o.platformFee.amount ?? "0")} at ${o.feeBps} bps), maker ${o.maker}, expires ${o.expireAt}` +
          `${o.rentFeePayer ? `, taker pays ${units.amount(NATIVE, BigInt(o.rentFeeLamports))} ATA rent` : ""}`,
      );
      const before = await client.balances(takerKey, mints);
      const supplyBefore = issued ? await client.supply(issued.mint) : 0n;
      const result = await client.execute(o, signers, i % 2 ? "/ultra/v1/execute" : "/swap/v2/execute");
      const after = await client.balances(takerKey, mints);
      const supplyAfter = issued ? await client.supply(issued.mint) : 0n;
      if (!result.ok || result.body.status !== "Success") {
        say(`   FAIL execute: ${result.ok ? `${result.body.code} ${result.body.error}` : result.error}`);
        failures++;
        continue;
      }
      const r = result.body;
      say(`   executed: ${r.signature} in slot ${r.slot}, code ${r.code}`);
      const expected = expectedDeltas(o, takerKey);
      const problems: string[] = [];
      for (const key of [NATIVE, ...mints]) {
        const got = (after[key] ?? 0n) - (before[key] ?? 0n);
        const want = expected[key] ?? 0n;
        const line = `   ${units.label(key).padEnd(15)} ${units.amount(key, before[key] ?? 0n).padStart(24)} -> ${units.amount(key, after[key] ?? 0n).padStart(24)}  ${fmt(key, got)}`;
        if (got !== want)
          problems.push(
            `${units.label(key)}: moved ${fmt(key, got)}, quote says ${fmt(key, want)} (${got} vs ${want} smallest units)`,
          );
        say(`${line}${got !== want ? `   <-- expected ${fmt(key, want)}` : ""}`);
      }
      if (r.totalInputAmount !== o.inAmount)
        problems.push(`execute totalInputAmount ${r.totalInputAmount} != order inAmount ${o.inAmount}`);
      if (r.totalOutputAmount !== o.outAmount)
        problems.push(`execute totalOutputAmount ${r.totalOutputAmount} != order outAmount ${o.outAmount}`);
      if (issued && swap.supply) {
        // Minted for the buy, burned for the sell: supply moves by exactly what the taker received or gave.
        const moved = supplyAfter - supplyBefore;
        const want = swap.supply === "rises" ? BigInt(o.outAmount) : -BigInt(o.inAmount);
        say(
          `   ${`${issued.symbol} supply`.padEnd(15)} ${units.amount(issued.mint, supplyBefore).padStart(24)} -> ${units.amount(issued.mint, supplyAfter).padStart(24)}  ${fmt(issued.mint, moved)}`,
        );
        if (moved !== want) problems.push(`${issued.symbol} supply moved ${moved}, expected ${want}`);
      }
      if (problems.length) {
        failures++;
        for (const p of problems) say(`   FAIL ${p}`);
      } else {
        say("   OK: balances moved exactly as quoted");
      }
    }
    if (stack.rfqV2) {
      say(
        `${swaps.length + 1}. buy SOL with 10 USDC over RFQ v2: the operator's swap on the maker's streamed levels, co-signed`,
      );
      const ok = await v2Swap(stack.rfqV2, taker, client, say);
      if (!ok) failures++;
      say(
        `${swaps.length + 2}. buy SOL with 10 USDC over a two-leg route: 60% on the maker's RFQ v2 levels, 40% through the local chain's stand-in AMM pool`,
      );
      if (!(await v2Swap(stack.rfqV2, taker, client, say, 4_000))) failures++;
    }
  } finally {
    await stack.close();
  }
  say(
    failures
      ? `\nDEMO FAILED: ${failures} of ${swaps.length + (stack.rfqV2 ? 2 : 0)} swaps`
      : `\nDEMO PASSED: ${swaps.length + (stack.rfqV2 ? 2 : 0)} swaps, balances as quoted${issued ? `, ${issued.symbol} supply as minted and burned` : ""}`,
  );
  return failures ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);

/**
 * One RFQ v2 swap: the stand-in offers the taker's 10 USDC against the maker's live SOL/USDC asks, the
 * webhook's stream co-signs, the stand-in lands it; the taker's USDC and SOL move exactly as the
 * program's walk of the streamed levels says. With `ammBps`, a two-leg route: that share of the input
 * goes through the local chain's stand-in AMM pool (x*y=k on its vaults), the rest over the maker's
 * levels; the taker's balances then move as the walk and the pool's vaults say.
 */
async function v2Swap(
  v2: NonNullable<Awaited<ReturnType<typeof startStack>>["rfqV2"]>,
  taker: Keypair,
  client: TakerClient,
  say: (s: string) => void,
  ammBps = 0,
): Promise<boolean> {
  const until = Date.now() + 15_000;
  let live = v2.standIn.liveSet(v2.makerId, SOL, USDC);
  while (!live && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    live = v2.standIn.liveSet(v2.makerId, SOL, USDC);
  }
  if (!live) {
    say("   FAIL no SOL/USDC levels streamed within 15 s");
    return false;
  }
  const lot = BigInt(live.quote.lot_size_base);
  const asks = live.quote.ask_levels.map((l) => ({
    perLot: (BigInt(l.price) * lot) / 10n ** 9n,
    lots: BigInt(l.volume) / lot,
  }));
  say(
    `   levels: sequence ${live.quote.sequence_number}, lot ${units.amount(SOL, lot)}, best ask ${units.amount(USDC, asks[0]?.perLot ?? 0n)} per lot`,
  );
  const inAmount = 10_000_000n;
  const ammIn = (inAmount * BigInt(ammBps)) / 10_000n;
  const walk = sweep("bid", inAmount - ammIn, asks, lot);
  const pool = ammBps ? await client.balances(STAND_IN_POOL_AUTHORITY, [SOL, USDC]) : undefined;
  const ammOut = pool ? (ammIn * (pool[SOL] ?? 0n)) / ((pool[USDC] ?? 0n) + ammIn) : 0n;
  const before = await client.balances(taker.publicKey, [SOL, USDC]);
  const r = await v2.standIn.offerSwap({
    makerId: v2.makerId,
    taker,
    baseMint: SOL,
    quoteMint: USDC,
    baseTokenProgram: TOKEN_PROGRAM,
    quoteTokenProgram: TOKEN_PROGRAM,
    baseDecimals: 9,
    takerSide: "bid",
    inAmount,
    timeoutMs: 20_000,
    ...(ammBps ? { amm: { bps: ammBps } } : {}),
  });
  if (!r.ok) {
    say(`   FAIL the swap: ${r.reason}`);
    return false;
  }
  say(`   landed: ${r.signature ?? "(no signature)"}, swap ${r.swapUuid}`);
  const after = await client.balances(taker.publicKey, [SOL, USDC]);
  const moved = {
    usdc: (after[USDC] ?? 0n) - (before[USDC] ?? 0n),
    sol: (after[SOL] ?? 0n) - (before[SOL] ?? 0n),
  };
  const want = { usdc: -(walk.spent + ammIn), sol: walk.out + ammOut };
  if (ammBps)
    say(
      `   the taker pays the maker ${units.amount(USDC, walk.spent)} for ${units.amount(SOL, walk.out)}, the pool ${units.amount(USDC, ammIn)} for ${units.amount(SOL, ammOut)}`,
    );
  say(
    `   USDC ${fmt(USDC, moved.usdc)} (${ammBps ? "levels and pool say" : "levels say"} ${fmt(USDC, want.usdc)}), SOL ${fmt(SOL, moved.sol)} (${ammBps ? "levels and pool say" : "levels say"} ${fmt(SOL, want.sol)})`,
  );
  if (moved.usdc !== want.usdc || moved.sol !== want.sol) {
    say("   FAIL balances differ from the levels");
    return false;
  }
  say(`   OK: balances moved exactly as the levels${ammBps ? " and the pool" : ""} say`);
  return true;
}
