// deploy/kubernetes: every manifest is valid against the Kubernetes API schemas (strictly:
// no field the API does not know), the kustomization lists every file, the objects refer to
// each other correctly (selectors, ports, volumes, names), the ConfigMap's config is valid
// for the config loader and agrees with the pod, and the resources follow the measured sizing.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/cli/config.js';
import { parseListen } from '../../src/config/index.js';
import { schemaErrors, unknownFields, type K8sObject } from './k8s-schema.js';
import { runThroughShebang } from './shebang-probe.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = path.join(root, 'deploy/kubernetes');
const tmp = mkdtempSync(path.join(tmpdir(), 'mls-k8s-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The documents of a YAML file, each checked for syntax errors. */
function documents(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'));
  for (const d of docs) expect(d.errors, file).toEqual([]);
  return docs.map((d) => d.toJS() as unknown);
}

interface Kustomization {
  apiVersion: string;
  kind: string;
  resources: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
}
const kustomization = documents('kustomization.yaml')[0] as Kustomization;
const objects = kustomization.resources.flatMap((f) => documents(f) as K8sObject[]);
const byKind = (kind: string): K8sObject[] => objects.filter((o) => o.kind === kind);
const one = (kind: string, name?: string): K8sObject => {
  const found = byKind(kind).filter((o) => name === undefined || o.metadata.name === name);
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0]!;
};

/** Manifests are read as plain data. */
type Any = Record<string, any>;
const sts = one('StatefulSet') as Any;
const pod = sts.spec.template.spec as Any;
const container = pod.containers[0] as Any;
const configMap = one('ConfigMap') as Any;
const mountOf = (volume: string): Any | undefined => (container.volumeMounts as Any[]).find((m) => m.name === volume);
const volumeOf = (name: string): Any | undefined => (pod.volumes as Any[]).find((v) => v.name === name);
/** The container port a probe or Service names (by name or number). */
const portOf = (ref: string | number): Any | undefined => (container.ports as Any[]).find((p) => p.name === ref || p.containerPort === ref);

/** Kubernetes quantities: memory in bytes, CPU in cores. */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G)?$/.exec(String(q));
  if (!m) throw new Error(`not a quantity: ${q}`);
  const unit = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

/** The ConfigMap's files written to a folder, the token file pointed at a temp file, and loaded by the config loader. */
async function configFromMap(): Promise<{ raw: Any; config: Awaited<ReturnType<typeof loadConfig>> }> {
  const folder = mkdtempSync(path.join(tmp, 'etc-mls-'));
  for (const [key, text] of Object.entries(configMap.data as Record<string, string>)) writeFileSync(path.join(folder, key), text);
  const raw = parse(configMap.data['config.yaml']) as Any;
  const tokenFile = path.join(folder, 'token');
  writeFileSync(tokenFile, 'k8s-token\n');
  const file = path.join(folder, 'config.yaml');
  writeFileSync(file, stringify({ ...raw, api: { ...raw.api, token_file: tokenFile } }));
  return { raw, config: await loadConfig(file, {}) };
}

