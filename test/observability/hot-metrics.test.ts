/**
 * The quote path's histogram and counter (src/observability/hot-metrics.ts) must show a scrape exactly
 * what prom-client's Histogram and Counter show for the same observations: the /metrics text, the JSON
 * the workers' AggregatorRegistry reads, and the sum it makes over workers.
 */
import { AggregatorRegistry, Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HotCounter, HotHistogram } from "../../src/observability/hot-metrics.ts";

const BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const OUTCOMES = ["quoted", "no_quote", "deadline", "quoted", "unavailable", "bad_request", "shed"];

/** prom-client's metrics and ours, each in a registry of its own, fed the same observations. */
function pair() {
  const make = (hot: boolean) => {
    const registry = new Registry();
    const h = { registers: [registry] };
    return {
      registry,
      latency: hot
        ? new HotHistogram({
            name: "q_seconds",
            help: "by outcome",
            labelNames: ["outcome"],
            buckets: BUCKETS,
            ...h,
          })
        : new Histogram({
            name: "q_seconds",
            help: "by outcome",
            labelNames: ["outcome"],
            buckets: BUCKETS,
            ...h,
          }),
      left: hot
        ? new HotHistogram({ name: "left_seconds", help: "budget left", buckets: [0, 0.1, 0.25], ...h })
        : new Histogram({ name: "left_seconds", help: "budget left", buckets: [0, 0.1, 0.25], ...h }),
      responses: hot
        ? new HotCounter({ name: "r_total", help: "answers", labelNames: ["route", "status"], ...h })
        : new Counter({ name: "r_total", help: "answers", labelNames: ["route", "status"], ...h }),
      plain: hot
        ? new HotCounter({ name: "p_total", help: "plain", ...h })
        : new Counter({ name: "p_total", help: "plain", ...h }),
    };
  };
  return { theirs: make(false), ours: make(true) };
}

type Side = ReturnType<typeof pair>["ours"];

function feed(s: Side, seed: number) {
  let x = seed;
  const rand = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  for (let i = 0; i < 500; i++) {
    const outcome = OUTCOMES[i % OUTCOMES.length] as string;
    // Values on bucket bounds, between them, and above the last one.
    const v = i % 50 === 0 ? BUCKETS[i % BUCKETS.length] : rand() * (i % 97 === 0 ? 3 : 0.3);
    s.latency.observe({ outcome }, v as number);
    s.left.observe(rand() * 0.3);
    s.responses.inc({
      route: i % 3 ? "/jupiter/rfq/quote" : "/jupiter/rfq/*",
      status: String([200, 404, 401][i % 3]),
    });
    if (i % 5 === 0) s.plain.inc(i % 2);
  }
  // A number and its text are one series to prom-client (it joins labels into a string key).
  s.responses.inc({ route: "/jupiter/rfq/*", status: 200 }, 3);
  s.responses.inc({ route: "/jupiter/rfq/quote", status: 404 });
}

describe("hot metrics against prom-client's", () => {
  it("give the same /metrics text and the same JSON for the same observations", async () => {
    const { theirs, ours } = pair();
    feed(theirs, 7);
    feed(ours, 7);
    expect(await ours.registry.metrics()).toBe(await theirs.registry.metrics());
    expect(await ours.registry.getMetricsAsJSON()).toEqual(await theirs.registry.getMetricsAsJSON());
  });

  it("show a metric without labels at zero before any observation, and after a reset as prom-client does (a counter at zero, a histogram not at all)", async () => {
    const { theirs, ours } = pair();
    expect(await ours.registry.metrics()).toBe(await theirs.registry.metrics());
    expect(await ours.registry.metrics()).toMatch(/^left_seconds_count 0$/m);
    feed(theirs, 3);
    feed(ours, 3);
    for (const s of [theirs, ours]) {
      s.latency.reset();
      s.left.reset();
      s.responses.reset();
      s.plain.reset();
    }
    expect(await ours.registry.metrics()).toBe(await theirs.registry.metrics());
    expect(await ours.registry.metrics()).toMatch(/^p_total 0$/m);
  });

  it("are summed over workers by the AggregatorRegistry as prom-client's are", async () => {
    const w1 = pair();
    const w2 = pair();
    feed(w1.theirs, 1);
    feed(w1.ours, 1);
    feed(w2.theirs, 2);
    feed(w2.ours, 2);
    const theirs = AggregatorRegistry.aggregate([
      await w1.theirs.registry.getMetricsAsJSON(),
      await w2.theirs.registry.getMetricsAsJSON(),
    ]);
    const ours = AggregatorRegistry.aggregate([
      await w1.ours.registry.getMetricsAsJSON(),
      await w2.ours.registry.getMetricsAsJSON(),
    ]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toMatch(/^r_total\{route="\/jupiter\/rfq\/\*",status="200"\} \d+$/m);
  });

  it("refuse what prom-client refuses: a label the metric does not have, a value that is not a number, a counter going down", () => {
    const { ours } = pair();
    expect(() => ours.latency.observe({ outcome: "quoted", route: "/x" } as never, 0.1)).toThrow(
      /q_seconds: label "route" is not one of outcome/,
    );
    expect(() => ours.latency.observe({ outcome: "quoted" }, Number.NaN)).toThrow(/not a valid number/);
    expect(() => ours.responses.inc({ route: "/x", status: "200" }, -1)).toThrow(/decrease/);
  });
});
