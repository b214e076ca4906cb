// A minimal client of the V8 inspector of a child started with `--inspect=127.0.0.1:0`:
// reads the daemon's own memory figures and takes CPU profiles of a chosen span, so the
// profiler is off while CPU time is being measured.

/** Waits for the "Debugger listening on ws://…" line in the child's stderr. */
export async function inspectorUrl(stderr, timeoutMs = 10_000) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const m = /Debugger listening on (ws:\/\/\S+)/.exec(stderr());
    if (m) return m[1];
    if (performance.now() > until) throw new Error('the daemon did not print its inspector address');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Connects to the inspector at `url`. */
export async function connectInspector(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
  });
  let next = 0;
  const waiting = new Map();
  ws.addEventListener('message', (ev) => {
    const m = JSON.parse(ev.data);
    const w = m.id !== undefined ? waiting.get(m.id) : undefined;
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(`${m.error.message}`));
    else w.resolve(m.result);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    send,
    /** process.memoryUsage() of the inspected process, in bytes. */
    async memoryUsage() {
      const r = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
      return JSON.parse(r.result.value);
    },
    /** Runs a full garbage collection in the inspected process. */
    collectGarbage: () => send('HeapProfiler.collectGarbage'),
    /** A CPU profile (.cpuprofile object) of the next `ms` milliseconds. */
    async profile(ms, samplingIntervalUs = 1000) {
      await send('Profiler.enable');
      await send('Profiler.setSamplingInterval', { interval: samplingIntervalUs });
      await send('Profiler.start');
      await new Promise((r) => setTimeout(r, ms));
      const { profile } = await send('Profiler.stop');
      await send('Profiler.disable');
      return profile;
    },
    close: () => ws.close(),
  };
}