describe('deploy/kubernetes', () => {
  it('the kustomization lists every manifest of the folder, each once, one object per file', () => {
    expect(kustomization).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' });
    const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml').sort();
    expect([...kustomization.resources].sort()).toEqual(files);
    expect(new Set(kustomization.resources).size).toBe(kustomization.resources.length);
    for (const f of files) expect(documents(f), f).toHaveLength(1);
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'PodDisruptionBudget', 'Secret', 'Service', 'Service', 'StatefulSet']);
  });

  it.each(kustomization.resources)('%s is valid against the Kubernetes API schema, with no unknown field', (file) => {
    const obj = documents(file)[0] as K8sObject;
    expect(schemaErrors(obj)).toEqual([]);
    expect(unknownFields(obj)).toEqual([]);
  });

  it('a broken manifest fails the check: a wrong type, a missing required field, an unknown field', () => {
    const broken = structuredClone(sts) as Any;
    broken.spec.template.spec.containers[0].ports[0].containerPort = '9464';
    delete broken.spec.template.spec.containers[0].name;
    broken.spec.template.spec.containers[0].readinessprobe = broken.spec.template.spec.containers[0].readinessProbe;
    broken.spec.template.spec.securityContext.runAsUsr = 10001;
    const errors = schemaErrors(broken as K8sObject);
    expect(errors).toContainEqual({ instancePath: '/spec/template/spec/containers/0/ports/0/containerPort', message: expect.stringContaining('integer') });
    expect(errors.some((e) => e.instancePath === '/spec/template/spec/containers/0' && e.message.includes('name'))).toBe(true);
    expect(unknownFields(broken as K8sObject)).toEqual(['/spec/template/spec/securityContext/runAsUsr', '/spec/template/spec/containers/0/readinessprobe']);
    // Labels and annotations are maps: any key is known.
    const labelled = structuredClone(sts) as Any;
    labelled.metadata.labels['example.com/team'] = 'logs';
    expect(unknownFields(labelled as K8sObject)).toEqual([]);
  });

  it('runs one replica behind the headless Service, with the state on a volume claim', () => {
    expect(sts.spec.replicas).toBe(1);
    const headless = byKind('Service').find((s) => (s as Any).spec.clusterIP === 'None') as Any;
    expect(headless).toBeDefined();
    expect(sts.spec.serviceName).toBe(headless.metadata.name);
    const claim = sts.spec.volumeClaimTemplates[0];
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(mountOf(claim.metadata.name)?.mountPath).toBe('/var/lib/mls');
    expect(quantity(claim.spec.resources.requests.storage)).toBeGreaterThanOrEqual(2 ** 30);
  });

  it('selectors of the StatefulSet, both Services and the budget match the pod labels', () => {
    const labels = sts.spec.template.metadata.labels as Record<string, string>;
    const matches = (selector: Record<string, string>) => Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(matches(sts.spec.selector.matchLabels)).toBe(true);
    const services = byKind('Service') as Any[];
    expect(services.map((s) => s.metadata.name).sort()).toEqual(['mls', 'mls-metrics']);
    for (const s of services) {
      expect(matches(s.spec.selector), s.metadata.name).toBe(true);
      for (const p of s.spec.ports) expect(portOf(p.targetPort), `${s.metadata.name} port ${p.name}`).toBeDefined();
    }
    const pdb = one('PodDisruptionBudget') as Any;
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.minAvailable).toBeUndefined();
    expect(matches(pdb.spec.selector.matchLabels)).toBe(true);
  });

  it('probes /healthz and /readyz on the container port that admin.listen serves, on every address of the pod', async () => {
    const { config } = await configFromMap();
    const listen = parseListen(config.admin!.listen)!;
    expect(listen.host).toBe('0.0.0.0');
    for (const [probe, urlPath] of [['startupProbe', '/healthz'], ['livenessProbe', '/healthz'], ['readinessProbe', '/readyz']] as const) {
      const get = container[probe].httpGet as Any;
      expect(get.path, probe).toBe(urlPath);
      expect(portOf(get.port)?.containerPort, probe).toBe(listen.port);
    }
    const metrics = one('Service', 'mls-metrics') as Any;
    expect(metrics.metadata.annotations['prometheus.io/port']).toBe(String(listen.port));
    expect(metrics.metadata.annotations['prometheus.io/path']).toBe('/metrics');
  });

  it('the ConfigMap holds a valid config whose files are where the pod mounts them', async () => {
    const { raw, config } = await configFromMap();
    expect(config.api.token).toBe('k8s-token');
    // The container reads the config from the ConfigMap's mount, and the token from the Secret's.
    const configMount = mountOf('config')!;
    expect(volumeOf('config')!.configMap.name).toBe(configMap.metadata.name);
    expect(container.args).toEqual(['run', '--config', `${configMount.mountPath}/config.yaml`]);
    expect(configMap.data).toHaveProperty('config.yaml');
    const secret = one('Secret') as Any;
    const token = volumeOf('token')!;
    expect(token.secret.secretName).toBe(secret.metadata.name);
    expect(path.dirname(raw.api.token_file)).toBe(mountOf('token')!.mountPath);
    expect(secret.stringData).toHaveProperty(path.basename(raw.api.token_file));
    // models_file is a key of the same ConfigMap, beside config.yaml.
    expect(configMap.data).toHaveProperty(raw.models_file);
    expect(config.models.length).toBeGreaterThan(1);
    // The state file is on the claim; the daemon's stop fits in the grace period.
    expect(config.state.path.startsWith(`${mountOf('state')!.mountPath}/`)).toBe(true);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.shutdown_timeout);
    // Every volume the container mounts exists.
    for (const m of container.volumeMounts as Any[]) {
      expect(volumeOf(m.name) ?? sts.spec.volumeClaimTemplates.find((c: Any) => c.metadata.name === m.name), m.name).toBeDefined();
    }
  });

  it('the Secret holds a placeholder, never a token, and the config never a token either', () => {
    const secret = one('Secret') as Any;
    expect(secret.stringData.token).toMatch(/^REPLACE-/);
    expect(secret.data).toBeUndefined();
    expect(configMap.data['config.yaml']).not.toMatch(/^\s*token:/m);
  });

  it('runs as the image user, non-root, on a read-only root with no capabilities and an emptyDir /tmp', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const user = /^USER (\d+):(\d+)$/m.exec(dockerfile)!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(user[1]), runAsGroup: Number(user[2]), fsGroup: Number(user[2]) });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(mountOf('tmp')?.mountPath).toBe('/tmp');
    expect(volumeOf('tmp')!.emptyDir).toBeDefined();
    expect(pod.automountServiceAccountToken).toBe(false);
    // The Secret's file is readable by the group the pod runs in, not by others.
    expect(volumeOf('token')!.secret.defaultMode).toBe(0o440);
  });

  it('starts what the image holds: its entrypoint (tini and the compiled mls), with the Dockerfile\'s port and volume', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ENTRYPOINT \["tini", "--", "mls"\]$/m);
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    expect(dockerfile).toContain('COPY --from=build /app/dist/ ./dist/');
    expect(container.command).toBeUndefined();
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${String(portOf('admin')!.containerPort)}$`, 'm'));
    expect(dockerfile).toMatch(/^VOLUME \["\/var\/lib\/mls"\]$/m);
    // The image is set through the kustomization, whose tag is this version.
    const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
    const image = kustomization.images!.find((i) => container.image.startsWith(`${i.name}:`));
    expect(image?.newTag).toBe(version);
  });

  it('requests and limits follow the figures of docs/performance.md, and the heap is capped below the limit', () => {
    const perf = readFileSync(path.join(root, 'docs/performance.md'), 'utf8');
    const mb = (row: string): number => Number(new RegExp(`^\\| ${row} \\| ([\\d.]+) MB \\|`, 'm').exec(perf)![1]) * 1e6;
    const idle = mb('idle RSS');
    const peak = mb('backlog peak RSS');
    const { requests, limits } = container.resources as { requests: Record<string, string>; limits: Record<string, string> };
    expect(quantity(requests.memory!)).toBeGreaterThanOrEqual(idle);
    expect(quantity(requests.memory!)).toBeLessThanOrEqual(quantity(limits.memory!));
    // Room above the measured peak: a quarter of it at least.
    expect(quantity(limits.memory!)).toBeGreaterThanOrEqual(peak * 1.25);
    // CPU: idle share of 1,000 models (2.16 % of a core) plus 20,000 entries/s at the measured CPU per entry.
    const idleCpu = Number(/^\| idle CPU \| ([\d.]+) % of one core \|/m.exec(perf)![1]) / 100;
    const perEntry = Number(/^\| daemon CPU per entry \| ([\d.]+) µs/m.exec(perf)![1]) * 1e-6;
    expect(quantity(requests.cpu!)).toBeGreaterThanOrEqual(idleCpu + 20_000 * perEntry);
    expect(quantity(requests.cpu!)).toBeLessThanOrEqual(quantity(limits.cpu!));
    // The comment says where the numbers come from.
    expect(readFileSync(path.join(dir, 'statefulset.yaml'), 'utf8')).toMatch(/Sized from the figures in docs\/performance\.md/);

    // The executable's own flags, with the old generation lowered below the limit through
    // NODE_OPTIONS: started as the pod starts it, node's heap limit is below the memory limit,
    // and without the variable it would be above it.
    const nodeOptions = (container.env as Array<{ name: string; value: string }>).find((e) => e.name === 'NODE_OPTIONS')?.value;
    expect(nodeOptions).toMatch(/--max-old-space-size=\d+/);
    expect(runThroughShebang(nodeOptions).heapLimitBytes).toBeLessThan(quantity(limits.memory!) * 0.75);
    expect(runThroughShebang(undefined).heapLimitBytes).toBeGreaterThan(quantity(limits.memory!));
  });
});
