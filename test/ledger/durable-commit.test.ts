/**
 * Issue 60's third soak: a fill landed half a second before PostgreSQL was stopped (`pg_ctl stop -m
 * immediate`, a crash) was on the chain and not in the ledger. The server ran at synchronous_commit=off
 * (as tooling/processes.ts starts it): it had answered the writer's commit before its WAL left
 * PostgreSQL's memory, the writer had then removed the records from the outbox, and the crash lost
 * them. The ledger's write commits durably whatever the server's default; this test crashes a real
 * server right after each write and finds every record.
 */
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrations.ts";
import { PostgresSqlClient } from "../../src/ledger/postgres.ts";
import { startPostgres } from "../../tooling/processes.ts";
import { decision, settlement } from "./support.ts";

describe("the ledger's write on a server at synchronous_commit=off", () => {
  it("is durable once it returns: a crash right after it loses no record", { timeout: 180_000 }, async () => {
    const pg = await startPostgres();
    try {
      const url = new URL(pg.url);
      const written: string[] = [];
      for (let round = 0; round < 3; round++) {
        const db = new PostgresSqlClient(url.toString(), { max: 1 });
        try {
          await migrate(db);
          expect(
            (await db.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"))[0]?.s,
          ).toBe("off");
          const ledger = new Ledger(db);
          const d = decision();
          await ledger.write([d, settlement(d)]);
          written.push(d.txSignature as string);
          // The crash, as the soak's: no checkpoint, no clean shutdown.
          await pg.halt();
        } finally {
          await db.close().catch(() => {});
        }
        await pg.resume();
      }
      const db = new PostgresSqlClient(url.toString(), { max: 1 });
      try {
        const fills = await new Ledger(db).fills();
        expect(fills.map((f) => f.tx_signature).sort()).toEqual([...written].sort());
      } finally {
        await db.close();
      }
    } finally {
      await pg.stop();
    }
  });
});
