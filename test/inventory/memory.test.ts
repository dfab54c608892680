import { MemoryInventory } from "../../inventory/memory.ts";
import { MemoryReservations } from "../../inventory/reservations/memory.ts";
import { inventoryContract } from "./contract.ts";

inventoryContract("memory", {
  setup(world) {
    // Instances in one process share one ledger, the in-memory analogue of one Redis.
    const ledger = new MemoryReservations();
    return {
      instance: () => new MemoryInventory(world.options(), ledger),
      store: () => ledger,
      cleanup: async () => {},
    };
  },
});
