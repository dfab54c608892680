/**
 * The in-memory Inventory: the embedded default (one process). Reservations live in a MemoryLedger;
 * pass the same ledger to several instances in one process and they share reservations (tests do,
 * to run the shared contract suite), but nothing survives the process.
 */
import { type InventoryOptions, LedgerInventory } from "./ledger-inventory.ts";
import { MemoryLedger } from "./ledger-memory.ts";

export class MemoryInventory extends LedgerInventory {
  constructor(opts: InventoryOptions, ledger: MemoryLedger = new MemoryLedger()) {
    super(ledger, opts);
  }
}
