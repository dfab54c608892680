/**
 * Turning the RFQ v2 channel on: its settings refused by name when incomplete, a pair it cannot stream
 * refused at load, and, through the same composition as `npm start`, a service with RFQ_V2_URL
 * streaming its configured pairs to the operator's stand-in.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../config/load.ts";
import { RfqV2StandIn } from "../../sandbox/rfq-v2/server.ts";
import type { Service } from "../../src/compose.ts";
import { rfqV2Settings } from "../../src/rfq-v2/settings.ts";
import { MINT, testConfig } from "../support/config.ts";
import { testService } from "../support/service.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});
const ON = { RFQ_V2_URL: "https://rfq-v2.example", RFQ_V2_MAKER_ID: "mm", RFQ_V2_AUTH_TOKEN: "jwt" };

describe("RFQ v2 settings", () => {
  it("is off without RFQ_V2_URL, and on with the URL, the maker id and the token", () => {
    expect(rfqV2Settings({}, [])).toBeUndefined();
    expect(rfqV2Settings(ON, ["SOL/USDC"])).toEqual({ url: ON.RFQ_V2_URL, makerId: "mm", authToken: "jwt" });
  });

  it("names the settings missing beside RFQ_V2_URL and an empty pair list, and starts beside SIGNER_URL (the signer service judges v2 swaps)", () => {
    expect(() => rfqV2Settings({ RFQ_V2_URL: ON.RFQ_V2_URL }, ["SOL/USDC"])).toThrow(
      new ConfigError("env: RFQ_V2_MAKER_ID, RFQ_V2_AUTH_TOKEN: required when RFQ_V2_URL is set"),
    );
    expect(() => rfqV2Settings(ON, [])).toThrow(/^rfqV2\.pairs: empty while RFQ_V2_URL is set/);
    const withSigner = { ...ON, SIGNER_URL: "unix:///run/s.sock" };
    expect(rfqV2Settings(withSigner, ["SOL/USDC"])).toEqual({
      url: ON.RFQ_V2_URL,
      makerId: "mm",
      authToken: "jwt",
    });
  });

  it("refuses at load a streamed pair that is not configured, a lot for a pair not streamed, and a refresh not shorter than the expiry", () => {
    const load = (rfqV2: Record<string, unknown>) => () =>
      testConfig({}, (f) => ({ ...f, rfqV2: { ...f.rfqV2, ...rfqV2 } }));
    expect(load({ pairs: ["SOL/DOGE"] })).toThrow(/rfqV2\.pairs\.0: SOL\/DOGE is not a configured pair/);
    expect(load({ pairs: ["SOL/USDC"], lotSizeBase: { "JUP/USDC": "1000" } })).toThrow(
      /rfqV2\.lotSizeBase\.JUP\/USDC: JUP\/USDC is not in rfqV2\.pairs/,
    );
    expect(load({ quoteExpirySeconds: 10, refreshSeconds: 10 })).toThrow(
      /rfqV2\.refreshSeconds: must be shorter/,
    );
    expect(load({ quoteExpirySeconds: 9 })).toThrow(/rfqV2\.quoteExpirySeconds/);
  });
});

describe("a service composed with RFQ_V2_URL", () => {
  it("streams every configured pair to the operator's service, and none without RFQ_V2_URL", async () => {
    const standIn = new RfqV2StandIn({ makers: [{ makerId: "mm", token: "jwt-compose" }] });
    const url = await standIn.listen();
    closers.push(() => standIn.close());
    const service: Service = await testService({
      env: { RFQ_V2_URL: url, RFQ_V2_MAKER_ID: "mm", RFQ_V2_AUTH_TOKEN: "jwt-compose", LEDGER: "off" },
      vary: (f) => ({ ...f, rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC", "JUP/USDC"] } }),
    });
    closers.push(() => service.close());
    const deadline = Date.now() + 5_000;
    while (!(standIn.liveSet("mm", MINT.SOL, MINT.USDC) && standIn.liveSet("mm", MINT.JUP, MINT.USDC))) {
      if (Date.now() > deadline) throw new Error("no levels streamed");
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(standIn.liveSet("mm", MINT.SOL, MINT.USDT)).toBeUndefined();
    expect(service.rfqV2?.connected()).toBe(true);
    const off = await testService({ env: { LEDGER: "off" } });
    closers.push(() => off.close());
    expect(off.rfqV2).toBeUndefined();
  });
});
