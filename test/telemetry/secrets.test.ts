// A secret comes back in more forms than the one it was sent in: a service or receiver that
// echoes a header may change its case, base64 it (alone or inside `user:secret`), or
// percent-encode it. Every form is cut out; ordinary text is left alone.
import { describe, expect, it } from 'vitest';
import { registerSecret, scrubSecrets, scrubWireText } from '../../src/telemetry/secrets.js';
import { echoedForms, formsIn } from '../helpers/secret-forms.js';

const SECRET = 'tok-Forms+Check/7Hq2Zk9Wd';

describe('secret scrubbing', () => {
  it('cuts out every form of a secret, wherever it is in the text', () => {
    registerSecret(SECRET);
    for (const { name, form } of echoedForms(SECRET)) {
      const text = `details: header echoed as <${form}> (${name})`;
      const out = scrubSecrets(text);
      expect(formsIn(out, SECRET), `${name}: ${out}`).toEqual([]);
      expect(out, name).toContain('[REDACTED]');
      expect(out, name).toContain(`(${name})`);
    }
  });

  it('leaves text without the secret as it is, and ignores values too short to be secrets', () => {
    for (const s of [SECRET, 'abc', '']) registerSecret(s);
    const text = 'sinks[0].headers.Authorization: is empty; dG9rLUZvcm1z is a base64 word, abc and ABC are words';
    expect(scrubSecrets(text)).toBe(text);
  });

  it('cuts a secret that contains another secret out whole', () => {
    registerSecret('inner-secret');
    registerSecret('outer-inner-secret-x');
    expect(scrubSecrets('a OUTER-INNER-SECRET-X b inner-secret c')).toBe('a [REDACTED] b [REDACTED] c');
  });

  it('in text from the wire, also cuts out the value after an Authorization label', () => {
    registerSecret(SECRET);
    const wire = 'echo: authorization=opaque-value-1, "Authorization": "Bearer opaque-value-2"; Proxy-Authorization: Basic b3BhcXVl';
    const out = scrubWireText(wire);
    expect(out).not.toMatch(/opaque-value|b3BhcXVl/);
    expect(out).toBe('echo: authorization=[REDACTED], "Authorization": "Bearer [REDACTED]"; Proxy-Authorization: Basic [REDACTED]');
    expect(scrubWireText(`Authorization: ${SECRET.toLowerCase()}`)).toBe('Authorization: [REDACTED]');
    // the project's own messages name the header as a path, not as an echo
    expect(scrubSecrets('sinks[0].headers.Authorization: is empty')).toBe('sinks[0].headers.Authorization: is empty');
  });
});
