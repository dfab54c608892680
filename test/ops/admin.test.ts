/**
 * The admin API over a real socket: its own key, the kill switch reaching another instance through a
 * real Redis (its POST /quote answers 404 while paused), per-pair switches, inventory view.
 */
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { MemoryInventory } from "../../inventory/memory.ts";
import type { ControlState, Controls } from "../../pricing/controls/interface.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import { RedisControls } from "../../pricing/controls/redis.ts";
import { makeWorld, type World } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { fileRedis } from "../support/redis.ts";
import { postQuote, startWebhook, type Webhook } from "./webhook.ts";

const KEY = "admin-key-0123456789abcdef";
const { redis, prefix } = fileRedis();
const cleanups = cleanupsAfterEach();

async function instance(w: World, controls: Controls, adminApiKey?: string): Promise<Webhook> {
  const inventory = new MemoryInventory(w.options());
  await inventory.start();
  await controls.start();
  const hook = await startWebhook({
    config: w.config,
    chain: w.chain,
    sources: w.sources,
    controls,
    inventory,
    maker: w.maker,
    ...(adminApiKey ? { adminApiKey } : {}),
  });
  cleanups.push(async () => {
    await hook.close();
    await controls.close();
    await inventory.close();
  });
  return hook;
}

function redisControls(ctlPrefix: string): Controls {
  const conn: Redis = redis.duplicate();
  cleanups.push(async () => void conn.disconnect());
  return new RedisControls(conn, { prefix: ctlPrefix, pollMs: 500 });
}

const admin = (url: string, method: string, path: string, body?: unknown, key: string | null = KEY) =>
  fetch(`${url}${path}`, {
    method,
    headers: {
      ...(key ? { "x-admin-api-key": key } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });

const sell = { tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: 1_000_000_000n };

function change(c: Controls, test: (s: ControlState) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const off = c.onChange((s) => {
      if (test(s)) {
        off();
        resolve();
      }
    });
  });
}

describe("admin API", () => {
  it("is served on the operations listener only: the operator's listener answers 404 for /admin and /metrics", async () => {
    const hook = await instance(makeWorld(), new MemoryControls(), KEY);
    expect((await admin(hook.adminUrl, "GET", "/admin/controls")).status).toBe(200);
    expect((await fetch(`${hook.adminUrl}/metrics`)).status).toBe(200);
    for (const [m, p] of [
      ["GET", "/admin/controls"],
      ["POST", "/admin/pause"],
      ["PUT", "/admin/pairs/SOL/USDC"],
      ["GET", "/admin/inventory"],
      ["GET", "/metrics"],
    ] as const) {
      expect((await admin(hook.url, m, p, m === "PUT" ? { enabled: false } : undefined)).status).toBe(404);
    }
    // Load balancers may probe either listener.
    for (const url of [hook.url, hook.adminUrl]) {
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await fetch(`${url}/ready`)).status).toBe(200);
    }
    expect((await postQuote(hook.url, sell)).status).toBe(200);
    expect((await postQuote(hook.adminUrl, sell)).status).toBe(404);
  });

  it("does not exist without ADMIN_API_KEY: every admin route answers 404", async () => {
    const hook = await instance(makeWorld(), new MemoryControls());
    for (const [m, p] of [
      ["GET", "/admin/controls"],
      ["POST", "/admin/pause"],
      ["PUT", "/admin/pairs/SOL/USDC"],
    ] as const) {
      expect((await admin(hook.adminUrl, m, p)).status).toBe(404);
    }
    expect((await postQuote(hook.url, sell)).status).toBe(200);
  });

  it("refuses a missing or wrong X-ADMIN-API-KEY with 401, and does not pause", async () => {
    const hook = await instance(makeWorld(), new MemoryControls(), KEY);
    expect((await admin(hook.adminUrl, "POST", "/admin/pause", undefined, null)).status).toBe(401);
    const wrong = await admin(hook.adminUrl, "POST", "/admin/pause", undefined, "not-the-admin-key-at-all");
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ message: "invalid X-ADMIN-API-KEY" });
    expect((await postQuote(hook.url, sell)).status).toBe(200);
  });

  it("pauses every instance sharing Redis: the other instance's quotes answer 404 until resumed", async () => {
    const w = makeWorld();
    const ctl = `${prefix}ctl-pause:`;
    const a = await instance(w, redisControls(ctl), KEY);
    const bControls = redisControls(ctl);
    const b = await instance(w, bControls);
    expect((await postQuote(b.url, sell)).status).toBe(200);

    const paused = change(bControls, (s) => s.paused);
    const res = await admin(a.adminUrl, "POST", "/admin/pause", { reason: "exchange outage" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ paused: true, pauseReason: "exchange outage" });
    await paused;
    const q = await postQuote(b.url, sell);
    expect(q).toEqual({ status: 404, body: { message: "no quote: quoting is paused" } });

    const resumed = change(bControls, (s) => !s.paused);
    expect((await admin(a.adminUrl, "POST", "/admin/resume")).status).toBe(200);
    await resumed;
    expect((await postQuote(b.url, sell)).status).toBe(200);
  });

  it("switches one pair off and back to its configured state", async () => {
    const hook = await instance(makeWorld(), new MemoryControls(), KEY);
    const off = await admin(hook.adminUrl, "PUT", "/admin/pairs/SOL/USDC", { enabled: false });
    expect(await off.json()).toMatchObject({ pairs: { "SOL/USDC": false } });
    expect((await postQuote(hook.url, sell)).status).toBe(404);
    expect(
      (await postQuote(hook.url, { tokenIn: MINT.SOL, tokenOut: MINT.USDT, amount: 1_000_000_000n })).status,
    ).toBe(200);
    await admin(hook.adminUrl, "PUT", "/admin/pairs/SOL/USDC", { enabled: null });
    expect((await postQuote(hook.url, sell)).status).toBe(200);
  });

  it("answers 404 for an unknown pair and 400 for a malformed body", async () => {
    const hook = await instance(makeWorld(), new MemoryControls(), KEY);
    expect((await admin(hook.adminUrl, "PUT", "/admin/pairs/DOGE/USDC", { enabled: false })).status).toBe(
      404,
    );
    const bad = await admin(hook.adminUrl, "PUT", "/admin/pairs/SOL/USDC", { enabled: "no" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^enabled: /);
    expect((await admin(hook.adminUrl, "POST", "/admin/pause", "{not json")).status).toBe(400);
  });

  it("shows the maker's inventory with amounts as strings", async () => {
    const w = makeWorld();
    const hook = await instance(w, new MemoryControls(), KEY);
    const res = await admin(hook.adminUrl, "GET", "/admin/inventory");
    const body = (await res.json()) as { maker: string; holdings: { symbol: string; balance: string }[] };
    expect(body.maker).toBe(w.maker.publicKey.toBase58());
    expect(body.holdings.find((h) => h.symbol === "USDC")!.balance).toBe("10000000000000");
  });
});
