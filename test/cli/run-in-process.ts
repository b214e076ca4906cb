//! Runs `mls` commands in-process against captured streams.
import { Command } from 'commander';
import { Writable } from 'node:stream';
import type { CommandIo } from '../../src/cli/common.js';

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** A stdout that takes a while to flush, and records whether anyone wrote past a full buffer. */
export class SlowStream extends Writable {
  text = '';
  overfilled = false;
  constructor() {
    super({ highWaterMark: 64 });
  }
  override write(chunk: unknown, ...rest: unknown[]): boolean {
    if (this.writableNeedDrain) this.overfilled = true;
    return (super.write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    setTimeout(cb, 1);
  }
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

/** Builds a program with `register`, runs `args`, and returns what the command printed. */
export async function runCli(
  register: (program: Command, io: CommandIo) => void,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { signal?: AbortSignal; stdout?: Writable } = {},
): Promise<RunResult> {
  const stdout = options.stdout ?? new Capture();
  const stderr = new Capture();
  let exitCode = 0;
  const io: CommandIo = {
    stdout,
    stderr,
    env,
    setExitCode: (code) => {
      exitCode = code;
    },
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const program = new Command('mls').exitOverride().configureOutput({ writeErr: (s) => stderr.write(s), writeOut: (s) => stdout.write(s) });
  register(program, io);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    exitCode = (err as { exitCode?: number }).exitCode ?? 1;
  }
  const text = (stdout as Writable & { text: string }).text;
  return { stdout: text, stderr: stderr.text, exitCode };
}
