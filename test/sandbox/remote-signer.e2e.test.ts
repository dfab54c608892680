/**
 * The sandbox with the remote signer (`npm run sandbox -- --remote-signer`, through startStack): the
 * chain, the signer service and the webhook each in their own process, the operator simulator here,
 * with the permissioned token the maker issues (its issuer key in the signer too). Swaps land, a buy
 * of the issued token with the signer's mint among them; the webhook holds no key of any kind: it is
 * started without key settings, its open files are sampled every few milliseconds from the instant it
 * is spawned to the end of the run (/proc/<pid>/fd) and never include a key file, its environment
 * names none, its memory (every readable mapping, /proc/<pid>/mem) holds neither secret in any usual
 * spelling while the signer's does (the control that the scan finds a key where one is); and no log
 * line of any process carries a secret. (Sampling can miss a file opened and closed between two
 * samples; the memory scan and the webhook's code path, which with SIGNER_URL never calls the keypair
 * reader, are what close that gap.)
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { readKeypairFile } from "../../src/signing/keypair.ts";
import { MINT } from "../support/config.ts";
import { scanProcessMemory } from "../support/proc-memory.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("remote-signer");
let stack: Stack;
let keyPath: string;
let issuerKeyPath: string;
/** Every file the webhook process had open at any of the samples. */
const webhookOpened = new Set<string>();
let samples = 0;
let watcher: NodeJS.Timeout | undefined;

function sampleWebhookFds(pid: number): void {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return;
  }
  samples++;
  for (const fd of fds) {
    try {
      webhookOpened.add(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {}
  }
}

beforeAll(async () => {
  stack = await startStack({
    dir,
    remoteSigner: true,
    issuedToken: true,
    takers: [{ name: "t", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n, JUP: 5_000_000_000n } }],
    webhookLogLevel: "debug",
    // A loaded CI machine must not turn quotes into "no route" 400s: the 250 ms deadline is not under test.
    operator: { quoteTimeoutMs: 5_000 },
    // Watch the webhook's open files from the instant it is spawned: start-up is when a key is read.
    onSpawn: (child) => {
      if (child.name !== "webhook" || !child.proc.pid) return;
      const pid = child.proc.pid;
      sampleWebhookFds(pid);
      watcher = setInterval(() => sampleWebhookFds(pid), 2);
    },
  });
  keyPath = realpathSync(join(dir, "maker-keypair.json"));
  issuerKeyPath = realpathSync(stack.issued!.issuerPath);
}, 180_000);

afterAll(async () => {
  if (watcher) clearInterval(watcher);
  await stack?.close();
});

async function swap(params: Record<string, string>): Promise<Record<string, unknown>> {
  const taker = stack.takers[0]!;
  const res = await fetch(
    `${stack.operatorUrl}/ultra/v1/order?${new URLSearchParams({ ...params, taker: taker.keypair.publicKey.toBase58() })}`,
  );
  expect(res.status, await res.clone().text()).toBe(200);
  const order = (await res.json()) as { transaction: string; requestId: string; maker: string };
  expect(order.maker).toBe(stack.maker);
  const tx = VersionedTransaction.deserialize(Buffer.from(order.transaction, "base64"));
  tx.sign([taker.keypair]);
  const x = await fetch(`${stack.operatorUrl}/ultra/v1/execute?swapType=rfq`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
      requestId: order.requestId,
    }),
  });
  expect(x.status).toBe(200);
  return (await x.json()) as Record<string, unknown>;
}

/** The secret as it could leak: base58, base64, hex and JSON array, of the 64-byte key and its seed. */
function secretSpellings(secret: Uint8Array): string[] {
  const out: string[] = [];
  for (const bytes of [secret, secret.subarray(0, 32)]) {
    const b = Buffer.from(bytes);
    out.push(bs58.encode(bytes), b.toString("base64"), b.toString("base64url"), b.toString("hex"));
    out.push(b.toString("hex").toUpperCase(), JSON.stringify(Array.from(bytes)));
    out.push(Array.from(bytes).join(", "), Array.from(bytes).join(","));
  }
  return out;
}

