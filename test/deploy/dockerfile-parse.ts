//! The project's Dockerfile read as Docker reads it: instructions (comments dropped,
//! continuations joined), stages with the global ARGs substituted, options of COPY and RUN.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root. */
export const root = fileURLToPath(new URL('../../', import.meta.url));
const dockerfileText = readFileSync(path.join(root, 'Dockerfile'), 'utf8');

/** One instruction of a Dockerfile. */
export interface Instruction {
  op: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
  line: number;
}
/** One stage: its base image, its name (`AS`), its instructions. */
export interface Stage {
  image: string;
  name: string | undefined;
  steps: Instruction[];
}

/** Splits a Dockerfile into instructions: comments dropped, `\` continuations joined. */
export function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const start = i + 1;
    while (line.endsWith('\\')) {
      line = line.slice(0, -1).trimEnd();
      let next = lines[++i];
      while (next !== undefined && next.trim().startsWith('#')) next = lines[++i];
      if (next === undefined) break;
      line += ` ${next.trim()}`;
    }
    const m = /^(\S+)\s*(.*)$/.exec(line)!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!, line: start });
  }
  return out;
}

/** Groups instructions into stages, substituting the global ARGs in FROM. */
export function stages(all: Instruction[]): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const out: Stage[] = [];
  for (const ins of all) {
    if (ins.op === 'ARG' && out.length === 0) {
      const [k, v] = ins.args.split('=');
      args[k!] = v ?? '';
    } else if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
      const image = m[1]!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => args[(a ?? b)!] ?? '');
      out.push({ image, name: m[2], steps: [] });
    } else if (out.length > 0) {
      out.at(-1)!.steps.push(ins);
    }
  }
  return { args, stages: out };
}

/** The project's Dockerfile: its global ARGs and its stages. */
export const parsed = stages(instructions(dockerfileText));
/** The build stage and the runtime stage (the last) of the project's Dockerfile. */
export const build = parsed.stages.find((s) => s.name === 'build')!;
export const runtime = parsed.stages.at(-1)!;
/** The instructions `op` of a stage. */
export const stepsOf = (stage: Stage, op: string): Instruction[] => stage.steps.filter((s) => s.op === op);
/** An exec-form argument list (`["a", "b"]`) as Docker reads it. */
export const json = (args: string): unknown => JSON.parse(args);

/** `--flag=value` options in front of a COPY or RUN, and the rest. */
export function flags(args: string): { flags: Record<string, string>; rest: string } {
  const out: Record<string, string> = {};
  let rest = args;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
    if (!m) break;
    out[m[1]!] = m[2] ?? '';
    rest = rest.slice(m[0].length);
  }
  return { flags: out, rest };
}
