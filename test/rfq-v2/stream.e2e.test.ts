/**
 * The RFQ v2 channel over a real gRPC socket against the sandbox's stand-in of the operator's service:
 * levels streamed for every configured pair from the quoting book, a swap offered on them co-signed in
 * the maker's slot with the inventory reserved (its accounts loaded from lookup tables, as the
 * operator's are), a tampered swap (levels, accounts, lookup tables) and a swap on withdrawn levels
 * let pass, the sequence continued across a restart, and the streams reconnected after the server
 * drops.
 */
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  type AddressLookupTableAccount,
  Keypair,
  type MessageV0,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import type { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { RfqV2StandIn } from "../../sandbox/rfq-v2/server.ts";
import { createLookupTable, deactivateLookupTable } from "../../sandbox/rfq-v2/tables.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { creditSol, creditToken, tokenBalance } from "../../src/chain/local/seed.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { makeWorld } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { landOn, startV2Channel, swapsWith, until } from "../support/rfq-v2.ts";

const MAKER_ID = "maker-e2e";
const TOKEN = "jwt-for-the-stand-in-0123456789";
const closers = cleanupsAfterEach();

/** A key with SOL on the chain (the operator's payer for its lookup tables). */
function funded(chain: LocalChain): Keypair {
  const k = Keypair.generate();
  creditSol(chain, k.publicKey, 1_000_000_000n);
  return k;
}

async function stack(
  opts: {
    port?: number;
    standIn?: RfqV2StandIn;
    land?: boolean;
    sources?: ReadonlyMap<string, PriceSource>;
  } = {},
) {
  const w = makeWorld((f) => ({
    ...f,
    rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"], quoteExpirySeconds: 30, refreshSeconds: 10 },
  }));
  const standIn =
    opts.standIn ??
    new RfqV2StandIn({
      makers: [{ makerId: MAKER_ID, token: TOKEN }],
      heartbeatMs: 60_000,
      recentBlockhash: async () => (await w.chain.getLatestBlockhash()).blockhash,
      tables: { chain: w.chain, payer: funded(w.chain) },
      ...(opts.land ? { land: landOn(w.chain, { confirmed: true }) } : {}),
    });
  const url = opts.standIn
    ? `http://127.0.0.1:${standIn.port}`
    : await standIn.listen("127.0.0.1", opts.port ?? 0);
  if (!opts.standIn) closers.push(() => standIn.close());
  w.clock.t = Date.now();
  const { inventory, controls, service, registry, metrics } = await startV2Channel({
    w,
    url,
    makerId: MAKER_ID,
    token: TOKEN,
    closers,
    ...(opts.sources ? { sources: opts.sources } : {}),
  });
  return { standIn, w, inventory, controls, service, registry, metrics };
}

const solUsdc = {
  makerId: MAKER_ID,
  baseMint: MINT.SOL,
  quoteMint: MINT.USDC,
  baseTokenProgram: TOKEN_PROGRAM,
  quoteTokenProgram: TOKEN_PROGRAM,
  baseDecimals: 9,
};

/** What a hostile operator's tampering can use: the maker's key, the chain, a key with SOL on it. */
interface Hostile {
  maker: PublicKey;
  chain: LocalChain;
  payer: Keypair;
}

const lookupsWith = async (registry: Registry, outcome: string) =>
  (await registry.getSingleMetric("rfq_v2_lookup_resolutions_total")!.get()).values.find(
    (v) => v.labels.outcome === outcome,
  )?.value ?? 0;

describe("the RFQ v2 level stream against the operator's stand-in", () => {
  it("lands a co-signed swap that loads accounts from lookup tables on the local chain (route_v2 emulated) and moves balances exactly as the levels say", async () => {
    const s = await stack({ land: true });
    await until(() => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
    const live = s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC)!;
    const taker = Keypair.generate();
    const sol = new PublicKey(MINT.SOL);
    const usdc = new PublicKey(MINT.USDC);
    creditSol(s.w.chain, taker.publicKey, 1_000_000_000n);
    creditToken(s.w.chain, taker.publicKey, usdc, 500_000_000n);
    const before = {
      takerUsdc: tokenBalance(s.w.chain, taker.publicKey, usdc),
      takerSol: tokenBalance(s.w.chain, taker.publicKey, sol),
      makerUsdc: tokenBalance(s.w.chain, s.w.maker.publicKey, usdc),
      makerSol: tokenBalance(s.w.chain, s.w.maker.publicKey, sol),
    };
    const r = await s.standIn.offerSwap({ ...solUsdc, taker, takerSide: "bid", inAmount: 250_000_000n });
    expect(r).toMatchObject({ ok: true });
    // As the operator's: the leg's extra account, the mints and the maker's accounts loaded from two tables.
    expect(r.offered.message.addressTableLookups).toHaveLength(2);
    expect(r.offered.message.staticAccountKeys.some((k) => k.equals(s.standIn.legExtra))).toBe(false);
    expect(await lookupsWith(s.registry, "resolved")).toBe(1);
    const lot = BigInt(live.quote.lot_size_base);
    const levels = live.quote.ask_levels.map((l) => ({
      perLot: (BigInt(l.price) * lot) / 10n ** 9n,
      lots: BigInt(l.volume) / lot,
    }));
    const walk = sweep("bid", 250_000_000n, levels, lot);
    expect(walk.out).toBeGreaterThan(0n);
    expect(tokenBalance(s.w.chain, taker.publicKey, usdc)).toBe(before.takerUsdc - walk.spent);
    expect(tokenBalance(s.w.chain, taker.publicKey, sol)).toBe(before.takerSol + walk.out);
    expect(tokenBalance(s.w.chain, s.w.maker.publicKey, usdc)).toBe(before.makerUsdc + walk.spent);
    expect(tokenBalance(s.w.chain, s.w.maker.publicKey, sol)).toBe(before.makerSol - walk.out);
  });

  it("streams the configured pair's levels and co-signs a swap on them in the maker's slot, reserving what it pays", async () => {
    const s = await stack();
    await until(() => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
    const live = s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC)!;
    expect(live.quote.ask_levels.length).toBeGreaterThan(0);
    expect(live.quote.bid_levels.length).toBeGreaterThan(0);
    expect(live.quote.maker_address).toBe(s.w.maker.publicKey.toBase58());
    expect(s.standIn.updates[0]!.update.update_type).toBe("UPDATE_TYPE_NEW");

    const taker = Keypair.generate();
    const r = await s.standIn.offerSwap({ ...solUsdc, taker, takerSide: "bid", inAmount: 100_000_000n });
    expect(r).toMatchObject({ ok: true });
    // the stand-in checked the maker's signature at slot 1; the reservation is the program's walk
    const lot = BigInt(live.quote.lot_size_base);
    const levels = live.quote.ask_levels.map((l) => ({
      perLot: (BigInt(l.price) * lot) / 10n ** 9n,
      lots: BigInt(l.volume) / lot,
    }));
    const walk = sweep("bid", 100_000_000n, levels, lot);
    const reservations = await s.inventory.reservations();
    expect(reservations).toContainEqual(
      expect.objectContaining({
        quoteId: `v2:${r.swapUuid}`,
        mint: MINT.SOL,
        amount: walk.out,
        inputMint: MINT.USDC,
        inputAmount: walk.spent,
      }),
    );
    expect(await swapsWith(s.registry, "signed")).toBe(1);
  });

  describe("a hostile operator's swaps, each let pass unsigned with the maker's accounts unchanged on the chain", () => {
    /** The route instruction's data, changed at `offset` by `edit` (a u64 little-endian there). */
    const routeU64 = (offset: number, edit: (v: bigint) => bigint) => (tx: VersionedTransaction) => {
      const route = tx.message.compiledInstructions.find((ix) => ix.data.length > 60)!;
      const data = Buffer.from(route.data);
      data.writeBigUInt64LE(edit(data.readBigUInt64LE(offset)), offset);
      route.data = data;
      return tx;
    };
    /** The message rebuilt with its instructions changed (keys re-sorted, the signers kept). */
    const rebuild =
      (change: (ixs: TransactionInstruction[]) => TransactionInstruction[], o = { tables: true }) =>
      (tx: VersionedTransaction, tables: AddressLookupTableAccount[]) => {
        const m = TransactionMessage.decompile(tx.message, { addressLookupTableAccounts: tables });
        m.instructions = change(m.instructions);
        return new VersionedTransaction(m.compileToV0Message(o.tables ? tables : []));
      };
    const v0 = (tx: VersionedTransaction) => tx.message as MessageV0;
    /** The index the next lookup's first read-only key gets: after every key the message has. */
    const nextLoaded = (m: MessageV0) =>
      m.staticAccountKeys.length +
      m.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
    /** The maker's SOL account, named by a transfer out of it beside the route. */
    const stealSol = (maker: PublicKey) =>
      createTransferCheckedInstruction(
        getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), maker),
        new PublicKey(MINT.SOL),
        Keypair.generate().publicKey,
        maker,
        1n,
        9,
      );
    const isRoute = (ix: TransactionInstruction) =>
      ix.programId.toBase58() === "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
    const cases: [
      string,
      (
        ctx: Hostile,
      ) => (
        tx: VersionedTransaction,
        tables: AddressLookupTableAccount[],
      ) => VersionedTransaction | Promise<VersionedTransaction>,
      string,
    ][] = [
      [
        "levels the maker never streamed (the first level 1 atom per lot cheaper)",
        () => routeU64(68, (v) => v - 1n),
        "V2_LEVELS_NOT_STREAMED",
      ],
      ["more lots than the level streamed", () => routeU64(76, (v) => v + 1n), "V2_LEVELS_NOT_STREAMED"],
      [
        "levels past their validity (expire_at already gone)",
        () => routeU64(40, () => BigInt(Math.floor(Date.now() / 1000) - 1)),
        "V2_EXPIRED",
      ],
      [
        "a second RFQ leg in the route",
        () => (tx) => {
          const route = tx.message.compiledInstructions.find((ix) => ix.data.length > 60)!;
          // The RFQ step twice: step count 2, the step's bytes repeated.
          const data = Buffer.from(route.data);
          const twice = Buffer.concat([data.subarray(0, 34), data.subarray(34), data.subarray(34)]);
          twice.writeUInt32LE(2, 30);
          route.data = twice;
          return tx;
        },
        "V2_ROUTE_NOT_FOUND",
      ],
      [
        "another program in the leg's place",
        () =>
          rebuild((ixs) =>
            ixs.map((ix) => {
              if (!isRoute(ix)) return ix;
              const keys = ix.keys.map((k, i) =>
                i === 10 ? { ...k, pubkey: Keypair.generate().publicKey } : k,
              );
              return new TransactionInstruction({ programId: ix.programId, keys, data: ix.data });
            }),
          ),
        "V2_INVALID_ACCOUNTS",
      ],
      [
        "a maker account used in another instruction (a transfer out of its SOL account, all keys static)",
        ({ maker }) => rebuild((ixs) => [...ixs, stealSol(maker)], { tables: false }),
        "INVALID_MAKER_ACCOUNT_USE",
      ],
      [
        "a maker token account loaded from a lookup table into another instruction (a transfer out of its SOL account)",
        ({ maker }) =>
          async (tx, tables) => {
            const out = rebuild((ixs) => [...ixs, stealSol(maker)])(tx, tables);
            const sol = getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), maker);
            // The attack as meant: the account is not among the static keys, only in a table.
            expect(out.message.staticAccountKeys.some((k) => k.equals(sol))).toBe(false);
            return out;
          },
        "INVALID_MAKER_ACCOUNT_USE",
      ],
      [
        "the maker's authority loaded from a lookup table into another instruction (the compute-budget one)",
        ({ maker, chain, payer }) =>
          async (tx) => {
            const t = await createLookupTable(chain, payer, [maker]);
            const m = v0(tx);
            const index = nextLoaded(m);
            m.addressTableLookups.push({ accountKey: t.key, writableIndexes: [], readonlyIndexes: [0] });
            const budget = m.compiledInstructions[0]!;
            budget.accountKeyIndexes = [...budget.accountKeyIndexes, index];
            return tx;
          },
        "INVALID_MAKER_ACCOUNT_USE",
      ],
      [
        "the maker's key only in a lookup table (the fill authority loaded from it, a stranger the static signer at slot 1)",
        ({ maker, chain, payer }) =>
          async (tx) => {
            const t = await createLookupTable(chain, payer, [maker]);
            const m = v0(tx);
            const index = nextLoaded(m);
            m.addressTableLookups.push({ accountKey: t.key, writableIndexes: [], readonlyIndexes: [0] });
            m.staticAccountKeys[1] = Keypair.generate().publicKey;
            for (const ix of m.compiledInstructions)
              ix.accountKeyIndexes = ix.accountKeyIndexes.map((i) => (i === 1 ? index : i));
            return tx;
          },
        "V2_INVALID_SIGNERS",
      ],
      [
        "a lookup table that does not exist",
        () => (tx) => {
          v0(tx).addressTableLookups[1]!.accountKey = Keypair.generate().publicKey;
          return tx;
        },
        "V2_LOOKUP_TABLE_NOT_FOUND",
      ],
      [
        "a deactivated lookup table (a copy of the pair's table, then deactivated)",
        ({ chain, payer }) =>
          async (tx, tables) => {
            const pair = tables[1]!;
            const copy = await createLookupTable(chain, payer, pair.state.addresses);
            await deactivateLookupTable(chain, payer, { key: copy.key, authority: copy.authority });
            const lookup = v0(tx).addressTableLookups.find((l) => l.accountKey.equals(pair.key))!;
            lookup.accountKey = copy.key;
            return tx;
          },
        "V2_LOOKUP_TABLE_DEACTIVATED",
      ],
      [
        "an index beyond a lookup table's addresses",
        () => (tx) => {
          v0(tx).addressTableLookups[0]!.readonlyIndexes[0] = 200;
          return tx;
        },
        "V2_LOOKUP_INDEX_OUT_OF_RANGE",
      ],
      [
        "a fill for a maker address that is not ours",
        ({ maker }) => {
          const other = Keypair.generate().publicKey;
          return rebuild((ixs) =>
            ixs.map(
              (ix) =>
                new TransactionInstruction({
                  programId: ix.programId,
                  keys: ix.keys.map((k) => (k.pubkey.equals(maker) ? { ...k, pubkey: other } : k)),
                  data: ix.data,
                }),
            ),
          );
        },
        "V2_INVALID_SIGNERS",
      ],
    ];
    it.each(cases)("%s", async (_name, tamper, code) => {
      const s = await stack({ land: true });
      await until(() => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
      const taker = Keypair.generate();
      creditSol(s.w.chain, taker.publicKey, 1_000_000_000n);
      creditToken(s.w.chain, taker.publicKey, new PublicKey(MINT.USDC), 500_000_000n);
      const makerAccounts = () =>
        [MINT.SOL, MINT.USDC].map((m) => tokenBalance(s.w.chain, s.w.maker.publicKey, new PublicKey(m)));
      const before = makerAccounts();
      const r = await s.standIn.offerSwap({
        ...solUsdc,
        taker,
        takerSide: "bid",
        inAmount: 250_000_000n,
        timeoutMs: 1_500,
        tamper: tamper({ maker: s.w.maker.publicKey, chain: s.w.chain, payer: funded(s.w.chain) }),
      });
      expect(r).toMatchObject({ ok: false, reason: "timeout" });
      expect(await swapsWith(s.registry, code)).toBe(1);
      expect(makerAccounts()).toEqual(before);
      expect(await s.inventory.reservations()).toEqual([]);
    });
  });

  it("lets a swap pass unsigned when the operator's levels are one quote atom per lot better for the taker than streamed", async () => {
    const s = await stack();
    await until(() => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
    const r = await s.standIn.offerSwap({
      ...solUsdc,
      taker: Keypair.generate(),
      takerSide: "bid",
      inAmount: 100_000_000n,
      timeoutMs: 1_500,
      tamper: (tx) => {
        const route = tx.message.compiledInstructions.find((ix) => ix.data.length > 60)!;
        const data = Buffer.from(route.data);
        data.writeBigUInt64LE(data.readBigUInt64LE(68) - 1n, 68); // the first level's px_ticks
        route.data = data;
        return tx;
      },
    });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await swapsWith(s.registry, "V2_LEVELS_NOT_STREAMED")).toBe(1);
    expect(await s.inventory.reservations()).toEqual([]);
  });

  it("withdraws the levels when quoting is paused: a swap on the sets the operator still shows is not signed", async () => {
    const s = await stack();
    await until(() => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
    // The service hears the switch itself: withdrawn before pause() returns, no tick waited for.
    await s.controls.pause("test");
    expect(s.service.streamed.valid("SOL/USDC")).toEqual([]);
    const r = await s.standIn.offerSwap({
      ...solUsdc,
      taker: Keypair.generate(),
      takerSide: "ask",
      inAmount: 1_000_000_000n,
      timeoutMs: 1_500,
    });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await swapsWith(s.registry, "V2_PAIR_NOT_STREAMED")).toBe(1);
    const withdrawn = (await s.registry.getSingleMetric("rfq_v2_withdrawals_total")!.get()).values;
    expect(withdrawn).toContainEqual(
      expect.objectContaining({ labels: { pair: "SOL/USDC", reason: "PAUSED" }, value: 1 }),
    );
  });

  it("withdraws the levels on its own tick (1 s) once the pair's price goes stale", async () => {
    let updatedAtMs = Date.now();
    const feed: PriceSource = {
      name: "static",
      maxAgeMs: 2_000,
      price: () => ({ mid: { num: 18_025n, den: 100n }, updatedAtMs }),
      start: async () => {},
      close: async () => {},
    };
    const s = await stack({ sources: new Map([["static", feed]]) });
    await until(() => s.service.streamed.valid("SOL/USDC").length > 0, "SOL/USDC levels");
    updatedAtMs = Date.now() - 5_000;
    await until(() => s.service.streamed.valid("SOL/USDC").length === 0, "the stale pair withdrawn", 5_000);
    const withdrawn = (await s.registry.getSingleMetric("rfq_v2_withdrawals_total")!.get()).values;
    expect(withdrawn).toContainEqual(
      expect.objectContaining({ labels: { pair: "SOL/USDC", reason: "PRICE_STALE" }, value: 1 }),
    );
  });

  it("continues the sequence from the server's last number after a restart (GetLastSequenceNumber)", async () => {
    const first = await stack();
    await until(() => first.standIn.updates.length > 0, "a first answer");
    const lastBefore = BigInt(first.standIn.updates.at(-1)!.sequence);
    first.service.close();
    const second = await stack({ standIn: first.standIn });
    await until(
      () => first.standIn.updates.some((u) => BigInt(u.sequence || "0") > lastBefore),
      "a set from the restarted service",
    );
    const rejected = first.standIn.updates.filter((u) => u.update.update_type === "UPDATE_TYPE_REJECTED");
    expect(rejected).toEqual([]);
    expect(second.service.connected()).toBe(true);
  });

  it("reconnects after the server goes away and sends its levels again", async () => {
    const s = await stack();
    await until(() => s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels");
    const port = s.standIn.port;
    await s.standIn.close();
    await until(() => !s.service.connected(), "the disconnect");
    const again = new RfqV2StandIn({ makers: [{ makerId: MAKER_ID, token: TOKEN }] });
    await again.listen("127.0.0.1", port);
    closers.push(() => again.close());
    await until(
      () => again.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined,
      "levels on the new server",
      10_000,
    );
    expect(s.service.connected()).toBe(true);
    const reconnects = (await s.registry.getSingleMetric("rfq_v2_reconnects_total")!.get()).values[0]!.value;
    expect(reconnects).toBeGreaterThanOrEqual(1);
  });

  it("is refused without its token: UNAUTHENTICATED, no levels accepted", async () => {
    const standIn = new RfqV2StandIn({ makers: [{ makerId: MAKER_ID, token: "another-token-abcdefghij" }] });
    await standIn.listen();
    closers.push(() => standIn.close());
    const s = stack({ standIn });
    // start() waits for the first connection: it never comes with a wrong token
    const outcome = await Promise.race([
      s.then(() => "connected"),
      new Promise((r) => setTimeout(() => r("refused"), 1_000)),
    ]);
    expect(outcome).toBe("refused");
    expect(standIn.updates).toEqual([]);
    expect(new PublicKey(MINT.SOL).toBase58()).toBe(MINT.SOL);
  });
});
