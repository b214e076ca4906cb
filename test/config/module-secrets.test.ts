//! A module sink's options are free-form, so the schema cannot mark its secrets: string options
//! under keys that name a secret, and `${VAR}`s whose names do, are scrubbed from every output
//! like the marked fields, while other options stay readable.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/cli/config.js';
import { scrubSecrets } from '../../src/telemetry/secrets.js';

describe("a module sink's secrets", () => {
  it('are scrubbed when named like one, in its options or in the variable they come from', () => {
    const env = { ACME_INGEST_CREDENTIAL: 'from-env-Cr3d-8842', PLAIN_SETTING: 'region-eu-west-77' };
    parseConfig(
      {
        api: { base_url: 'https://api.example.com', token: 'test-token-0000' },
        models: [{ id: 'model-a' }],
        sinks: [
          {
            name: 'acme',
            type: 'module',
            path: './acme-sink.js',
            options: {
              api_key: 'mod-Key-9931aa7',
              auth: { client_secret: 'nested-Secret-77b', Authorization: 'Bearer hdr-Secret-1234' },
              tokens: ['list-Tok-55a1c'],
              credential: '${ACME_INGEST_CREDENTIAL}',
              region: '${PLAIN_SETTING}',
              partition_key: 'model_id_field',
              password: 'short',
            },
          },
        ],
      },
      { env },
    );
    const text = 'mod-Key-9931aa7 nested-Secret-77b Bearer hdr-Secret-1234 list-Tok-55a1c from-env-Cr3d-8842 region-eu-west-77 model_id_field short';
    const scrubbed = scrubSecrets(text);
    for (const secret of ['mod-Key-9931aa7', 'nested-Secret-77b', 'hdr-Secret-1234', 'from-env-Cr3d-8842']) expect(scrubbed).not.toContain(secret);
    // not named like a secret (a list under `tokens` is its key's, but `tokens` is no secret's name), or too short to scrub safely
    for (const kept of ['list-Tok-55a1c', 'region-eu-west-77', 'model_id_field', 'short']) expect(scrubbed).toContain(kept);
  });
});
