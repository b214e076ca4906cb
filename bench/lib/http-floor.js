// The floor under the scale benchmark's CPU figure: a bare HTTP client sending logs
// requests at a given rate to the simulator, in a process of its own, with nothing of the
// daemon (no scheduler, no checkpoints, no journal, no sinks). It reads each answer as
// the daemon's first reader would: the whole body, then JSON. Prints one line of JSON:
// its CPU as a share of one core over the measured span, and the requests it made.
// The client is the daemon's own dispatcher (`mls`, from dist/: an undici Agent set up as
// the service client sets it up) or a bare undici Pool (`undici`, for comparison).
//
//   node bench/lib/http-floor.js <mls|undici> <simulator url> <token> <requests/s> <seconds> <file of model ids, one per line>
import { readFileSync } from 'node:fs';

const [client, url, token, rateArg, secondsArg, idsFile] = process.argv.slice(2);
const ids = readFileSync(idsFile, 'utf8').split('\n').filter(Boolean);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const WARMUP_MS = 3_000;
const GRID_MS = 100;
const origin = url.replace(/\/$/, '');
// The daemon's defaults: four keep-alive connections, one request at a time on each.
let pool;
if (client === 'mls') {
  const { createDispatcher } = await import('../../dist/net/dispatcher.js');
  pool = createDispatcher({ proxy: undefined, tls: {}, connections: 4, connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000 });
} else if (client === 'undici') {
  const { Pool } = await import('undici');
  pool = new Pool(origin, { connections: 4 });
} else throw new Error(`unknown client ${client}: mls or undici`);
const headers = { authorization: token, 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'model-log-shipper' };
let done = 0;
let failed;

function request(id) {
  const now = Date.now();
  const body = JSON.stringify({ model_id: id, time_from: new Date(now - 12_000).toISOString(), time_to: new Date(now - 2_000).toISOString() });
  const chunks = [];
  // Both pools take the same callbacks.
  pool.dispatch(
    { origin, path: '/rest/model/logs/get/', method: 'POST', headers, body },
    {
      onRequestStart() {},
      onResponseStart(_c, status) {
        if (status !== 200) failed ??= new Error(`the simulator answered ${status}`);
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        done++;
      },
      onResponseError(_c, err) {
        failed ??= err;
      },
    },
  );
}

let next = 0;
let owed = 0;
const timer = setInterval(() => {
  owed += (rate * GRID_MS) / 1000;
  for (; owed >= 1; owed--) request(ids[next++ % ids.length]);
}, GRID_MS);

await new Promise((r) => setTimeout(r, WARMUP_MS));
const cpu0 = process.cpuUsage();
const done0 = done;
const t0 = performance.now();
await new Promise((r) => setTimeout(r, seconds * 1000));
const cpu = process.cpuUsage(cpu0);
const elapsedS = (performance.now() - t0) / 1000;
clearInterval(timer);
await pool.close();
if (failed) throw failed;
const share = (us) => Math.round((us / 1e6 / elapsedS) * 1000) / 10;
console.log(JSON.stringify({ client, cpu_percent: share(cpu.user + cpu.system), user_percent: share(cpu.user), system_percent: share(cpu.system), requests_per_sec: Math.round(((done - done0) / elapsedS) * 10) / 10 }));
