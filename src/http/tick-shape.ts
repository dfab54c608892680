/**
 * Keeps one of Node's tick objects alive for the life of the process, so that `process.nextTick`
 * keeps V8's fast path after full collections.
 *
 * Node's `nextTick` builds each tick as the literal
 * `{ [async_id_symbol]: ..., [trigger_async_id_symbol]: ..., callback, args }`. V8 reaches the maps
 * of that literal after its first property through transitions, and it holds transitions weakly.
 * When a full collection finds no tick object alive, it frees those maps, and the next tick makes
 * new ones. The literal's define sites in `nextTick`'s feedback then see a new map after each such
 * collection. After a few of them they turn megamorphic, and from then on every tick defines its
 * properties in V8's runtime (`Runtime_DefineKeyedOwnPropertyInLiteral`).
 *
 * Node's HTTP streams call `nextTick` several times per request. With `npm run loadtest --
 * --perf-server` at 6,000 quotes/s, the webhook spent 2.2-2.8 µs per request in it once that had
 * happened, and 0.1-0.15 µs before (docs/performance.md). A webhook that runs for hours gets there
 * whatever it does.
 *
 * A tick object held here keeps its own map alive, and that map keeps the ones before it (each map
 * points back to its parent), so the transitions stay and the sites stay monomorphic.
 * `async_hooks` hands a TickObject's `init` hook the tick object itself. The hook is enabled for one
 * `nextTick` at start-up and disabled at once: a hook left enabled would cost every async operation.
 * test/http/tick-shape.test.ts holds it to that.
 */
import { createHook } from "node:async_hooks";

let pinned: object | undefined;

const noop = () => {};

/** Captures and keeps one tick object (once per process); true when one is held. */
export function pinTickObjectShape(): boolean {
  if (pinned !== undefined) return true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === "TickObject" && pinned === undefined) pinned = resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
  return pinned !== undefined;
}
