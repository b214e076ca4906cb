// docs/operating.md stays true to the code: every metric is documented, and the
// Kubernetes manifest is well-formed, single-replica, and carries a valid config.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { parseYaml } from '../../src/config/index.js';
import { parseConfig } from '../../src/cli/config.js';
import { Metrics } from '../../src/telemetry/metrics.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(path.join(root, 'docs/operating.md'), 'utf8');
const tmp = mkdtempSync(path.join(tmpdir(), 'mls-docs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The fenced code blocks of a language. */
const blocks = (lang: string): string[] => [...doc.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1]!);

interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

function manifest(): K8sObject[] {
  const block = blocks('yaml').find((b) => b.includes('kind: StatefulSet'));
  expect(block).toBeDefined();
  const docs = parseAllDocuments(block!);
  for (const d of docs) expect(d.errors).toEqual([]);
  return docs.map((d) => d.toJS() as K8sObject);
}

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
    }
  });

  it('the Kubernetes manifest runs one replica with a volume claim, probes and the token as a file', async () => {
    const objects = manifest();
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Secret', 'Service', 'StatefulSet']);
    const sts = objects.find((o) => o.kind === 'StatefulSet')!.spec as {
      replicas: number;
      serviceName: string;
      volumeClaimTemplates: { metadata: { name: string } }[];
      template: { spec: { terminationGracePeriodSeconds: number; securityContext: { runAsUser: number; fsGroup: number }; containers: Record<string, any>[]; volumes: Record<string, any>[] } };
    };
    expect(sts.replicas).toBe(1);
    expect(sts.serviceName).toBe(objects.find((o) => o.kind === 'Service')!.metadata.name);
    const pod = sts.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(30);
    expect(pod.securityContext).toMatchObject({ runAsUser: 10001, fsGroup: 10001 });
    const c = pod.containers[0]!;
    expect(c.args).toEqual(['run', '--config', '/etc/mls/config.yaml']);
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    const mounts = new Map<string, string>(c.volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]));
    expect(mounts.get(sts.volumeClaimTemplates[0]!.metadata.name)).toBe('/var/lib/mls');
    expect(mounts.get('config')).toBe('/etc/mls');
    const secretVolume = pod.volumes.find((v) => v.secret)!;
    expect(secretVolume.secret.secretName).toBe(objects.find((o) => o.kind === 'Secret')!.metadata.name);

    // The ConfigMap's config is valid, with the token read from the mounted Secret.
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    const raw = parseYaml(configMap.data!['config.yaml']!) as { api: { token_file: string }; state: { path: string }; admin: { listen: string } };
    expect(path.dirname(raw.api.token_file)).toBe(mounts.get(secretVolume.name));
    expect(raw.state.path.startsWith('/var/lib/mls/')).toBe(true);
    const tokenFile = path.join(tmp, 'token');
    writeFileSync(tokenFile, 'k8s-token\n');
    const config = parseConfig({ ...raw, api: { ...raw.api, token_file: tokenFile } }, { env: {} });
    expect(config.api.token).toBe('k8s-token');
    expect(config.admin?.listen).toBe(`0.0.0.0:${c.ports[0].containerPort}`);
  });

  it('names the commands and files that exist', () => {
    for (const file of ['docker-compose.yml', 'Dockerfile', 'config/mls.service', 'config/grafana-dashboard.json', 'config/compose/mls.yaml', 'config/compose/otel-collector.yaml', 'config/compose/mls.env.example']) {
      expect(doc).toContain(file);
      expect(() => readFileSync(path.join(root, file))).not.toThrow();
    }
    for (const cmd of ['mls dlq list', 'mls dlq replay', 'mls dlq purge', 'mls validate', 'mls status', 'mls state check']) expect(doc).toContain(cmd);
  });
});