describe("the sandbox with the signer as its own process", () => {
  it("lands swaps co-signed by the signer service, which logs each with its quoteId and message hash", async () => {
    expect(stack.pids.signer).toBeGreaterThan(0);
    const results = [
      await swap({ inputMint: MINT.JUP, outputMint: MINT.USDC, amount: "100000000", swapMode: "ExactIn" }),
      await swap({ inputMint: MINT.USDC, outputMint: MINT.JUP, amount: "10000000", swapMode: "ExactIn" }),
      await swap({ inputMint: MINT.SOL, outputMint: MINT.USDC, amount: "1000000", swapMode: "ExactOut" }),
    ];
    for (const r of results) expect(r).toMatchObject({ status: "Success", code: 0 });
    const signed = readFileSync(join(dir, "signer.log"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"msg":"signed"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(signed).toHaveLength(3);
    for (const l of signed) {
      expect(l.quoteId).toEqual(expect.any(String));
      expect(l.messageHash).toMatch(/^[0-9a-f]{64}$/);
      expect(l.maker).toBe(stack.maker);
    }
    const manifest = JSON.parse(readFileSync(join(dir, "stack.json"), "utf8"));
    expect(manifest.signer).toMatchObject({ url: `unix://${join(dir, "signer.sock")}` });
    expect(manifest.webhookUrl).toBe(stack.webhookUrl);
    // The chain server is the block engine too, and the webhook was given it as BUNDLE_URL.
    expect(manifest.bundleUrl).toBe(stack.chainUrl);
    expect(readFileSync(join(dir, "webhook.log"), "utf8")).toContain(`bundles:     jito ${stack.chainUrl}`);
  }, 120_000);

  it("buys the issued token: the signer service makes and signs the issuer's mint, and the mint and the fill land together", async () => {
    const issued = stack.issued!;
    const taker = stack.takers[0]!.keypair;
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const order = await client.order(
      { inputMint: MINT.USDC, outputMint: issued.mint, amount: 100_000_000n, swapMode: "ExactOut" },
      taker.publicKey,
    );
    expect(order.ok, order.ok ? "" : order.error).toBe(true);
    if (!order.ok) return;
    const supply = await client.supply(issued.mint);
    const result = await client.execute(order.body, taker);
    expect(result.ok && result.body.status, result.ok ? result.body.error : result.error).toBe("Success");
    expect((await client.supply(issued.mint)) - supply).toBe(100_000_000n);
    const signer = readFileSync(join(dir, "signer.log"), "utf8");
    expect(signer).toContain('"msg":"companion signed"');
    expect(readFileSync(join(dir, "webhook.log"), "utf8")).toContain(
      `issuer:      ${issued.issuer} (the signer service remote (unix:${join(dir, "signer.sock")}))`,
    );
  }, 120_000);

  it("the webhook process never opens a key file and has no key setting in its environment", () => {
    const pid = stack.pids.webhook!;
    sampleWebhookFds(pid);
    expect(samples).toBeGreaterThan(50);
    // The watcher sees real files: the webhook's own log is open all along.
    expect([...webhookOpened].some((p) => p.endsWith("webhook.log"))).toBe(true);
    expect([...webhookOpened]).not.toContain(keyPath);
    expect([...webhookOpened]).not.toContain(issuerKeyPath);
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    expect(
      environ.filter((e) =>
        /^(MAKER_KEYPAIR|ISSUER_KEYPAIR|SIGNER_KEYPAIR|SIGNER_NEXT_KEYPAIR|SIGNER_ISSUER_KEYPAIR)=./.test(e),
      ),
    ).toEqual([]);
    expect(environ.some((e) => e.includes(keyPath) || e.includes(issuerKeyPath))).toBe(false);
    expect(environ).toContain(`SIGNER_URL=unix://${join(dir, "signer.sock")}`);
    const maps = readFileSync(`/proc/${pid}/maps`, "utf8");
    expect(maps.includes(keyPath) || maps.includes(issuerKeyPath)).toBe(false);
  });

  it("the webhook's memory holds neither the maker's nor the issuer's secret in any spelling; the signer's holds both", () => {
    const secrets = [keyPath, issuerKeyPath].map((p) => readKeypairFile(p).secretKey);
    // Raw bytes (the 64-byte key and its 32-byte seed), and the text spellings a key file or a log could leave.
    const needles = secrets.flatMap((secret) => [
      Buffer.from(secret),
      Buffer.from(secret.subarray(0, 32)),
      ...secretSpellings(secret).map((s) => Buffer.from(s, "latin1")),
    ]);
    const webhook = scanProcessMemory(stack.pids.webhook!, needles);
    expect(webhook.bytes).toBeGreaterThan(50 * 1024 * 1024);
    expect(
      [...webhook.found].map((i) => needles[i]!.length),
      "needles found in the webhook's memory",
    ).toEqual([]);
    // The control: the same scan finds both raw keys in the signer, which holds them.
    const perSecret = needles.length / secrets.length;
    const signer = scanProcessMemory(stack.pids.signer!, [needles[0]!, needles[perSecret]!]);
    expect([...signer.found].sort()).toEqual([0, 1]);
  }, 120_000);

  it("no log line of the chain, the signer or the webhook carries a secret key (maker or issuer) in any spelling", () => {
    const spellings = [keyPath, issuerKeyPath].flatMap((p) => secretSpellings(readKeypairFile(p).secretKey));
    const logs = readdirSync(dir).filter((f) => f.endsWith(".log"));
    expect(logs).toEqual(expect.arrayContaining(["chain.log", "signer.log", "webhook.log"]));
    let lines = 0;
    for (const file of logs) {
      for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
        lines++;
        for (const s of spellings) expect(line.includes(s), `${file} leaks the key`).toBe(false);
      }
    }
    expect(lines).toBeGreaterThan(20);
  });
});
