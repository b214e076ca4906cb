import { afterEach, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/settings.js';
import { sendJson, startServer, TOKEN, type TestServer } from '../api/helpers.js';
import { runCli } from './run-in-process.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(status = 200, body: unknown = { status: 'success', details: 'Model settings updated.' }): Promise<TestServer> {
  server = await startServer((_req, res) => sendJson(res, status, body));
  return server;
}

function env(s: TestServer): NodeJS.ProcessEnv {
  return { MLS_API_URL: `${s.url}/`, MLS_API_TOKEN: TOKEN };
}

describe('mls settings update', () => {
  it('sends only the settings given and prints the service confirmation', async () => {
    const s = await serve();
    const r = await runCli(register, ['settings', 'update', '--model', 'm-1', '--min-replica', '1', '--max-replica', '3', '--shared', '--no-io-tracking'], env(s));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('Model settings updated.\n');
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.url).toBe('/rest/model/settings/update/');
    expect(s.requests[0]!.headers.authorization).toBe(TOKEN);
    expect(JSON.parse(s.requests[0]!.body)).toEqual({ model_id: 'm-1', data: { min_replica: 1, max_replica: 3, is_dedicated: false, is_input_output_enabled: false } });
  });

  it('maps every flag to its field', async () => {
    const s = await serve();
    const r = await runCli(
      register,
      ['settings', 'update', '--model', 'm', '--scale-down-delay', '5m', '--inference-time', '90', '--dedicated', '--machine-type', 'gpu-a10', '--container-concurrency', '0', '--io-tracking'],
      env(s),
    );
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(s.requests[0]!.body).data).toEqual({
      scale_down_delay: 300,
      inference_time: 90,
      is_dedicated: true,
      machine_type: 'gpu-a10',
      container_concurrency: 0,
      is_input_output_enabled: true,
    });
  });

  it.each([
    [[], /nothing to update/],
    [['--min-replica', '1.5'], /--min-replica: expected a non-negative integer/],
    [['--max-replica', 'three'], /--max-replica: expected a non-negative integer/],
    [['--min-replica', '-1'], /negative/],
    [['--container-concurrency', '99999999999'], /too large/],
    [['--min-replica', '4', '--max-replica', '2'], /--min-replica \(4\) must not exceed --max-replica \(2\)/],
    [['--dedicated', '--shared'], /exclude each other/],
    [['--scale-down-delay', '1.5s'], /whole seconds/],
    [['--machine-type', ' '], /--machine-type/],
    [['--min-replica', '1', '--token', TOKEN], /shows in `ps`; use MLS_API_TOKEN or --token-file/],
  ])('refuses %j with exit 2 before any request', async (flags, message) => {
    const s = await serve();
    const r = await runCli(register, ['settings', 'update', '--model', 'm', ...flags], env(s));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain(TOKEN);
    expect(s.requests).toHaveLength(0);
  });

  it('prints the request body with --dry-run and sends nothing', async () => {
    const s = await serve();
    const r = await runCli(register, ['settings', 'update', '--model', 'm', '--max-replica', '2', '--dry-run'], {});
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ model_id: 'm', data: { max_replica: 2 } });
    expect(r.stdout).not.toContain(TOKEN);
    expect(s.requests).toHaveLength(0);
  });

  it('exits 3 when the token is refused', async () => {
    const s = await serve(401, { status: 'error', details: 'Unauthorized' });
    const r = await runCli(register, ['settings', 'update', '--model', 'm', '--min-replica', '0'], env(s));
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/refused the API token/);
    expect(r.stderr).not.toContain(TOKEN);
  });

  it('exits 4 with the service details when the request is rejected', async () => {
    const s = await serve(400, { status: 'error', details: 'max_replica exceeds the workspace quota' });
    const r = await runCli(register, ['settings', 'update', '--model', 'm', '--max-replica', '50'], env(s));
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('max_replica exceeds the workspace quota');
  });
});
