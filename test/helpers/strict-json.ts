//! A JSON reader as strict as the log pipelines that reject a line with a key written twice.
//! `JSON.parse` silently keeps the last copy, so it cannot see the problem: this walks the
//! text and lists every key that repeats within one object.

/** Where each repeated key was found, as `path.key` (the top level is `$`). */
export function duplicateKeys(text: string): string[] {
  let i = 0;
  const found: string[] = [];
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${i} of ${JSON.stringify(text.slice(0, 200))}`);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const keys = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const key = string();
        if (keys.has(key)) found.push(`${path}.${key}`);
        keys.add(key);
        ws();
        if (text[i] !== ':') fail('expected :');
        i++;
        value(`${path}.${key}`);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('expected , or ]');
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
    if (!m) fail('expected a value');
    i += m![0].length;
  };
  value('$');
  ws();
  if (i !== text.length) fail('trailing text');
  return found;
}
