//! The configuration reference (docs/configuration.md), generated from the JSON Schema of the
//! config file: every key with its type, default and description, one section per top-level
//! key and one per sink type, each with a short example. The schema is the one source of
//! truth, so the page cannot drift from what the loader accepts.

/** A node of the JSON Schema, as `z.toJSONSchema` writes it. */
interface Node {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  pattern?: string;
  format?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  properties?: Record<string, Node>;
  required?: string[];
  additionalProperties?: Node | boolean;
  items?: Node;
  anyOf?: Node[];
  oneOf?: Node[];
}

/** One row of a table: the key's path, its type, its default, its description. */
type Row = [path: string, type: string, dflt: string, description: string];

const DURATION = '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$';
const code = (v: unknown): string => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** How a value of `n` is written, in a few words. */
function typeOf(n: Node): string {
  if (n.const !== undefined) return code(n.const);
  if (n.enum) return n.enum.map(code).join(' \\| ');
  const alternatives = n.anyOf ?? n.oneOf;
  if (alternatives) {
    if (alternatives.some((a) => a.pattern?.startsWith('^\\d+(\\.\\d+)?\\s*')) && alternatives.some((a) => a.type === 'integer')) return 'size';
    return alternatives.map(typeOf).join(' or ');
  }
  if (n.type === 'string') {
    if (n.pattern === DURATION) return 'duration';
    if (n.format === 'uri') return 'URL';
    return 'string';
  }
  if (n.type === 'integer' || n.type === 'number') {
    const min = n.minimum ?? n.exclusiveMinimum;
    return `${n.type === 'integer' ? 'integer' : 'number'}${min === undefined ? '' : ` ${n.exclusiveMinimum !== undefined ? '>' : '≥'} ${min}`}`;
  }
  if (n.type === 'array') return `list of ${n.items ? typeOf(n.items) : 'values'}`;
  if (n.type === 'object') return n.properties ? 'mapping (keys below)' : 'mapping of names to values';
  return Array.isArray(n.type) ? n.type.join(' or ') : (n.type ?? 'any');
}

function defaultOf(n: Node, required: boolean): string {
  if (required) return 'required';
  if (n.default === undefined || (typeof n.default === 'object' && n.default !== null && Object.keys(n.default).length === 0)) return '';
  return code(n.default);
}

/** The rows of `n` at `path` and of every key below it. */
function rows(n: Node, path: string, required: boolean): Row[] {
  const out: Row[] = [[`\`${path}\``, typeOf(n), defaultOf(n, required), cell(n.description ?? '')]];
  const objects = [n, ...(n.anyOf ?? []), ...(n.oneOf ?? [])].filter((x) => x.properties);
  for (const o of objects) out.push(...keyRows(o, path));
  if (n.items?.properties) out.push(...keyRows(n.items, `${path}[]`));
  return out;
}

function keyRows(o: Node, path: string): Row[] {
  return Object.entries(o.properties ?? {}).flatMap(([k, v]) => rows(v, `${path}.${k}`, o.required?.includes(k) === true));
}

