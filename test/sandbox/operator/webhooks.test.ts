/**
 * The maker side here is a minimal HTTP server whose two lists the test edits (a fake maker: the real
 * webhook's lists come from configuration and cannot be changed mid-test). The registry talks to it
 * over a real socket.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpClient } from "../../../sandbox/operator/http-client.ts";
import { tokenSetHash, WebhookRegistry } from "../../../sandbox/operator/webhooks.ts";
import { MINT } from "../../support/config.ts";

const lists = { tokens: [] as string[], permissioned: [] as string[], permissionedStatus: 200 };
const seenKeys: (string | undefined)[] = [];
let server: http.Server;
let base: string;
const client = new HttpClient();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seenKeys.push(req.headers["x-api-key"] as string | undefined);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/mm/tokens") return send(200, lists.tokens);
    if (req.url === "/mm/permissioned-tokens") return send(lists.permissionedStatus, lists.permissioned);
    return send(404, { message: "no route" });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mm`;
});

afterAll(async () => {
  client.close();
  await new Promise((r) => server.close(r));
});

function registry() {
  const r = new WebhookRegistry({ http: client });
  r.register({ name: "mm", baseUrl: base, apiKey: "k".repeat(32) });
  return r;
}

describe("webhook registry", () => {
  it("reads the union of /tokens and /permissioned-tokens and flags only the second as permissioned", async () => {
    lists.tokens = [MINT.SOL, MINT.USDC];
    lists.permissioned = [MINT.JUP];
    lists.permissionedStatus = 200;
    const r = registry();
    expect(await r.sync("mm")).toMatchObject({ kind: "changed" });
    const hook = r.get("mm")!;
    expect([...hook.tokens].sort()).toEqual([MINT.SOL, MINT.USDC, MINT.JUP].sort());
    expect([...hook.permissioned]).toEqual([MINT.JUP]);
    expect(r.supporting(MINT.SOL, MINT.JUP).map((h) => h.name)).toEqual(["mm"]);
    expect(r.supporting(MINT.SOL, MINT.USDT)).toEqual([]);
  });

  it("sends the registered API key on list reads", async () => {
    seenKeys.length = 0;
    await registry().sync("mm");
    expect(seenKeys).toEqual(["k".repeat(32), "k".repeat(32)]);
  });

  it("does not see a mint moving between the lists alone, until a forced re-sync", async () => {
    lists.tokens = [MINT.SOL, MINT.USDC];
    lists.permissioned = [MINT.JUP];
    const r = registry();
    await r.sync("mm");
    lists.tokens = [MINT.SOL, MINT.USDC, MINT.JUP];
    lists.permissioned = [];
    expect(await r.sync("mm")).toMatchObject({ kind: "unchanged" });
    expect([...r.get("mm")!.permissioned]).toEqual([MINT.JUP]);
    expect(await r.sync("mm", true)).toMatchObject({ kind: "changed" });
    expect([...r.get("mm")!.permissioned]).toEqual([]);
  });

  it("picks up a move between the lists once another change comes with it", async () => {
    lists.tokens = [MINT.SOL, MINT.USDC];
    lists.permissioned = [MINT.JUP];
    const r = registry();
    await r.sync("mm");
    lists.tokens = [MINT.SOL, MINT.USDC, MINT.JUP, MINT.USDT];
    lists.permissioned = [];
    expect(await r.sync("mm")).toMatchObject({ kind: "changed" });
    expect(r.get("mm")!.permissioned.size).toBe(0);
    expect(r.get("mm")!.tokens.has(MINT.USDT)).toBe(true);
  });

  it("reads a failing /permissioned-tokens as an empty list", async () => {
    lists.tokens = [MINT.SOL, MINT.USDC];
    lists.permissioned = [MINT.JUP];
    lists.permissionedStatus = 500;
    const r = registry();
    await r.sync("mm");
    expect([...r.get("mm")!.tokens].sort()).toEqual([MINT.SOL, MINT.USDC].sort());
    lists.permissionedStatus = 200;
  });

  it("keeps the previous set when /tokens is not a list of addresses", async () => {
    lists.tokens = [MINT.SOL, MINT.USDC];
    lists.permissioned = [];
    const r = registry();
    await r.sync("mm");
    lists.tokens = ["not-an-address"];
    expect(await r.sync("mm")).toMatchObject({ kind: "failed" });
    expect(r.get("mm")!.tokens.size).toBe(2);
  });

  it("hashes the sorted union, independent of order and of which list holds a mint", () => {
    expect(tokenSetHash([MINT.SOL, MINT.USDC], [MINT.JUP])).toBe(
      tokenSetHash([MINT.JUP, MINT.SOL], [MINT.USDC]),
    );
    expect(tokenSetHash([MINT.SOL], [])).not.toBe(tokenSetHash([MINT.USDC], []));
  });
});
