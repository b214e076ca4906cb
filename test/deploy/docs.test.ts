// docs/operating.md stays true to the code: every metric is documented, the files and
// commands it names exist, and it points to the Kubernetes manifests (checked in
// kubernetes.test.ts) rather than copying them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseYaml } from '../../src/config/index.js';
import { Metrics } from '../../src/telemetry/metrics.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(path.join(root, 'docs/operating.md'), 'utf8');

/** The fenced code blocks of a language. */
const blocks = (lang: string): string[] => [...doc.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1]!);

describe('docs/operating.md', () => {
  it('documents every metric the daemon exports, with its labels', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const json = await metrics.registry.getMetricsAsJSON();
    expect(json.length).toBeGreaterThan(20);
    for (const m of json) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${m.name}\` |`));
      expect(row, m.name).toBeDefined();
      const labels = (metrics.registry.getSingleMetric(m.name) as unknown as { labelNames: string[] }).labelNames;
      for (const l of labels) expect(row, `${m.name} label ${l}`).toContain(`\`${l}\``);
      // and only those: a label the table names but the metric lacks would break queries
      const cell = row!.split('|')[3]!;
      expect([...cell.matchAll(/`(\w+)`/g)].map((x) => x[1]).sort(), `${m.name} labels`).toEqual([...labels].sort());
    }
  });

  it('points to the Kubernetes manifests in deploy/kubernetes instead of inlining them', () => {
    expect(blocks('yaml').some((b) => /^kind: /m.test(b))).toBe(false);
    const kustomization = parseYaml(readFileSync(path.join(root, 'deploy/kubernetes/kustomization.yaml'), 'utf8')) as { resources: string[] };
    for (const file of ['kustomization.yaml', ...kustomization.resources]) expect(doc, file).toContain(`\`${file}\``);
    expect(doc).toContain('deploy/kubernetes/');
  });

  it('names the commands and files that exist', () => {
    for (const file of ['docker-compose.yml', 'Dockerfile', 'config/mls.service', 'config/grafana-dashboard.json', 'config/compose/mls.yaml', 'config/compose/otel-collector.yaml', 'config/compose/mls.env.example']) {
      expect(doc).toContain(file);
      expect(() => readFileSync(path.join(root, file))).not.toThrow();
    }
    for (const cmd of ['mls dlq list', 'mls dlq replay', 'mls dlq purge', 'mls validate', 'mls status', 'mls state check']) expect(doc).toContain(cmd);
  });
});
