//! Secret scrubbing: one place that knows every form in which a secret can come back. A
//! service or receiver that echoes a request header may change the token's case, encode it
//! in base64 (alone or inside a `user:token` pair) or percent-encode it; each of these forms
//! is cut out; in text from the wire, so is whatever follows an `Authorization:` label.

const REDACTED = '[REDACTED]';
/** Shorter values are not scrubbed: they would cut ordinary words out of every message. */
const MIN_SECRET_CHARS = 4;
/** The part of a secret's base64 that does not depend on its neighbours is matched only from this length on. */
const MIN_CORE_CHARS = 12;

/** `authorization: value`, `"Authorization":"value"`, `authorization=value`, with an optional scheme word. */
const AUTH_LABEL_RE = /((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest)\s+)?)(?!\[REDACTED\])[^\s"',;&}\]]+/gi;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function urlSafe(b64: string): string {
  return b64.replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * The base64 forms of `value` (standard and URL-safe, with and without padding), and the
 * middle part of its base64 when it sits anywhere inside a longer encoded text, such as
 * `user:token`: there the first and last characters mix in neighbouring bytes, but the
 * characters between them are the same whatever the neighbours are.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Set<string>();
  const whole = bytes.toString('base64');
  forms.add(whole).add(whole.replace(/=+$/, ''));
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const b64 = padded.toString('base64');
    // character i holds bits [6i, 6i + 6): keep those that fall within the value's bits
    const core = b64.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * padded.length) / 6));
    if (core.length >= MIN_CORE_CHARS) forms.add(core);
  }
  for (const f of [...forms]) forms.add(urlSafe(f));
  return [...forms].filter((f) => f.length >= MIN_SECRET_CHARS);
}

/** A set of secret values and the matchers of all their forms. */
export class SecretScrubber {
  readonly #values = new Set<string>();
  #plain: RegExp | undefined;
  #encoded: RegExp | undefined;

  constructor(values: Iterable<string> = []) {
    for (const v of values) this.add(v);
  }

  /** Adds a value; values shorter than 4 characters are ignored. */
  add(value: string | undefined): void {
    if (!value || value.length < MIN_SECRET_CHARS || this.#values.has(value)) return;
    this.#values.add(value);
    this.#build();
  }

  #build(): void {
    // Longest first, so that a secret that contains another is cut out whole.
    const byLength = (a: string, b: string): number => b.length - a.length;
    const plain = new Set<string>();
    const encoded = new Set<string>();
    for (const v of this.#values) {
      plain.add(v);
      const pct = encodeURIComponent(v);
      if (pct !== v) plain.add(pct);
      for (const c of new Set([v, v.toLowerCase(), v.toUpperCase()])) for (const f of base64Forms(c)) encoded.add(f);
    }
    // The plain forms match in any case; base64 is case-sensitive, and a case-blind match
    // of it would also cut out unrelated text.
    this.#plain = new RegExp([...plain].sort(byLength).map(escapeRegExp).join('|'), 'gi');
    this.#encoded = new RegExp([...encoded].sort(byLength).map(escapeRegExp).join('|'), 'g');
  }

  /** Replaces every form of every value inside `text`. */
  scrub(text: string): string {
    if (!this.#plain || !this.#encoded) return text;
    return text.replace(this.#plain, REDACTED).replace(this.#encoded, REDACTED);
  }
}

/** The process-wide secrets: the API token, sink header values, signing secrets. */
const registered = new SecretScrubber();

/** Registers a value (token, signing secret, header value) that must never be logged. */
export function registerSecret(value: string | undefined): void {
  registered.add(value);
}

/** Replaces every registered secret inside `text`, in each of the forms it can take. */
export function scrubSecrets(text: string): string {
  return registered.scrub(text);
}

/**
 * Scrubs text that came from the other side of a connection (an error body, a redirect,
 * a receiver's answer): the registered secrets, and also whatever value follows an
 * `Authorization` label, since a service may echo the header in a form not known here.
 * Not for the project's own messages, where `headers.Authorization: is empty` names a path.
 */
export function scrubWireText(text: string): string {
  const out = registered.scrub(text);
  return /authorization/i.test(out) ? out.replace(AUTH_LABEL_RE, (_m, label: string) => `${label}${REDACTED}`) : out;
}
