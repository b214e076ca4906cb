// The documents stay true to the code: docs/operating.md documents every metric, names files
// and commands that exist, and points to the Kubernetes manifests (checked in
// kubernetes.test.ts) rather than copying them; docs/commands.md names every command, exit
// code and error code; the README stays short, for users, and its first config is valid;
// every link between the documents leads to a file and a heading that exist.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { loadConfig } from '../../src/cli/config.js';
import { parseYaml } from '../../src/config/index.js';
import { ExitCode } from '../../src/errors.js';
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

  it('gives alert rules that are YAML and query only metrics the daemon exports, by labels they have', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
    const rules = blocks('yaml')
      .filter((b) => b.startsWith('groups:'))
      .flatMap((b) => (parseYaml(b) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules));
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining(['MlsModelDown', 'ModelNewExceptionType', 'ModelCudaOutOfMemory']));
    for (const { alert, expr } of rules) {
      const names = expr.match(/\bmls_\w+/g) ?? [];
      expect(names.length, alert).toBeGreaterThan(0);
      for (const name of names) expect(exported.has(name), `${alert}: ${name}`).toBe(true);
      for (const sel of expr.matchAll(/\b(mls_\w+)\{([^}]*)\}/g)) {
        const own = (metrics.registry.getSingleMetric(sel[1]!) as unknown as { labelNames: string[] }).labelNames;
        for (const l of sel[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)/g)) expect(own, `${alert}: ${sel[1]} has no label ${l[1]}`).toContain(l[1]);
      }
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

const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/** The Markdown files users and contributors read. */
const documents = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The anchors of a Markdown file's headings, as GitHub makes them. */
function anchors(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const body = text.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...body.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slugger.slug(m[1]!)));
}

describe('the documents', () => {
  it.each(documents)('%s: every relative link leads to a file, and an anchor to a heading of it', (doc) => {
    const text = read(doc).replace(/^```[\s\S]*?^```/gm, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      const resolved = file === '' ? doc : path.join(path.dirname(doc), file);
      let linked = '';
      expect(() => (linked = readFileSync(path.join(root, resolved), 'utf8')), `${doc} links to ${target}`).not.toThrow();
      if (anchor !== undefined && resolved.endsWith('.md')) expect([...anchors(linked)], `${doc} links to ${target}`).toContain(anchor);
    }
  });

  it('the README is short, for users: the two commands, a first config that is valid, where to read next', async () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    // The two commands (.ci/run runs the second on a fresh machine).
    expect(readme).toContain('npm ci && npx mls demo --duration 30s');
    expect(readme).toMatch(/^npm test\b/m);
    for (const doc of ['docs/configuration.md', 'docs/commands.md', 'docs/design.md', 'docs/install.md', 'docs/operating.md', 'CONTRIBUTING.md', 'LICENSE']) expect(readme, doc).toContain(`(${doc})`);
    const first = /```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
    const dir = mkdtempSync(path.join(tmpdir(), 'mls-readme-'));
    try {
      writeFileSync(path.join(dir, 'mls.yaml'), first);
      const config = await loadConfig(path.join(dir, 'mls.yaml'), {}, { noEnv: true });
      expect(config.models.map((m) => m.id)).toEqual(['my-model']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('docs/commands.md names every command, exit code and error code a user can meet', () => {
    const commands = read('docs/commands.md');
    const leaves: string[] = [];
    const walk = (cmd: ReturnType<typeof buildProgram>, at: string[]) => {
      for (const sub of cmd.commands) sub.commands.length > 0 ? walk(sub, [...at, sub.name()]) : leaves.push([...at, sub.name()].join(' '));
    };
    walk(buildProgram(), []);
    expect(leaves.length).toBeGreaterThan(10);
    const table = commands.split('\n').filter((l) => l.startsWith('| `mls '));
    for (const c of leaves) {
      const [head, last] = [c.split(' ').slice(0, -1).join(' '), c.split(' ').at(-1)!];
      // `mls dlq list|replay|purge` names three commands in one row
      expect(table.some((l) => l.startsWith(`| \`mls ${c} `) || l.startsWith(`| \`mls ${c}\``) || (head !== '' && new RegExp(`^\\| \`mls ${head} [\\w|\\\\]*\\b${last}\\b`).test(l))), `mls ${c}`).toBe(true);
    }
    for (const code of new Set(Object.values(ExitCode))) expect(commands, `exit code ${code}`).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
    // Codes only a bug can raise are left out.
    const internal = new Set(['MLS_ERR_STATE_CLOSED', 'MLS_ERR_STATE_NO_CHECKPOINT']);
    const src = path.join(root, 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const codes = new Set(files.flatMap((f) => [...readFileSync(path.join(src, f), 'utf8').matchAll(/'(MLS_ERR_[A-Z_]+)'/g)].map((m) => m[1]!)));
    for (const code of codes) if (!internal.has(code)) expect(commands, code).toContain(`| \`${code}\``);
  });
});