function table(all: Row[]): string {
  return ['| key | type | default | description |', '| --- | --- | --- | --- |', ...all.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** Whether every key of `sub` is in `of` with the same schema. */
function keysWithin(sub: Node, of: Node): boolean {
  return Object.entries(sub.properties ?? {}).every(([k, v]) => JSON.stringify(of.properties?.[k]) === JSON.stringify(v));
}

/**
 * The examples of a config file written for the purpose: the block of each top-level key
 * (to the next line that starts at the margin), and of each sink by its type (`sinks.<type>`).
 */
export function exampleBlocks(text: string): Map<string, string> {
  const blocks = new Map<string, string>();
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const key = /^([A-Za-z_]+):/.exec(line)?.[1];
    if (key === undefined) return;
    let end = i + 1;
    while (end < lines.length && !/^[A-Za-z_#]/.test(lines[end]!)) end++;
    const block = lines.slice(i, end).join('\n').trimEnd();
    blocks.set(key, block);
    if (key !== 'sinks') return;
    for (const item of block.split(/\n(?=  - )/).slice(1)) {
      const type = /^\s+type: (\w+)/m.exec(item)?.[1];
      if (type !== undefined) blocks.set(`sinks.${type}`, `sinks:\n${item}`);
    }
  });
  return blocks;
}

/** Renders docs/configuration.md from the config's JSON Schema and the examples. */
export function renderReference(schema: Node, examples: ReadonlyMap<string, string>, intro: string): string {
  const top = schema.properties ?? {};
  const example = (key: string) => (examples.has(key) ? `\n\n\`\`\`yaml\n${examples.get(key)}\n\`\`\`` : '');
  const sections: string[] = [];
  const sinkTypes = top.sinks?.items?.oneOf ?? top.sinks?.items?.anyOf ?? [];
  for (const [key, node] of Object.entries(top)) {
    const required = schema.required?.includes(key) === true;
    let body: string;
    if (key === 'sinks') {
      // The keys every type takes alike once; then each type's own.
      const [first] = sinkTypes;
      const common = Object.keys(first?.properties ?? {}).filter((k) => k !== 'type' && sinkTypes.every((t) => JSON.stringify(t.properties?.[k]) === JSON.stringify(first!.properties![k])));
      const commonRows = common.flatMap((k) => rows(first!.properties![k]!, `sinks[].${k}`, first!.required?.includes(k) === true));
      body = `${cell(node.description ?? '')}\n\nKeys of every sink type:\n\n${table(commonRows)}`;
      for (const t of sinkTypes) {
        const type = String(t.properties?.type?.const);
        const own = Object.entries(t.properties ?? {}).filter(([k]) => !common.includes(k));
        body += `\n\n### Sink type \`${type}\`\n\n${cell(t.properties?.type?.description ?? '')}\n\n${table(own.flatMap(([k, v]) => rows(v, `sinks[].${k}`, t.required?.includes(k) === true)))}${example(`sinks.${type}`)}`;
      }
    } else if (node.type === 'object' && top.models?.items && node.properties && keysWithin(node, top.models.items)) {
      body = `${cell(node.description ?? '')} Its keys are those of [\`models[]\`](#models) but \`id\`.`;
    } else {
      body = table(rows(node, key, required));
    }
    sections.push(`## ${key}\n\n${body}${key === 'sinks' ? '' : example(key)}`);
  }
  const contents = Object.keys(top)
    .map((k) => `[${k}](#${k})`)
    .join(' · ');
  return `${intro.trimEnd()}\n\n${contents}\n\n${sections.join('\n\n')}\n`;
}

/** The head of docs/configuration.md. */
export const REFERENCE_INTRO = `# Configuration reference

<!-- Generated from the config schema and config/examples/reference.yaml by src/config/reference.ts; do not edit.
     Regenerate: UPDATE_REFERENCE=1 npx vitest run test/config/reference.test.ts -->

The config file is YAML 1.2 (\`yes\` and \`on\` are text, anchors and merge keys work, one document
per file). Any string value may take \`\${VAR}\` or \`\${VAR:-default}\` from the environment (\`$\${\`
is a literal \`\${\`). Unknown keys are errors, and every problem is reported at once with its
path: check a file with \`mls validate --config FILE\` (add \`--no-env\` in CI, \`--check-service\` to
ask the service about each model). Relative paths are resolved against the config file's folder.
\`mls init\` writes a starter config; editors complete and check the file with the JSON Schema
\`config/mls.schema.json\` (first line: \`# yaml-language-server: $schema=<path>/mls.schema.json\`).

Durations are written \`500ms\`, \`10s\`, \`5m\`, \`1h\`, \`1d\` or combined (\`1h30m\`); sizes as bytes or
\`512KiB\`, \`64MiB\`, \`1GiB\`. A key left out takes its default; \`required\` marks the keys that have none.
Each section ends with an example, from \`config/examples/reference.yaml\`.`;
