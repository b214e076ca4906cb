//! The series every request to the service touches (`mls_api_requests_total`,
//! `mls_api_request_duration_seconds`, `mls_pages_parsed_total`), kept as plain numbers and
//! turned into series only when scraped, as the per-model ones are (model-metrics.ts).
//! prom-client hashes and validates the labels at every `inc` and `observe`: at 10,000 models
//! that is three hashes and three label objects for each of about 1,000 requests a second.
/** A series as prom-client's metric interface returns it (`Registry` formats these). */
interface SeriesValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** prom-client's metric interface: what a `Registry` reads at a scrape and resets. */
export interface PlainMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly labelNames: readonly string[];
  readonly aggregator: 'sum';
  get(): { name: string; help: string; type: string; aggregator: string; values: SeriesValue[] };
  reset(): void;
}

/** The class of a status code (`2xx`, `4xx`, …), or `error` for a transport failure. */
export function statusClass(status: number | 'error'): string {
  if (status === 'error') return 'error';
  const hundreds = Math.floor(status / 100);
  // Constant strings for the usual classes: no new string per request.
  return CLASSES[hundreds] ?? `${hundreds}xx`;
}

const CLASSES: readonly string[] = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx', '6xx', '7xx', '8xx', '9xx'];

/** One operation's latency histogram: a count per bucket (not cumulative), the sum and the count. */
class Latencies {
  readonly perBucket: number[];
  sum = 0;
  count = 0;

  constructor(buckets: number) {
    this.perBucket = new Array<number>(buckets).fill(0);
  }
}

/** The request series of one daemon: {@link RequestMetrics.attempt} and {@link RequestMetrics.page} write them. */
export class RequestMetrics {
  /** operation → status class → requests, in the order first seen. */
  private readonly requests = new Map<string, Map<string, number>>();
  private readonly latencies = new Map<string, Latencies>();
  private readonly pages = new Map<string, number>([
    // All three readers from the start: which one takes the pages shows at once.
    ['kernel', 0],
    ['javascript', 0],
    ['json', 0],
  ]);

  /** `mls_api_requests_total{operation, status_class}`. */
  readonly requestsMetric: PlainMetric;
  /** `mls_api_request_duration_seconds{operation}`. */
  readonly latencyMetric: PlainMetric;
  /** `mls_pages_parsed_total{path}`. */
  readonly pagesMetric: PlainMetric;

  /** `upperBounds`: the latency buckets in seconds, ascending. */
  constructor(private readonly upperBounds: readonly number[]) {
    this.requestsMetric = this.metric(
      'mls_api_requests_total',
      'HTTP requests to the service, per operation and status class (2xx, 4xx, 5xx, error).',
      'counter',
      ['operation', 'status_class'],
      () => this.requestValues(),
      () => this.requests.clear(),
    );
    this.latencyMetric = this.metric(
      'mls_api_request_duration_seconds',
      'Latency of requests to the service.',
      'histogram',
      ['operation'],
      () => this.latencyValues(),
      () => this.latencies.clear(),
    );
    this.pagesMetric = this.metric(
      'mls_pages_parsed_total',
      'Pages of logs read, per reader (kernel: the WebAssembly page kernel, javascript: the JavaScript scanner, json: JSON.parse with the full validation).',
      'counter',
      ['path'],
      () => [...this.pages].map(([path, value]) => ({ labels: { path }, value })),
      () => {
        for (const path of this.pages.keys()) this.pages.set(path, 0);
      },
    );
  }

  /** One HTTP attempt of `operation`: its status (or `error`) and how long it took. */
  attempt(operation: string, status: number | 'error', latencyMs: number): void {
    let byClass = this.requests.get(operation);
    if (byClass === undefined) this.requests.set(operation, (byClass = new Map()));
    const cls = statusClass(status);
    byClass.set(cls, (byClass.get(cls) ?? 0) + 1);
    let l = this.latencies.get(operation);
    if (l === undefined) this.latencies.set(operation, (l = new Latencies(this.upperBounds.length)));
    const seconds = latencyMs / 1000;
    if (!Number.isFinite(seconds)) return;
    l.sum += seconds;
    l.count++;
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        l.perBucket[i]!++;
        break;
      }
    }
  }

  /** A page of logs read by `path` (the reader: kernel, javascript, json). */
  page(path: string): void {
    this.pages.set(path, (this.pages.get(path) ?? 0) + 1);
  }

  private requestValues(): SeriesValue[] {
    const values: SeriesValue[] = [];
    for (const [operation, byClass] of this.requests) {
      for (const [cls, value] of byClass) values.push({ labels: { operation, status_class: cls }, value });
    }
    return values;
  }

  /** `_bucket` (cumulative, then `+Inf`), `_sum` and `_count` per operation, as prom-client writes a histogram. */
  private latencyValues(): SeriesValue[] {
    const name = 'mls_api_request_duration_seconds';
    const values: SeriesValue[] = [];
    for (const [operation, l] of this.latencies) {
      let acc = 0;
      for (let i = 0; i < this.upperBounds.length; i++) {
        acc += l.perBucket[i]!;
        values.push({ labels: { le: this.upperBounds[i]!, operation }, value: acc, metricName: `${name}_bucket` });
      }
      values.push({ labels: { le: '+Inf', operation }, value: l.count, metricName: `${name}_bucket` });
      values.push({ labels: { operation }, value: l.sum, metricName: `${name}_sum` });
      values.push({ labels: { operation }, value: l.count, metricName: `${name}_count` });
    }
    return values;
  }

  private metric(name: string, help: string, type: 'counter' | 'histogram', labelNames: readonly string[], values: () => SeriesValue[], reset: () => void): PlainMetric {
    return {
      name,
      help,
      type,
      labelNames,
      aggregator: 'sum',
      get: () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset,
    };
  }
}
