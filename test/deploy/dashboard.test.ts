// The Grafana dashboard queries only metrics the daemon exports.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/telemetry/metrics.js';

interface Target {
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id?: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
  gridPos?: { x: number; y: number; w: number; h: number };
}
interface Dashboard {
  schemaVersion: number;
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown; definition?: string }[] };
}

const file = fileURLToPath(new URL('../../config/grafana-dashboard.json', import.meta.url));
const dashboard = JSON.parse(readFileSync(file, 'utf8')) as Dashboard;

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}
const panels = allPanels(dashboard.panels);
const queryPanels = panels.filter((p) => p.type !== 'row');

/** Every PromQL text of the dashboard: panel targets and templating queries. */
function expressions(): string[] {
  const out = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const q = v.query as string | { query?: string };
    out.push(typeof q === 'string' ? q : (q.query ?? ''));
    if (v.definition) out.push(v.definition);
  }
  return out;
}

const METRIC_RE = /\bmls_[A-Za-z0-9_]+/g;

async function exportedNames(): Promise<{ names: Set<string>; histograms: Set<string> }> {
  const metrics = new Metrics();
  const json = await metrics.registry.getMetricsAsJSON();
  return { names: new Set(json.map((m) => m.name)), histograms: new Set(json.filter((m) => String(m.type) === 'histogram').map((m) => m.name)) };
}

describe('config/grafana-dashboard.json', () => {
  it('is a dashboard of a recent schema with a Prometheus data source variable', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'datasource', query: 'prometheus' });
  });

  it('every panel and query uses the data source variable', () => {
    for (const p of queryPanels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const t of p.targets ?? []) expect(t.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('panel ids are unique and every panel has a query', () => {
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of queryPanels) expect((p.targets ?? []).length, p.title).toBeGreaterThan(0);
  });

  it('has the panels operators need', () => {
    const exprsOf = (title: string): string => {
      const p = queryPanels.find((x) => x.title === title);
      expect(p, `panel "${title}"`).toBeDefined();
      return (p!.targets ?? []).map((t) => t.expr).join('\n');
    };
    expect(exprsOf('Lag per model')).toContain('mls_model_lag_seconds');
    expect(exprsOf('Delivered entries/s per sink')).toMatch(/rate\(mls_sink_delivered_total/);
    expect(exprsOf('Fetched entries/s per model')).toMatch(/rate\(mls_entries_fetched_total/);
    expect(exprsOf('Backlog per sink')).toContain('mls_sink_backlog_entries');
    expect(exprsOf('API requests by status class')).toMatch(/sum by \(status_class\) \(rate\(mls_api_requests_total/);
    expect(exprsOf('API latency p95')).toMatch(/histogram_quantile\(0\.95, .*mls_api_request_duration_seconds_bucket/);
    expect(exprsOf('Journal size')).toContain('mls_journal_entries');
    expect(exprsOf('Errors per model')).toMatch(/sum by \(model\) \(rate\(mls_model_log_records_total\{.*level=~"error\|fatal"/);
    expect(exprsOf('Exceptions by type per model')).toMatch(/sum by \(model, type\) \(increase\(mls_model_exceptions_total\{/);
    const errors = exprsOf('Poll errors') + exprsOf('Sink errors');
    for (const m of ['mls_poll_errors_total', 'mls_sink_failures_total', 'mls_sink_dead_letters_total', 'mls_sink_dropped_total']) expect(errors).toContain(m);
  });

  it('queries only metrics that the daemon exports', async () => {
    const { names, histograms } = await exportedNames();
    const used = new Set(expressions().flatMap((e) => e.match(METRIC_RE) ?? []));
    expect(used.size).toBeGreaterThan(10);
    const unknown = [...used].filter((name) => {
      if (names.has(name)) return false;
      const base = name.replace(/_(bucket|sum|count)$/, '');
      return !(base !== name && histograms.has(base));
    });
    expect(unknown).toEqual([]);
  });

  it('filters each metric only by labels it has', async () => {
    const metrics = new Metrics();
    const labelsOf = (name: string): string[] | undefined => {
      const m = metrics.registry.getSingleMetric(name) ?? metrics.registry.getSingleMetric(name.replace(/_(bucket|sum|count)$/, ''));
      return (m as unknown as { labelNames?: string[] } | undefined)?.labelNames;
    };
    let checked = 0;
    for (const e of expressions()) {
      for (const sel of e.matchAll(/\b(mls_[A-Za-z0-9_]+)\{([^}]*)\}/g)) {
        const own = labelsOf(sel[1]!);
        if (!own) continue; // process metrics: their labels are prom-client's
        // instance and job come from Prometheus, le from histograms
        const allowed = new Set([...own, 'instance', 'job', 'le']);
        for (const l of sel[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)/g)) expect(allowed.has(l[1]!), `${sel[1]} has no label ${l[1]} (${e})`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('histogram quantiles aggregate by le', () => {
    for (const e of expressions().filter((x) => x.includes('histogram_quantile'))) {
      expect(e).toMatch(/_bucket\{/);
      expect(e).toMatch(/by \(le[,)]/);
    }
  });

  it('panels do not overlap on the grid', () => {
    const cells = new Set<string>();
    for (const p of panels) {
      const g = p.gridPos!;
      expect(g.x + g.w, p.title).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          const key = `${x},${y}`;
          expect(cells.has(key), `${p.title} overlaps at ${key}`).toBe(false);
          cells.add(key);
        }
      }
    }
  });
});
