/**
 * Opens the fill ledger the configuration names: `DATABASE_URL` (a PostgreSQL server, reached and
 * migrated at start, or the start stops naming it), else PGlite in `<DATA_DIR>/ledger`; `LEDGER=off`:
 * none. Migrations run on every open (src/ledger/migrations.ts).
 */
import { join } from "node:path";
import type { Config } from "../../config/load.ts";
import { redactUrl } from "../chain/rpc.ts";
import { describeCause, StartupError } from "../errors/startup.ts";
import { Ledger } from "./ledger.ts";
import { migrate } from "./migrations.ts";
import { PgliteSqlClient } from "./pglite.ts";
import { PostgresSqlClient } from "./postgres.ts";
import type { SqlClient } from "./sql.ts";

/** Where the ledger lives for this configuration; undefined when it is off. */
export function ledgerLocation(
  config: Config,
): { kind: "postgres"; url: string } | { kind: "pglite"; dir: string } | undefined {
  if (config.env.LEDGER === "off") return undefined;
  if (config.env.DATABASE_URL) return { kind: "postgres", url: config.env.DATABASE_URL };
  return { kind: "pglite", dir: join(config.env.DATA_DIR, "ledger") };
}

/** Opens and migrates a ledger database; throws a StartupError naming DATABASE_URL when it cannot. */
export async function openLedger(
  where: NonNullable<ReturnType<typeof ledgerLocation>>,
  timeoutMs = 10_000,
): Promise<Ledger> {
  let db: SqlClient | undefined;
  try {
    db =
      where.kind === "postgres"
        ? new PostgresSqlClient(where.url, { connectTimeoutS: Math.max(1, Math.ceil(timeoutMs / 1000)) })
        : await PgliteSqlClient.open(where.dir);
    await migrate(db);
    return new Ledger(db);
  } catch (e) {
    await db?.close().catch(() => {});
    if (where.kind === "postgres")
      throw new StartupError("DATABASE_URL", redactUrl(where.url), describeCause(e));
    throw new StartupError("DATA_DIR", where.dir, `cannot open the embedded ledger: ${describeCause(e)}`);
  }
}
