/**
 * The in-process view of the taker lists that the quote and swap paths read (no I/O per quote). The
 * adapters replace a list wholesale when they (re)read it; config entries sit beside it and are never
 * replaced or removed. Expiry is judged at read time against the caller's clock, so a lapsed flag
 * stops counting at its `untilMs` exactly, whatever the age of the last reload.
 */
import type { ToxicityConfig } from "../../config/schema.ts";
import { type Standing, TAKER_LISTS, type TakerEntry, type TakerList } from "./interface.ts";

const live = (e: TakerEntry | undefined, nowMs: number): e is TakerEntry =>
  e !== undefined && (e.untilMs === undefined || e.untilMs > nowMs);

export class TakerView {
  private readonly fromConfig: Record<TakerList, ReadonlyMap<string, TakerEntry>>;
  protected lists: Record<TakerList, Map<string, TakerEntry>> = {
    flags: new Map(),
    deny: new Map(),
    allow: new Map(),
  };

  constructor(config: Pick<ToxicityConfig, "deny" | "allow">) {
    const entries = (takers: readonly string[], reason: string) =>
      new Map(takers.map((taker) => [taker, { taker, reason, source: "config" as const, atMs: 0 }]));
    this.fromConfig = {
      flags: new Map(),
      deny: entries(config.deny, "toxicity.deny"),
      allow: entries(config.allow, "toxicity.allow"),
    };
  }

  private find(list: TakerList, taker: string, nowMs: number): TakerEntry | undefined {
    const cfg = this.fromConfig[list].get(taker);
    if (cfg) return cfg;
    const e = this.lists[list].get(taker);
    return live(e, nowMs) ? e : undefined;
  }

  standing(taker: string, nowMs: number): Standing {
    const allowed = this.find("allow", taker, nowMs);
    if (allowed) return { kind: "allowed", entry: allowed };
    const denied = this.find("deny", taker, nowMs);
    if (denied) return { kind: "denied", entry: denied };
    const flagged = this.find("flags", taker, nowMs);
    if (flagged) return { kind: "flagged", entry: flagged };
    return { kind: "none" };
  }

  list(nowMs: number): Record<TakerList, TakerEntry[]> {
    const out = { flags: [], deny: [], allow: [] } as Record<TakerList, TakerEntry[]>;
    for (const l of TAKER_LISTS) {
      const seen = new Set<string>();
      for (const e of this.fromConfig[l].values()) {
        seen.add(e.taker);
        out[l].push(e);
      }
      for (const e of this.lists[l].values()) if (!seen.has(e.taker) && live(e, nowMs)) out[l].push(e);
    }
    return out;
  }

  /** A config entry cannot be removed through the API (edit the configuration instead). */
  isConfigured(list: TakerList, taker: string): boolean {
    return this.fromConfig[list].has(taker);
  }
}
