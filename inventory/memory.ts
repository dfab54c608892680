/**
 * The in-memory Inventory: the embedded default (one process). Reservations live in a MemoryReservations;
 * pass the same reservation state to several instances in one process and they share reservations (tests do,
 * to run the shared contract suite), but nothing survives the process.
 */
import { type InventoryOptions, ReservationInventory } from "./reservations/inventory.ts";
import { MemoryReservations } from "./reservations/memory.ts";

export class MemoryInventory extends ReservationInventory {
  constructor(opts: InventoryOptions, reservations: MemoryReservations = new MemoryReservations()) {
    super(reservations, opts);
  }
}
