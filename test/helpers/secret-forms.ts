//! The forms in which a secret sent in a header can come back in an echo: another case,
//! base64 (alone, or inside `user:secret`), percent-encoding. For tests that check none
//! of them survives.

/** One way of writing a secret. `encoded` forms are base64 text. */
export interface SecretForm {
  name: string;
  form: string;
  encoded: boolean;
}

/** Every form of `secret` a service or receiver may echo. */
export function echoedForms(secret: string): SecretForm[] {
  const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
  const b64url = (t: string) => Buffer.from(t, 'utf8').toString('base64url');
  const plain = (name: string, form: string): SecretForm => ({ name, form, encoded: false });
  const encoded = (name: string, form: string): SecretForm => ({ name, form, encoded: true });
  return [
    plain('exact', secret),
    plain('lowercase', secret.toLowerCase()),
    plain('uppercase', secret.toUpperCase()),
    plain('mixed case', [...secret].map((ch, i) => (i % 2 ? ch.toUpperCase() : ch.toLowerCase())).join('')),
    plain('percent-encoded', encodeURIComponent(secret)),
    encoded('base64', b64(secret)),
    encoded('base64 unpadded', b64(secret).replace(/=+$/, '')),
    encoded('base64url', b64url(secret)),
    encoded('base64url padded', b64(secret).replace(/\+/g, '-').replace(/\//g, '_')),
    encoded('base64 of the lowercase', b64(secret.toLowerCase())),
    encoded('base64 of the uppercase', b64(secret.toUpperCase())),
    encoded('base64 of user:secret', b64(`user:${secret}`)),
    encoded('base64 of u:secret', b64(`u:${secret}`)),
    encoded('base64 of "Authorization: secret"', b64(`Authorization: ${secret}`)),
    encoded('base64url of user:secret', b64url(`user:${secret}`)),
  ];
}

/**
 * The names of the forms of `secret` still found in `text`. Of a base64 form inside a
 * longer encoded text, the first and last characters mix in the neighbours' bits and may
 * stay; its middle (all but three characters at each end) must not.
 */
export function formsIn(text: string, secret: string): string[] {
  return echoedForms(secret)
    .filter(({ form, encoded }) => text.includes(form) || (encoded && text.includes(form.slice(3, -3))))
    .map(({ name }) => name);
}
