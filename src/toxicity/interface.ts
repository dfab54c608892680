/**
 * Taker standing: the toxic-flow controls' shared state (flags, deny list, allow list), read
 * synchronously on the quote and swap paths from an in-process view and edited through the admin API
 * and the markout flagger. Adapters: memory.ts (one process, the paper setup) and redis.ts (every
 * instance through Redis); view.ts is the in-process state both keep.
 */

export type TakerList = "flags" | "deny" | "allow";
export const TAKER_LISTS: readonly TakerList[] = ["flags", "deny", "allow"];

/** Who put a taker on a list. */
export type EntrySource = "markouts" | "admin" | "config";

export interface TakerEntry {
  taker: string;
  reason: string;
  source: EntrySource;
  /** When it was added (ms since epoch). */
  atMs: number;
  /** When it lapses (ms since epoch); absent: until removed. Flags always have one. */
  untilMs?: number;
  /** A markout flag's evidence: the average 60 s markout (bps) over `fills` fills. */
  avgBps?: number;
  fills?: number;
}

/**
 * What the controls make of a taker, in order of precedence: allowed (never flagged, widened, refused
 * or rejected, whatever else is on record), denied, flagged, or nothing.
 */
export type Standing =
  | { kind: "allowed"; entry: TakerEntry }
  | { kind: "denied"; entry: TakerEntry }
  | { kind: "flagged"; entry: TakerEntry }
  | { kind: "none" };

export interface TakerStanding {
  /** Synchronous, in memory: the quote path's read. Expiry is judged against `nowMs` here. */
  standing(taker: string, nowMs: number): Standing;
  /** The unexpired entries of every list (config entries included). */
  list(nowMs: number): Record<TakerList, TakerEntry[]>;
  /** Adds or replaces a taker's entry on a list, for every instance. */
  put(list: TakerList, entry: TakerEntry): Promise<void>;
  /** Removes a taker from a list (false: it was not on it). Config entries cannot be removed. */
  remove(list: TakerList, taker: string): Promise<boolean>;
  start(): Promise<void>;
  close(): Promise<void>;
}
