//! The request series are plain numbers written as prom-client would write the same
//! observations: a dashboard or alert built on them reads the same text.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestMetrics, statusClass } from '../../src/telemetry/request-metrics.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The three metrics as prom-client's own classes, fed the same observations. */
function reference(): { registry: Registry; attempt: (op: string, status: number | 'error', ms: number) => void; page: (path: string) => void } {
  const registry = new Registry();
  const requests = new Counter({ name: 'mls_api_requests_total', help: 'HTTP requests to the service, per operation and status class (2xx, 4xx, 5xx, error).', labelNames: ['operation', 'status_class'], registers: [registry] });
  const latency = new Histogram({ name: 'mls_api_request_duration_seconds', help: 'Latency of requests to the service.', labelNames: ['operation'], buckets: BUCKETS, registers: [registry] });
  const pages = new Counter({ name: 'mls_pages_parsed_total', help: 'Pages of logs read, per reader (kernel: the WebAssembly page kernel, javascript: the JavaScript scanner, json: JSON.parse with the full validation).', labelNames: ['path'], registers: [registry] });
  for (const path of ['kernel', 'javascript', 'json']) pages.inc({ path }, 0);
  return {
    registry,
    attempt: (op, status, ms) => {
      requests.inc({ operation: op, status_class: statusClass(status) });
      latency.observe({ operation: op }, ms / 1000);
    },
    page: (path) => pages.inc({ path }),
  };
}

const sortedLines = (text: string): string[] => text.split('\n').sort();

function plain(): { registry: Registry; metrics: RequestMetrics } {
  const registry = new Registry();
  const metrics = new RequestMetrics(BUCKETS);
  for (const m of [metrics.requestsMetric, metrics.latencyMetric, metrics.pagesMetric]) registry.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
  return { registry, metrics };
}

describe('RequestMetrics', () => {
  it('writes the same Prometheus text as prom-client for the same requests and pages', async () => {
    const ref = reference();
    const mine = plain();
    // latencies on bucket bounds, between them, past the last one; statuses of every class
    const attempts: Array<[string, number | 'error', number]> = [
      ['logs', 200, 5], ['logs', 200, 7.5], ['logs', 200, 10], ['logs', 503, 120], ['logs', 'error', 30_000],
      ['settings', 200, 250], ['logs', 429, 1], ['logs', 200, 45_000], ['settings', 404, 3], ['logs', 302, 0],
    ];
    for (const [op, status, ms] of attempts) {
      ref.attempt(op, status, ms);
      mine.metrics.attempt(op, status, ms);
    }
    for (const path of ['kernel', 'kernel', 'json', 'javascript', 'kernel']) {
      ref.page(path);
      mine.metrics.page(path);
    }
    const text = await mine.registry.metrics();
    // the same lines; the order of a metric's series means nothing to Prometheus
    expect(sortedLines(text)).toEqual(sortedLines(await ref.registry.metrics()));
    expect(text).toContain('mls_api_request_duration_seconds_bucket{le="0.01",operation="logs"} 5');
    expect(text).toContain('mls_api_request_duration_seconds_bucket{le="+Inf",operation="logs"} 8');
    expect(text).toContain('mls_api_requests_total{operation="logs",status_class="5xx"} 1');
    expect(text).toContain('mls_pages_parsed_total{path="kernel"} 3');
  });

  it('exports every reader at 0 before the first page, and no request series before the first request', async () => {
    const { registry } = plain();
    const text = await registry.metrics();
    expect(text).toContain('mls_pages_parsed_total{path="kernel"} 0\nmls_pages_parsed_total{path="javascript"} 0\nmls_pages_parsed_total{path="json"} 0');
    expect(text).not.toMatch(/^mls_api_request/m);
    expect(text).toBe(await reference().registry.metrics());
  });

  it('restarts at 0 when the registry is reset', async () => {
    const { registry, metrics } = plain();
    metrics.attempt('logs', 200, 3);
    metrics.page('kernel');
    registry.resetMetrics();
    const text = await registry.metrics();
    expect(text).not.toMatch(/^mls_api_request/m);
    expect(text).toContain('mls_pages_parsed_total{path="kernel"} 0');
  });

  it('names status classes with constant strings, and the unusual ones too', () => {
    expect([200, 204, 301, 404, 429, 500, 503, 'error' as const].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx', 'error']);
    expect(statusClass(999)).toBe('9xx');
    expect(statusClass(1099)).toBe('10xx');
  });
});
