/**
 * The sandbox chain server's block-engine API (Jito's JSON-RPC under /api/v1) over real sockets, and
 * the production Jito client against it: wire encodings as Jito's, statuses Landed / Failed / Invalid
 * mapped, several engine URLs with the first one down, and expiry by blockhash.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Connection, type Keypair, type PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RpcServer, startRpcServer } from "../../../sandbox/chain/rpc-server.ts";
import { bundleIdOf } from "../../../src/chain/bundle.ts";
import { JitoBundleClient } from "../../../src/chain/bundle-jito.ts";
import { localTipAccounts } from "../../../src/chain/local/bundle-engine.ts";
import { LocalChain } from "../../../src/chain/local/index.ts";
import { tokenAccountBalance } from "../../../src/chain/local/seed.ts";
import { freePort } from "../../../tooling/processes.ts";
import { type BundleBed, bundleBed } from "../../support/bundle-bed.ts";

let chain: LocalChain;
let server: RpcServer;
let maker: Keypair;
let takerAta: PublicKey;
/** A loopback URL nobody listens on. */
let deadUrl: string;

beforeAll(async () => {
  deadUrl = `http://127.0.0.1:${await freePort()}`;
});

let bed: BundleBed;
let mintAndTip: BundleBed["mintAndTip"];
let fill: BundleBed["fill"];
let supply: BundleBed["supply"];

beforeEach(async () => {
  chain = LocalChain.create({ slotMs: 3_600_000 });
  server = await startRpcServer(chain, { port: 0 });
  bed = bundleBed(chain, localTipAccounts()[0] as PublicKey);
  ({ maker, takerAta, mintAndTip, fill, supply } = bed);
});

afterEach(async () => {
  await server.close();
});

const client = (urls: string[]) => new JitoBundleClient({ urls, chain, timeoutMs: 2_000 });

