/**
 * Named conditions the service is in: something it cannot do that nobody asked about yet (a configured
 * token it cannot advertise, a pair whose price is stale, ...). Each is logged once when it is entered
 * (warn) and once when it is left (info), listed on /ready (`conditions`, name -> detail), and, when it
 * `blocksReady`, makes /ready answer 503. Any part of the service adds its own: `set(name, state)`
 * enters, updates or (with `undefined`) leaves one; `watch(evaluate)` registers a function that
 * re-evaluates some conditions, run every `intervalMs` once `start()`ed and before each /ready answer.
 */
import type { Logger } from "./logger.ts";

export interface ConditionState {
  /** One line naming the thing and what is wrong with it. */
  detail: string;
  /** /ready answers 503 while this holds. */
  blocksReady: boolean;
}

export interface Condition extends ConditionState {
  name: string;
  /** When it was entered (ms epoch). */
  sinceMs: number;
}

export interface ConditionsOptions {
  log?: Logger;
  now?: () => number;
}

export class Conditions {
  private readonly held = new Map<string, Condition>();
  private readonly watchers: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ConditionsOptions = {}) {}

  /** Enters (logged), updates (silently) or, with `undefined`, leaves (logged) the condition `name`. */
  set(name: string, state: ConditionState | undefined): void {
    const now = this.opts.now ?? Date.now;
    const was = this.held.get(name);
    if (!state) {
      if (!was) return;
      this.held.delete(name);
      this.opts.log?.info(
        { condition: name, heldMs: now() - was.sinceMs },
        `condition left: ${name} (was: ${was.detail})`,
      );
      return;
    }
    if (was) {
      was.detail = state.detail;
      was.blocksReady = state.blocksReady;
      return;
    }
    this.held.set(name, { name, ...state, sinceMs: now() });
    this.opts.log?.warn(
      { condition: name, detail: state.detail, blocksReady: state.blocksReady },
      `condition entered: ${name}: ${state.detail}${state.blocksReady ? " (/ready answers 503)" : ""}`,
    );
  }

  /** Registers a re-evaluation (run now, on every tick and before each /ready answer). */
  watch(evaluate: () => void): void {
    this.watchers.push(evaluate);
    evaluate();
  }

  /** Runs every watcher. */
  refresh(): void {
    for (const w of this.watchers) w();
  }

  /** The conditions held now, by name. */
  list(): Condition[] {
    return [...this.held.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Re-evaluates every `intervalMs` (the timer does not hold the process open). */
  start(intervalMs: number): void {
    this.timer ??= setInterval(() => this.refresh(), intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
