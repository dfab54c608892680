/**
 * Findings 3 and 4 of issue 61, through the commands a maker runs (`npm run doctor`, `npm run report`,
 * `npm start`'s built entry):
 *   3. doctor passed a ledger `npm start` refuses: DATABASE_URL at a closed port gave "ready", rc 0,
 *      while `npm start` exited naming DATABASE_URL. Doctor now runs the start's own ledger check
 *      (src/wiring/startup-checks.ts) and fails on the same line.
 *   4. `DATABASE_URL=... npm run report` exited 78 asking for RPC_URL, then MAKER_KEYPAIR and REDIS_URL:
 *      a reader of the ledger needs the ledger.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../tooling/processes.ts";
import { freshDatabase } from "../ledger/support.ts";
import { npmRun } from "../support/npm-run.ts";
import { startBuilt } from "../support/production-bed.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("readers");

describe("finding 3: doctor checks the ledger as npm start does", () => {
  it("DATABASE_URL at a closed port: doctor FAILs on npm start's own line, exit 1; npm start exits 69 on it", {
    timeout: 180_000,
  }, async () => {
    const port = await freePort();
    const env = {
      PAPER: "1",
      DATABASE_URL: `postgres://rfq:secret@127.0.0.1:${port}/rfq`,
      DATA_DIR: dir,
      HOST: "127.0.0.1",
      PORT: "0",
      ADMIN_PORT: "0",
    };
    const doctor = await npmRun("doctor", [], env);
    const start = startBuilt({ ...env, LOG_LEVEL: "silent" });
    expect(await start.exited).toBe(69);
    const refusal = /^cannot start: (DATABASE_URL: postgres:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*)$/m.exec(
      start.stderr(),
    );
    expect(refusal, start.stderr()).not.toBeNull();
    const line = refusal?.[1] as string;
    expect(doctor.code, doctor.stdout).toBe(1);
    const row = doctor.stdout.split("\n").find((l) => l.startsWith("fill ledger"));
    expect(row).toMatch(/^fill ledger\s+FAIL\s+DATABASE_URL: /);
    expect(row).toContain(`${line} (npm start stops here)`);
    expect(row).toContain("check DATABASE_URL and the PostgreSQL server");
    expect(doctor.stdout).toMatch(/1 problem\(s\) to fix/);
    expect(doctor.stdout).not.toContain("secret");
  });

  it("a ledger that answers: doctor's row is ok (reached, migrations current)", {
    timeout: 180_000,
  }, async () => {
    const url = await freshDatabase();
    const doctor = await npmRun("doctor", [], { PAPER: "1", DATABASE_URL: url, DATA_DIR: dir });
    expect(doctor.stdout).toMatch(/\nfill ledger\s+ok\s+postgres .*: reached, migrations current/);
    expect(doctor.code, doctor.stdout).toBe(0);
  });
});

describe("finding 4: the report asks only for what it reads", () => {
  let url: string;
  beforeAll(async () => {
    url = await freshDatabase();
  }, 60_000);

  it("DATABASE_URL alone: npm run report prints the ledger's report, exit 0", {
    timeout: 120_000,
  }, async () => {
    const r = await npmRun("report", ["--format", "json"], { DATABASE_URL: url });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty("fills");
  });

  it("DATABASE_URL with RPC_URL and neither the key nor Redis: the same, exit 0", {
    timeout: 120_000,
  }, async () => {
    const r = await npmRun("report", ["--format", "csv"], {
      DATABASE_URL: url,
      RPC_URL: "https://rpc.example",
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("# fees owed by mint");
  });

  it("still names a misspelt setting beside DATABASE_URL (DATABSE_URL would read another ledger)", {
    timeout: 120_000,
  }, async () => {
    const r = await npmRun("report", [], { DATABASE_URL: url, DATABASE_ULR: url });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(
      "env: DATABASE_ULR: not a setting of this service (did you mean DATABASE_URL?)",
    );
  });
});
