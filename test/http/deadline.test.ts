import { describe, expect, it } from "vitest";
import { quoteDeadline } from "../../src/http/deadline.ts";

describe("quoteDeadline", () => {
  const arrival = 1_700_000_000_000;

  it("uses x-request-start + x-request-timeout when both are sane", () => {
    expect(quoteDeadline(String(arrival - 20), "250", arrival)).toEqual({
      atMs: arrival + 230,
      startMs: arrival - 20,
      source: "header",
    });
  });

  it("keeps the operator's timeout when it changes it", () => {
    expect(quoteDeadline(String(arrival), "400", arrival).atMs).toBe(arrival + 400);
  });

  it.each([
    ["absent", undefined, undefined],
    ["not a number", "soon", "250"],
    ["far in the future (clock skew)", String(arrival + 60_000), "250"],
    ["a minute old", String(arrival - 60_000), "250"],
  ])("falls back to arrival time when x-request-start is %s", (_n, start, timeout) => {
    expect(quoteDeadline(start, timeout, arrival)).toEqual({
      atMs: arrival + 250,
      startMs: arrival,
      source: "arrival",
    });
  });

  it.each([["0"], ["-5"], ["NaN"], ["999999"]])(
    "falls back to 250 ms when x-request-timeout is %s",
    (timeout) => {
      expect(quoteDeadline(String(arrival), timeout, arrival).atMs).toBe(arrival + 250);
    },
  );
});
