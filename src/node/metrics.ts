// Counters and gauges rendered in the Prometheus text exposition format (version 0.0.4), enough for
// a node's /metrics page without a dependency.

export type Labels = Readonly<Record<string, string | number>>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

abstract class Metric {
  abstract readonly type: 'counter' | 'gauge';
  /** Series by their label values in declared order (JSON-encoded). */
  protected readonly series = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith('__'))
        throw new Error(`invalid label name ${JSON.stringify(l)}`);
    }
    // A metric without labels has exactly one series, shown as 0 until touched.
    if (labelNames.length === 0) this.series.set('[]', 0);
  }

  /** The current value of one series (0 when never touched). */
  get(labels: Labels = {}): number {
    return this.series.get(this.key(labels)) ?? 0;
  }

  /** Forget every labelled series (e.g. the RTT of peers that left). */
  reset(): void {
    this.series.clear();
    if (this.labelNames.length === 0) this.series.set('[]', 0);
  }

  protected key(labels: Labels): string {
    const given = Object.keys(labels);
    if (given.length !== this.labelNames.length || given.some((l) => !this.labelNames.includes(l))) {
      throw new Error(
        `${this.name}: labels {${given.join(', ')}} do not match the declared {${this.labelNames.join(', ')}}`,
      );
    }
    return JSON.stringify(this.labelNames.map((l) => String(labels[l])));
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    for (const [key, value] of this.series) {
      const values = JSON.parse(key) as string[];
      const labels = this.labelNames.map((l, i) => `${l}="${escapeLabelValue(values[i] ?? '')}"`);
      lines.push(`${this.name}${labels.length > 0 ? `{${labels.join(',')}}` : ''} ${formatValue(value)}`);
    }
    return lines.join('\n') + '\n';
  }
}

/** Only goes up (by convention its name ends in _total). */
export class Counter extends Metric {
  readonly type = 'counter';

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name}: a counter cannot go down (inc by ${by})`);
    const key = this.key(labels);
    this.series.set(key, (this.series.get(key) ?? 0) + by);
  }
}

export class Gauge extends Metric {
  readonly type = 'gauge';

  set(value: number, labels: Labels = {}): void {
    this.series.set(this.key(labels), value);
  }

  inc(labels: Labels = {}, by = 1): void {
    const key = this.key(labels);
    this.series.set(key, (this.series.get(key) ?? 0) + by);
  }

  dec(labels: Labels = {}, by = 1): void {
    this.inc(labels, -by);
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors: Array<() => void> = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }

  /** Run `collect` before every render: for gauges cheaper to read on scrape than to keep current. */
  onCollect(collect: () => void): void {
    this.collectors.push(collect);
  }

  /** The whole registry in Prometheus text format. */
  render(): string {
    for (const c of this.collectors) c();
    return [...this.metrics.values()].map((m) => m.render()).join('');
  }

  private add<M extends Metric>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}
