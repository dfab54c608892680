/**
 * The load test's ledger check waits for the webhook's fill journal to go quiet before it reads the
 * ledger (sandbox/loadtest/ledger-check.ts). It must watch the keys the composed service really
 * journals under: it once polled `rfq:{fills}:*` while the webhook wrote `rfq:swap:{fills}:*`, so it
 * never waited, and the outbox batch a SIGKILLed writer had taken (taken over by the restarted writer
 * only 30 s later) was missing from the ledger it checked, about one run in five on a loaded machine.
 */
import { afterAll, describe, expect, it } from "vitest";
import { waitForQuietJournal } from "../../../sandbox/loadtest/ledger-check.ts";
import type { Ledger } from "../../../src/ledger/ledger.ts";
import { decision, freshLedger } from "../../ledger/support.ts";
import { defaultFileConfig } from "../../support/config.ts";
import { createHarness, type Harness } from "../../support/harness.ts";
import { fileRedis, redisUrl } from "../../support/redis.ts";

const shared = fileRedis();

describe("the load test's wait for a quiet fill journal", () => {
  let h: Harness | undefined;
  let ledger: Ledger | undefined;
  afterAll(async () => {
    await h?.close();
    await ledger?.db.close();
  });

  it("waits on the keys the composed webhook journals under, until its writer has written the outbox", {
    timeout: 60_000,
  }, async () => {
    ledger = await freshLedger("pglite");
    h = await createHarness({ redis: shared, ledger });
    // The writer's loop stops (after its last pass); from here it writes only when the test drains it.
    const writer = h.service.ledgerWriter;
    if (!writer) throw new Error("the composed service has no ledger writer");
    await writer.stop();
    const wait = (ms: number) => waitForQuietJournal(redisUrl(), h!.config.file, ms, shared.prefix);

    await h.journal.appendLedger(decision());
    const busy = await wait(600);
    expect(busy).toMatchObject({ outbox: 1, pending: 0, found: true });
    expect(busy.outboxKey).toBe(`${shared.prefix}swap:{fills}:ledger`);
    expect(busy.waitedMs).toBeGreaterThan(600);

    expect(await ledger.decisions()).toHaveLength(0);
    await writer.drain();
    expect(await ledger.decisions()).toHaveLength(1);
    const quiet = await wait(10_000);
    expect(quiet).toMatchObject({ outbox: 0, pending: 0, found: true });
  });

  it("says when no outbox exists under the keys it watches (not the webhook's keys)", async () => {
    const r = await waitForQuietJournal(redisUrl(), defaultFileConfig(), 0, `${shared.prefix}elsewhere:`);
    expect(r).toMatchObject({ found: false, outbox: 0, pending: 0 });
  });
});
