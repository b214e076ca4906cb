// Starts the simulator in a child process (see ./sim-child.js) and talks to it over IPC.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./sim-child.js', import.meta.url));

/**
 * @param {import('../../dist/simulator/index.js').SimulatorOptions} options
 * @param {{ late?: { ratePerSec: number, maxDelayMs: number }, heapMb?: number }} [extra]
 */
export async function startSimChild(options, extra = {}) {
  const child = fork(CHILD, [], {
    execArgv: extra.heapMb ? [`--max-old-space-size=${extra.heapMb}`] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let next = 0;
  const waiting = new Map();
  child.on('message', (m) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(`simulator child: ${m.error}`));
    else w.resolve(m.result);
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`simulator child exited (${code})`));
    waiting.clear();
  });
  const call = (cmd, args = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      child.send({ id, cmd, ...args });
    });
  const info = await call('start', { options, late: extra.late });
  let closed;
  return {
    ...info,
    child,
    stats: () => call('stats'),
    resetStats: () => call('resetStats'),
    stopProducing: () => call('stopProducing'),
    count: () => call('count'),
    writeTruth: (path) => call('writeTruth', { path }),
    close() {
      closed ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          await Promise.race([call('close').catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        }
        await exited;
      })();
      return closed;
    },
  };
}
