/**
 * The shutdown's list of responses in flight (src/http/shutdown.ts): what it lists is exactly what was
 * added and not yet removed, whatever the order of removal, so the drain marks every open response
 * `Connection: close` and a forced exit names every request it cut.
 */
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { InFlightResponses } from "../../src/http/shutdown.ts";

const res = (name: string) => ({ name }) as unknown as ServerResponse;
const names = (list: InFlightResponses) =>
  [...list].map((r) => (r as unknown as { name: string }).name).sort();

describe("InFlightResponses", () => {
  it("lists what was added and not removed, after removals at the head, the middle and the tail", () => {
    const list = new InFlightResponses();
    const entries = ["a", "b", "c", "d", "e"].map((n) => list.add(res(n)));
    expect(list.size).toBe(5);
    list.remove(entries[4]!); // the newest: the head
    list.remove(entries[2]!); // the middle
    list.remove(entries[0]!); // the oldest: the tail
    expect(names(list)).toEqual(["b", "d"]);
    expect(list.size).toBe(2);
    list.remove(entries[1]!);
    list.remove(entries[3]!);
    expect(names(list)).toEqual([]);
    expect(list.size).toBe(0);
    list.add(res("f"));
    expect(names(list)).toEqual(["f"]);
  });

  it("ignores a second removal of the same entry (a response closing twice changes no count)", () => {
    const list = new InFlightResponses();
    const a = list.add(res("a"));
    list.add(res("b"));
    list.remove(a);
    list.remove(a);
    expect(list.size).toBe(1);
    expect(names(list)).toEqual(["b"]);
  });

  it("keeps nothing through a removed entry: it points at no response and no neighbour", () => {
    const list = new InFlightResponses();
    list.add(res("a"));
    const b = list.add(res("b"));
    list.add(res("c"));
    list.remove(b);
    expect(b).toEqual({ res: undefined, prev: undefined, next: undefined });
    expect(names(list)).toEqual(["a", "c"]);
  });
});