async function rpc(path: string, method: string, params: unknown[]) {
  const res = await fetch(`${server.bundleUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}

describe("sandbox chain server: Jito's block-engine API", () => {
  it("takes sendBundle with base64 and an encoding object, and base58 by default, as Jito does", async () => {
    const a = mintAndTip(100n);
    const b = fill(100n);
    const b64 = [a, b].map((tx) => Buffer.from(tx.serialize()).toString("base64"));
    const sent = await rpc("/api/v1/bundles", "sendBundle", [b64, { encoding: "base64" }]);
    expect(sent).toEqual({ jsonrpc: "2.0", id: 7, result: bundleIdOf([a, b]) });
    expect(tokenAccountBalance(chain, takerAta)).toBe(100n);

    const c = mintAndTip(5n);
    const b58 = await rpc("/api/v1/bundles", "sendBundle", [[bs58.encode(c.serialize())]]);
    expect(b58.result).toBe(bundleIdOf([c]));
    expect(supply()).toBe(105n);
  });

  it("answers getTipAccounts with the 8 tip accounts, at /api/v1/getTipAccounts and /api/v1/bundles", async () => {
    const expected = localTipAccounts().map((k) => k.toBase58());
    expect((await rpc("/api/v1/getTipAccounts", "getTipAccounts", [])).result).toEqual(expected);
    expect((await rpc("/api/v1/bundles", "getTipAccounts", [])).result).toEqual(expected);
  });

  it("reports statuses in Jito's shapes: Landed with landed_slot, Failed, Invalid; getBundleStatuses only for landed", async () => {
    const landed = await rpc("/api/v1/bundles", "sendBundle", [
      [mintAndTip(100n), fill(100n)].map((tx) => Buffer.from(tx.serialize()).toString("base64")),
      { encoding: "base64" },
    ]);
    const failedTxs = [mintAndTip(1n), fill(500n)];
    const failed = await rpc("/api/v1/bundles", "sendBundle", [
      failedTxs.map((tx) => Buffer.from(tx.serialize()).toString("base64")),
      { encoding: "base64" },
    ]);
    expect(failed.result).toBe(bundleIdOf(failedTxs));
    const unknown = "0".repeat(64);
    const slot = Number(chain.blockHeight());
    const inflight = await rpc("/api/v1/getInflightBundleStatuses", "getInflightBundleStatuses", [
      [landed.result, failed.result, unknown],
    ]);
    expect(inflight.result).toEqual({
      context: { slot },
      value: [
        { bundle_id: landed.result, status: "Landed", landed_slot: slot },
        { bundle_id: failed.result, status: "Failed", landed_slot: null },
        { bundle_id: unknown, status: "Invalid", landed_slot: null },
      ],
    });
    const statuses = await rpc("/api/v1/getBundleStatuses", "getBundleStatuses", [
      [landed.result, failed.result],
    ]);
    expect(statuses.result).toEqual({
      context: { slot },
      value: [
        {
          bundle_id: landed.result,
          transactions: expect.any(Array),
          slot,
          confirmation_status: "finalized",
          err: { Ok: null },
        },
        null,
      ],
    });
    const six = await rpc("/api/v1/bundles", "getInflightBundleStatuses", [Array(6).fill(unknown)]);
    expect(six.error).toMatchObject({ code: -32602, message: "Invalid params: at most 5 bundle ids" });
  });

  it("refuses a bundle without a tip and one of 6 transactions with a JSON-RPC error, nothing run", async () => {
    const noTip = await rpc("/api/v1/bundles", "sendBundle", [
      [mintAndTip(100n, null)].map((tx) => Buffer.from(tx.serialize()).toString("base64")),
      { encoding: "base64" },
    ]);
    expect(noTip.error?.code).toBe(-32602);
    expect(noTip.error?.message).toMatch(/tip/);
    const six = await rpc("/api/v1/bundles", "sendBundle", [
      Array.from({ length: 6 }, (_, i) =>
        Buffer.from(mintAndTip(BigInt(i + 1)).serialize()).toString("base64"),
      ),
      { encoding: "base64" },
    ]);
    expect(six.error?.message).toMatch(/1 to 5 transactions, got 6/);
    expect(supply()).toBe(0n);
  });
});

describe("Jito bundle client against the sandbox chain server", () => {
  it("lands a bundle: tip accounts, sendBundle, Landed status, both signatures confirmed over RPC", async () => {
    const jito = client([server.bundleUrl]);
    expect((await jito.getTipAccounts()).map((k) => k.toBase58())).toEqual(
      localTipAccounts().map((k) => k.toBase58()),
    );
    const a = mintAndTip(100n);
    const b = fill(100n);
    const sent = await jito.sendBundle([a, b]);
    expect(sent).toEqual({ ok: true, bundleId: bundleIdOf([a, b]) });
    if (!sent.ok) return;
    expect(await jito.getBundleStatus(sent.bundleId, { blockhash: a.message.recentBlockhash })).toEqual({
      state: "landed",
      slot: chain.blockHeight(),
    });
    const conn = new Connection(server.url, "confirmed");
    const sigs = [a, b].map((tx) => bs58.encode(tx.signatures[0] as Uint8Array));
    const st = await conn.getSignatureStatuses(sigs);
    expect(st.value.map((s) => s?.err)).toEqual([null, null]);
    expect(supply()).toBe(100n);
  });

  it("maps a bundle whose fill failed to failed, and the chain is as before it", async () => {
    const jito = client([server.bundleUrl]);
    const makerLamports = chain.svm.getBalance(maker.publicKey);
    const sent = await jito.sendBundle([mintAndTip(100n), fill(101n)]);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    const status = await jito.getBundleStatus(sent.bundleId);
    expect(status.state).toBe("failed");
    expect(supply()).toBe(0n);
    expect(chain.svm.getBalance(maker.publicKey)).toBe(makerLamports);
  });

  it("maps a refused bundle to reached: refused, naming the engine", async () => {
    const out = await client([server.bundleUrl]).sendBundle([mintAndTip(100n, null)]);
    expect(out).toMatchObject({ ok: false, reached: "refused" });
    expect(!out.ok && out.error).toMatch(new RegExp(`^${server.bundleUrl}: sendBundle refused: .*tip`));
  });

  it("sends to every engine and reads status past the first when it is down", async () => {
    const jito = client([deadUrl, server.bundleUrl]);
    expect(jito.description).toBe(`jito ${deadUrl} (+1 engines)`);
    expect(await jito.getTipAccounts()).toHaveLength(8);
    const a = mintAndTip(100n);
    const sent = await jito.sendBundle([a, fill(100n)]);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    expect((await jito.getBundleStatus(sent.bundleId)).state).toBe("landed");
    expect(tokenAccountBalance(chain, takerAta)).toBe(100n);
  });

  it("with every engine down: sendBundle reached no, status unknown (expired blockhash or not), getTipAccounts throws, each naming the engine", async () => {
    const jito = client([deadUrl]);
    const a = mintAndTip(1n);
    const out = await jito.sendBundle([a]);
    expect(out).toMatchObject({ ok: false, reached: "no" });
    expect(!out.ok && out.error).toMatch(new RegExp(`^${deadUrl}: unreachable: .*ECONNREFUSED`));
    const status = await jito.getBundleStatus(bundleIdOf([a]));
    expect(status.state).toBe("unknown");
    expect(status.state === "unknown" && status.error).toContain(deadUrl);
    await expect(jito.getTipAccounts()).rejects.toThrow(deadUrl);
    // Its blockhash expiring says nothing when no engine could be asked whether it landed.
    chain.advanceBlocks(151);
    const late = await jito.getBundleStatus(bundleIdOf([a]), { blockhash: a.message.recentBlockhash });
    expect(late.state).toBe("unknown");
  });

  it("a bundle no engine knows is pending while its blockhash is valid, expired after", async () => {
    const jito = client([server.bundleUrl]);
    const a = mintAndTip(1n);
    const id = bundleIdOf([a]);
    const hint = { blockhash: a.message.recentBlockhash };
    expect(await jito.getBundleStatus(id, hint)).toEqual({ state: "pending" });
    chain.advanceBlocks(151);
    expect(await jito.getBundleStatus(id, hint)).toEqual({ state: "expired" });
  });
});

describe("Jito bundle client on the wire", () => {
  let capture: Server;
  let url: string;
  const seen: { path: string | undefined; body: { method: string; params: unknown[] } }[] = [];
  let answer: (method: string) => { status: number; body: unknown } = () => ({ status: 200, body: {} });

  beforeAll(async () => {
    capture = createServer((req, res) => {
      let text = "";
      req.on("data", (c) => {
        text += c;
      });
      req.on("end", () => {
        const body = JSON.parse(text);
        seen.push({ path: req.url, body });
        const a = answer(body.method);
        res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
      });
    });
    await new Promise<void>((r) => capture.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(capture.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => capture.close(() => r())));

  it("posts sendBundle to /api/v1/bundles with [[base64, ...], {encoding: base64}], keeping the URL's query", async () => {
    seen.length = 0;
    answer = () => ({ status: 200, body: { jsonrpc: "2.0", id: 1, result: "abc" } });
    const a = mintAndTip(1n);
    const b = fill(1n);
    const out = await client([`${url}/api/v1/bundles?uuid=k`]).sendBundle([a, b]);
    expect(out).toEqual({ ok: true, bundleId: "abc" });
    expect(seen).toEqual([
      {
        path: "/api/v1/bundles?uuid=k",
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "sendBundle",
          params: [
            [a, b].map((tx) => Buffer.from(tx.serialize()).toString("base64")),
            { encoding: "base64" },
          ],
        },
      },
    ]);
  });

  it("asks getInflightBundleStatuses then getBundleStatuses at their own paths, one id in a list", async () => {
    seen.length = 0;
    answer = (m) => ({
      status: 200,
      body: {
        jsonrpc: "2.0",
        id: 1,
        result:
          m === "getInflightBundleStatuses"
            ? { context: { slot: 9 }, value: [{ bundle_id: "x", status: "Invalid", landed_slot: null }] }
            : {
                context: { slot: 9 },
                value: [{ bundle_id: "x", slot: 8, confirmation_status: "finalized", err: { Ok: null } }],
              },
      },
    });
    expect(await client([url]).getBundleStatus("x")).toEqual({ state: "landed", slot: 8n });
    expect(seen.map((s) => [s.path, s.body.method, s.body.params])).toEqual([
      ["/api/v1/getInflightBundleStatuses", "getInflightBundleStatuses", [["x"]]],
      ["/api/v1/getBundleStatuses", "getBundleStatuses", [["x"]]],
    ]);
  });

  it("caches the tip accounts", async () => {
    seen.length = 0;
    const tips = localTipAccounts().map((k) => k.toBase58());
    answer = () => ({ status: 200, body: { jsonrpc: "2.0", id: 1, result: tips } });
    const jito = client([url]);
    await jito.getTipAccounts();
    await jito.getTipAccounts();
    expect(seen.map((s) => [s.path, s.body.method])).toEqual([["/api/v1/getTipAccounts", "getTipAccounts"]]);
  });

  it("a rate limit (HTTP 429 with Jito's error) is a refusal; a 503 without one leaves the bundle open, with its id", async () => {
    const a = mintAndTip(1n);
    answer = () => ({
      status: 429,
      body: { jsonrpc: "2.0", id: 1, error: { code: -32097, message: "Rate limit exceeded" } },
    });
    const limited = await client([url]).sendBundle([a]);
    expect(limited).toMatchObject({ ok: false, reached: "refused" });
    expect(!limited.ok && limited.error).toContain("Rate limit exceeded");
    answer = () => ({ status: 503, body: "" });
    const open = await client([url]).sendBundle([a]);
    expect(open).toMatchObject({ ok: false, reached: "unknown", bundleId: bundleIdOf([a]) });
  });
});
