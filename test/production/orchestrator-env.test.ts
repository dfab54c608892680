/**
 * Finding 10 of issue 61: a Kubernetes pod can start it. Kubernetes injects service links into every
 * pod (a Service named `redis`: REDIS_PORT=tcp://10.96.0.12:6379, REDIS_SERVICE_HOST, ...) and Docker
 * links do the same (REDIS_NAME=/webhook/redis, REDIS_ENV_*); beside production settings the near-miss
 * guard refused them ("REDIS_PORT: not a setting of this service (did you mean REDIS_URL?)", exit 78).
 * They are other software's conventions: ignored, not warned about; a real typo of ours (RPC_ULR) is
 * still named and refused. Through `npm start`'s built entry, in production shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { injectedByOrchestrator, nearMisses, unknownEnvWarnings } from "../../config/load.ts";
import { logLines } from "../support/process.ts";
import { type ProductionBed, productionBed, startBuilt } from "../support/production-bed.ts";
import { fileTempDir } from "../support/tmp.ts";

/** What a pod in a namespace with Services `redis` and `rpc` is given, plus Docker's link variables. */
const INJECTED: Record<string, string> = {
  REDIS_PORT: "tcp://10.96.0.12:6379",
  REDIS_PORT_6379_TCP: "tcp://10.96.0.12:6379",
  REDIS_PORT_6379_TCP_PROTO: "tcp",
  REDIS_PORT_6379_TCP_PORT: "6379",
  REDIS_PORT_6379_TCP_ADDR: "10.96.0.12",
  REDIS_SERVICE_HOST: "10.96.0.12",
  REDIS_SERVICE_PORT: "6379",
  REDIS_SERVICE_PORT_REDIS: "6379",
  RPC_PORT: "udp://10.96.0.40:8899",
  RPC_SERVICE_HOST: "10.96.0.40",
  RPC_SERVICE_PORT_HTTP: "8899",
  API_PORT_443_SCTP_ADDR: "10.96.0.41",
  REDIS_NAME: "/webhook/redis",
  REDIS_ENV_REDIS_VERSION: "7.2.4",
};

const dir = fileTempDir("orchestrator-env");
let bed: ProductionBed;
beforeAll(async () => {
  bed = await productionBed(dir);
}, 240_000);
afterAll(async () => {
  await bed?.close();
});

describe("finding 10: what orchestrators inject is not a typo of ours", () => {
  it("ignores each Kubernetes service link and Docker link variable, no warning either", () => {
    for (const [name, value] of Object.entries(INJECTED))
      expect(injectedByOrchestrator(name, value), name).toBe(true);
    expect(nearMisses(INJECTED)).toEqual([]);
    expect(unknownEnvWarnings(INJECTED)).toEqual([]);
  });

  it("still names a slip that only looks like one: REDIS_PORT=6380, REDIS_NAME=cache, RPC_ULR", () => {
    const slips = { REDIS_PORT: "6380", REDIS_NAME: "cache", RPC_ULR: "http://127.0.0.1:8899" };
    for (const [name, value] of Object.entries(slips))
      expect(injectedByOrchestrator(name, value), name).toBe(false);
    expect(nearMisses(slips).map(([n]) => n)).toEqual(["REDIS_PORT", "RPC_ULR"]);
    expect(unknownEnvWarnings(slips).map((w) => w.split(":")[1]?.trim())).toEqual([
      "REDIS_NAME",
      "REDIS_PORT",
      "RPC_ULR",
    ]);
  });

  it("starts production with a Kubernetes-shaped environment: ready, and nothing logged about those names", {
    timeout: 120_000,
  }, async () => {
    const s = startBuilt({ ...bed.env, ...INJECTED });
    try {
      await s.started;
      // stderr holds the banner and nothing else: no warning names an injected variable.
      expect(s.stderr()).toMatch(/^\nRFQ maker webhook listening on /);
      expect(s.stderr()).not.toMatch(/REDIS_PORT|REDIS_SERVICE|REDIS_NAME|RPC_PORT|not a setting/);
      expect(s.stdout()).not.toMatch(/REDIS_PORT|REDIS_SERVICE|REDIS_NAME|RPC_PORT|not a setting/);
      const opsUrl = s.opsUrl();
      expect(opsUrl, s.stdout()).toBeDefined();
      expect((await fetch(`${opsUrl}/ready`)).status).toBe(200);
      const warned = logLines(s.stdout()).filter((l) => /not a setting of this service/.test(String(l.msg)));
      expect(warned).toEqual([]);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it("beside the same environment, the RPC_ULR typo is still refused naming RPC_URL, exit 78", {
    timeout: 60_000,
  }, async () => {
    const { RPC_URL, ...rest } = bed.env;
    const s = startBuilt({ ...rest, ...INJECTED, RPC_ULR: RPC_URL as string });
    expect(await s.exited).toBe(78);
    expect(s.stderr()).toContain("env: RPC_ULR: not a setting of this service (did you mean RPC_URL?)");
    expect(s.stderr()).not.toMatch(/REDIS_PORT|REDIS_SERVICE|REDIS_NAME|RPC_PORT/);
  });
});
