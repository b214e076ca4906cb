//! Redaction: the secrets preset on lines model servers really print, user rules, and the
//! promise that lines without a match come back untouched.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileRedactions, REDACTED } from '../../src/processing/redact.js';
import { runs } from '../helpers/long.js';

const HF = 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567';
const SK = 'sk-Zx81kQ0vLm3NpR7tYu2wEe9sBb4cDd6f';
const SK_PROJ = 'sk-proj-Qw3eR5tY7uI9oP1aS2dF4gH6jK8lZ0xC-vB_nM';
const AKID = 'AKIAIOSFODNN7EXAMPLE';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.s1gn4tur3_x-Yz';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

const secrets = compileRedactions([], { secretsPreset: true });

const presetCases: Array<[string, string, string]> = [
  ['Authorization header', `GET /v1/models Authorization: Bearer ${JWT}`, `GET /v1/models Authorization: Bearer ${REDACTED}`],
  ['header dict repr', `headers={'authorization': 'Bearer abc'}`, `headers={'authorization': 'Bearer ${REDACTED}'}`],
  ['Basic authorization in JSON', '{"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}', `{"Authorization": "Basic ${REDACTED}"}`],
  ['bare bearer token', `retrying with bearer ${JWT} after 401`, `retrying with bearer ${REDACTED} after 401`],
  ['Hugging Face token in an env dump', `HF_TOKEN=${HF} TRANSFORMERS_CACHE=/cache`, `HF_TOKEN=${REDACTED} TRANSFORMERS_CACHE=/cache`],
  ['Hugging Face token in a URL', `https://user:${HF}@huggingface.co/meta-llama/x`, `https://user:${REDACTED}@huggingface.co/meta-llama/x`],
  ['OpenAI key', `openai.AuthenticationError: Incorrect API key provided: ${SK}.`, `openai.AuthenticationError: Incorrect API key provided: ${REDACTED}.`],
  ['OpenAI project key', `OPENAI_API_KEY="${SK_PROJ}"`, `OPENAI_API_KEY="${REDACTED}"`],
  ['AWS access key id', `botocore: using access key ${AKID} for s3://weights`, `botocore: using access key ${REDACTED} for s3://weights`],
  ['AWS temporary key id', 'creds ASIAY34FZKBOKMUTVV7A expire soon', `creds ${REDACTED} expire soon`],
  ['aws_secret_access_key value', `aws_secret_access_key = ${AWS_SECRET}`, `aws_secret_access_key = ${REDACTED}`],
  ['AWS secret in JSON, key uppercase', `{"AWS_SECRET_ACCESS_KEY": "${AWS_SECRET}"}`, `{"AWS_SECRET_ACCESS_KEY": "${REDACTED}"}`],
  ['several secrets in one line', `${AKID} ${HF} ${SK}`, `${REDACTED} ${REDACTED} ${REDACTED}`],
];

const presetLeavesAlone: Array<[string, string]> = [
  ['prose with "bearer"', 'the bearer of bad news: Bearer authentication is disabled'],
  ['words that contain the prefixes', 'task-scheduler started; ask-user-flow; the_hf_hub cache; risk-management'],
  ['short sk- and hf_', 'sk-learn 1.5 and hf_transfer enabled'],
  ['AKIA embedded in a longer id', 'XAKIAIOSFODNN7EXAMPLEX'],
  ['an already redacted line', `Authorization: Bearer ${REDACTED}`],
  ['ordinary inference log', 'INFO 03-02 10:15:00 metrics.py:341] Avg prompt throughput: 512.3 tokens/s, Running: 4 reqs'],
];

describe('secrets preset', () => {
  it.each(presetCases)('redacts a %s', (_name, line, expected) => {
    expect(secrets(line)).toBe(expected);
  });

  it.each(presetLeavesAlone)('leaves alone %s', (_name, line) => {
    expect(secrets(line)).toBe(line);
  });

  it('is off by default', () => {
    expect(compileRedactions([])(`HF_TOKEN=${HF}`)).toBe(`HF_TOKEN=${HF}`);
  });

  it('is idempotent', () => {
    for (const [, line] of presetCases) expect(secrets(secrets(line))).toBe(secrets(line));
  });
});

describe('user rules', () => {
  it('replaces every match with [REDACTED] by default', () => {
    const r = compileRedactions([{ pattern: String.raw`\b\d{3}-\d{2}-\d{4}\b` }]);
    expect(r('ssn 123-45-6789 and 987-65-4321')).toBe(`ssn ${REDACTED} and ${REDACTED}`);
  });

  it('expands $1 and named groups in the replacement', () => {
    const r = compileRedactions([
      { pattern: String.raw`(user=)[^ ]+`, replacement: '$1***' },
      { pattern: String.raw`(?<host>[a-z]+)\.internal:(?<port>\d+)`, replacement: '$<host>:$<port>' },
    ]);
    expect(r('user=alice@example.com from db.internal:5432')).toBe('user=*** from db:5432');
  });

  it('applies rules in order, after the preset', () => {
    const r = compileRedactions([{ pattern: String.raw`\[REDACTED\]`, replacement: '<secret>' }, { pattern: 'a+b', replacement: 'x' }], {
      secretsPreset: true,
    });
    expect(r(`key ${AKID} aab`)).toBe('key <secret> x');
  });

  it('refuses back-references, which RE2 cannot run, saying so', () => {
    expect(() => compileRedactions([{ pattern: 'zz' }, { pattern: String.raw`(["'])secret\1`, replacement: '$1***$1' }])).toThrow(
      /^redaction rule 2: pattern .* cannot be used: backreferences \(\\1, \\k<name>\) are not supported$/,
    );
  });

  it('works with the same group name in two rules', () => {
    const r = compileRedactions([
      { pattern: '(?<v>tok)en', replacement: '$<v>' },
      { pattern: '(?<v>pass)word', replacement: '$<v>' },
    ]);
    expect(r('token password')).toBe('tok pass');
  });

  it.each([
    ['(unclosed', /redaction rule 2: pattern "\(unclosed" cannot be used: missing closing \)/],
    ['a*', /redaction rule 2: pattern "a\*" cannot be used: it matches the empty string/],
  ])('rejects the pattern %s, naming it', (pattern, message) => {
    expect(() => compileRedactions([{ pattern: 'ok' }, { pattern }])).toThrow(message);
  });
});

describe('lines without a match', () => {
  const rules = compileRedactions([{ pattern: 'password=\\S+', replacement: 'password=***' }], { secretsPreset: true });

  it('come back as the same string', () => {
    const line = 'INFO:     127.0.0.1:40000 - "GET /health HTTP/1.1" 200 OK';
    expect(rules(line)).toBe(line);
  });

  it('no rules and no preset is the identity', () => {
    const none = compileRedactions([]);
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => none(s) === s));
  });

  it('a line with no match is never changed, so never longer', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), (s) => {
        fc.pre(!/password=|bearer|authorization|hf_|sk-|AKIA|ASIA|aws_secret/i.test(s));
        const out = rules(s);
        return out === s && out.length <= s.length;
      }),
      { numRuns: runs(2000) },
    );
  });

  it('a redacted line is never longer than the line plus one replacement per match', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('word ', HF, ' ', SK, AKID, '\n'), { maxLength: 20 }), (parts) => {
        const s = parts.join('');
        const matches = parts.filter((p) => p === HF || p === SK || p === AKID).length;
        expect(secrets(s).length).toBeLessThanOrEqual(s.length + matches * REDACTED.length);
        if (matches === 0) expect(secrets(s)).toBe(s);
      }),
    );
  });
});
