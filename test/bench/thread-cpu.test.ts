// The throughput benchmark splits the daemon's CPU time by thread from /proc; this checks the
// split on a real child process whose main thread alone burns CPU.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

type ThreadCpu = { main: number; v8: number; pool: number; other: number; mainRunqWait: number | undefined };

describe('threadCpu', () => {
  it('counts a busy main thread as main, and reads its run-queue wait', async () => {
    // @ts-expect-error -- a plain JavaScript module of the benchmarks, without type declarations
    const { threadCpu } = (await import('../../bench/lib/util.js')) as { threadCpu: (pid: number) => ThreadCpu };
    // Burns 600 ms of its main thread's CPU time (not wall time: the machine may be busy with
    // other tests), then says so and waits to be killed.
    const burn = 'const used = () => { const u = process.threadCpuUsage ? process.threadCpuUsage() : process.cpuUsage(); return u.user + u.system; }; while (used() < 600_000); console.log("done"); setInterval(() => {}, 1000);';
    const child = spawn(process.execPath, ['-e', burn], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => String(d).includes('done') && resolve());
        child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
      });
      const t = threadCpu(child.pid!);
      expect(t.main).toBeGreaterThanOrEqual(0.4);
      // The helpers did next to nothing while the main thread spun.
      expect(t.v8 + t.pool + t.other).toBeLessThan(t.main / 2);
      if (existsSync(`/proc/${child.pid}/task/${child.pid}/schedstat`)) {
        expect(t.mainRunqWait).toBeTypeOf('number');
        expect(t.mainRunqWait).toBeLessThan(30);
      } else {
        expect(t.mainRunqWait).toBeUndefined();
      }
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
