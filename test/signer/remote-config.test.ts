/** The webhook's side of SIGNER_URL: what it requires, and that it never sits beside MAKER_KEYPAIR. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../config/load.ts";

const production = {
  RPC_URL: "http://127.0.0.1:8899",
  REDIS_URL: "redis://127.0.0.1:6379",
  API_KEY: "0123456789abcdef0123",
  ALLOW_STATIC_PRICES: "1",
  DATABASE_URL: "postgres://rfq@127.0.0.1:5432/rfq",
};

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("SIGNER_URL in the webhook's configuration", () => {
  it("refuses to start with MAKER_KEYPAIR also set, in one line naming both settings", () => {
    const message = refusal({
      ...production,
      SIGNER_URL: "unix:///run/signer.sock",
      MAKER_KEYPAIR: "/k.json",
    });
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toMatch(/SIGNER_URL and MAKER_KEYPAIR are both set/);
  });

  it("is production mode with SIGNER_URL in place of MAKER_KEYPAIR", () => {
    const config = loadConfig({ ...production, SIGNER_URL: "unix:///run/signer.sock" });
    expect(config.mode).toBe("production");
    expect(config.env.MAKER_KEYPAIR).toBeUndefined();
    expect(refusal({ RPC_URL: production.RPC_URL, REDIS_URL: production.REDIS_URL })).toMatch(
      /MAKER_KEYPAIR: required when RPC_URL is set/,
    );
  });

  it("requires REDIS_URL (the signer reads quotes from the shared store), and the three TLS files for https", () => {
    expect(refusal({ SIGNER_URL: "unix:///run/signer.sock", PAPER: "1" })).toMatch(
      /SIGNER_URL: requires REDIS_URL/,
    );
    expect(refusal({ ...production, SIGNER_URL: "https://signer:7443", SIGNER_CA: "/ca.pem" })).toMatch(
      /SIGNER_CLIENT_CERT, SIGNER_CLIENT_KEY: required with an https:\/\/ SIGNER_URL/,
    );
    expect(refusal({ ...production, SIGNER_URL: "http://signer:7443" })).toMatch(/SIGNER_URL/);
  });
});
