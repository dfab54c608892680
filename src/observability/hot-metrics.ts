/**
 * A histogram and a counter for the quote path, where every quote observes one of each (and the
 * listener counts its answer): prom-client's own spend most of an observation on the labels. Each call
 * builds an object for them, checks every label name, and joins the labels into a string key to find
 * the series. With the labels removed from the quote path altogether, the listener's CPU per quote fell
 * 4-6% (a paired in-process A/B).
 *
 * These keep one series per label values, found through one small Map per label (no string built, no
 * check once the series exists), and a series is a few numbers. What they show a scrape is exactly what
 * prom-client's Histogram and Counter show for the same observations, in text and in JSON (the workers'
 * AggregatorRegistry sums them as it sums prom-client's): test/observability/hot-metrics.test.ts
 * feeds both the same observations and requires the same output.
 */
import type { Registry } from "prom-client";

type Labels<L extends string> = Partial<Record<L, string | number>>;

interface Exported {
  name: string;
  help: string;
  type: "histogram" | "counter";
  values: ExportedValue[];
  aggregator: "sum";
}

interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  sharedLabels?: Record<string, string | number>;
  exemplar?: null;
}

/** A label value as a series key: 200 and "200" are one series, as prom-client joins them into text. */
const keyOf = (v: string | number | undefined): string | undefined =>
  typeof v === "string" || v === undefined ? v : String(v);

/**
 * Series by label values: one Map per label name, in the metric's label order; the last one holds the
 * series. A label left out is keyed as undefined, as prom-client leaves it out of the series' labels.
 */
class SeriesIndex<L extends string, S> {
  private readonly root = new Map<unknown, unknown>();
  /** Every series, in the order first observed (prom-client's order). */
  readonly all: S[] = [];

  constructor(
    private readonly metric: string,
    private readonly labelNames: readonly L[],
    private readonly create: (labels: Record<string, string | number>) => S,
  ) {}

  get(labels: Labels<L> | undefined): S {
    const names = this.labelNames;
    let level = this.root;
    const last = names.length - 1;
    if (last < 0) return (this.root.get(undefined) as S | undefined) ?? this.add(labels);
    for (let i = 0; i < last; i++) {
      const next = level.get(keyOf(labels?.[names[i] as L])) as Map<unknown, unknown> | undefined;
      if (next === undefined) return this.add(labels);
      level = next;
    }
    return (level.get(keyOf(labels?.[names[last] as L])) as S | undefined) ?? this.add(labels);
  }

  /** A series seen for the first time: the labels are checked (as prom-client checks every call). */
  private add(labels: Labels<L> | undefined): S {
    const own: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(labels ?? {})) {
      if (!this.labelNames.includes(k as L))
        throw new Error(
          `${this.metric}: label "${k}" is not one of ${this.labelNames.join(", ") || "(none)"}`,
        );
      if (v !== undefined) own[k] = v as string | number;
    }
    const series = this.create(own);
    let level = this.root;
    const names = this.labelNames;
    for (let i = 0; i < names.length - 1; i++) {
      const key = keyOf(labels?.[names[i] as L]);
      let next = level.get(key) as Map<unknown, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(key, next);
      }
      level = next;
    }
    level.set(names.length ? keyOf(labels?.[names[names.length - 1] as L]) : undefined, series);
    this.all.push(series);
    return series;
  }

  clear(): void {
    this.root.clear();
    this.all.length = 0;
  }
}

interface HistogramSeries {
  labels: Record<string, string | number>;
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf only). */
  counts: Float64Array;
  sum: number;
  count: number;
}

export interface HotMetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  registers: Registry[];
}

/** What both keep alike: name, help, the series by label values, and the registration for scrapes. */
abstract class HotMetric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = "sum" as const;
  protected readonly series: SeriesIndex<L, S>;
  /** Without labels there is one series, which prom-client shows at zero from the start. */
  protected readonly unlabelled: boolean;

  constructor(opts: HotMetricOptions<L>, create: (labels: Record<string, string | number>) => S) {
    this.name = opts.name;
    this.help = opts.help;
    this.unlabelled = !opts.labelNames?.length;
    this.series = new SeriesIndex(opts.name, opts.labelNames ?? [], create);
    if (this.unlabelled) this.series.get(undefined);
    for (const r of opts.registers) r.registerMetric(this as never);
  }
}

export interface HotHistogramOptions<L extends string> extends HotMetricOptions<L> {
  /** Upper bounds, ascending (as prom-client takes them). */
  buckets: number[];
}

export class HotHistogram<L extends string = never> extends HotMetric<L, HistogramSeries> {
  readonly type = "histogram" as const;
  private readonly bounds: readonly number[];

  constructor(opts: HotHistogramOptions<L>) {
    const slots = opts.buckets.length + 1;
    super(opts, (labels) => ({ labels, counts: new Float64Array(slots), sum: 0, count: 0 }));
    this.bounds = [...opts.buckets];
  }

  /** prom-client's forms: `observe(value)` or `observe(labels, value)`. */
  observe(labelsOrValue: Labels<L> | number, value?: number): void {
    const labeled = typeof labelsOrValue === "object";
    const v = labeled ? (value as number) : labelsOrValue;
    if (!Number.isFinite(v)) throw new TypeError(`${this.name}: value is not a valid number: ${v}`);
    const s = this.series.get(labeled ? labelsOrValue : undefined);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && v > (bounds[i] as number)) i++;
    (s.counts[i] as number)++;
    s.sum += v;
    s.count++;
  }

  /** Forgets every series (as prom-client's Histogram, even one without labels). */
  reset(): void {
    this.series.clear();
  }

  /** As prom-client's Histogram exports for the registry's text: `le` in labels, the series' labels shared. */
  async getForPromString(): Promise<Exported> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.all) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i] as number;
        values.push({
          labels: { le: this.bounds[i] as number },
          sharedLabels: s.labels,
          value: acc,
          metricName: bucket,
          exemplar: null,
        });
      }
      values.push(
        {
          labels: { le: "+Inf" },
          sharedLabels: s.labels,
          value: s.count,
          metricName: bucket,
          exemplar: null,
        },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's Histogram exports as JSON: each value's labels with the series' own merged in. */
  async get(): Promise<Exported> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return data;
  }
}

interface CounterSeries {
  value: number;
  labels: Record<string, string | number>;
}

export class HotCounter<L extends string = never> extends HotMetric<L, CounterSeries> {
  readonly type = "counter" as const;

  constructor(opts: HotMetricOptions<L>) {
    super(opts, (labels) => ({ value: 0, labels }));
  }

  /** prom-client's forms: `inc()`, `inc(n)`, `inc(labels)`, `inc(labels, n)`. */
  inc(labelsOrValue?: Labels<L> | number, value?: number): void {
    const labeled = typeof labelsOrValue === "object";
    const n = labeled ? (value ?? 1) : (labelsOrValue ?? 1);
    if (!Number.isFinite(n)) throw new TypeError(`${this.name}: value is not a valid number: ${n}`);
    if (n < 0) throw new Error(`${this.name}: it is not possible to decrease a counter`);
    this.series.get(labeled ? labelsOrValue : undefined).value += n;
  }

  /** Forgets every series; one without labels is kept at zero, as prom-client's Counter keeps it. */
  reset(): void {
    this.series.clear();
    if (this.unlabelled) this.series.get(undefined);
  }

  async get(): Promise<Exported> {
    return {
      help: this.help,
      name: this.name,
      type: this.type,
      values: this.series.all.map((s) => ({ value: s.value, labels: s.labels })),
      aggregator: this.aggregator,
    };
  }
}
