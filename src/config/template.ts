//! File-path templates of the file sink: `{model_id}` plus the strftime parts
//! `%Y %m %d %H %M %S %j %%`, always rendered in UTC.

const STRFTIME_CODES = new Set(['Y', 'm', 'd', 'H', 'M', 'S', 'j', '%']);
const PLACEHOLDERS = new Set(['model_id']);

/** Returns what is wrong with a path template, or `undefined` if it is valid. */
export function checkPathTemplate(template: string): string | undefined {
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if (ch === '%') {
      const code = template[i + 1];
      if (code === undefined) return 'ends with a lone %; write %% for a literal percent sign';
      if (!STRFTIME_CODES.has(code)) return `has an unknown strftime code %${code}; use %Y %m %d %H %M %S %j, or %% for a literal %`;
      i++;
    } else if (ch === '{') {
      const end = template.indexOf('}', i);
      const name = end === -1 ? undefined : template.slice(i + 1, end);
      if (name === undefined || !/^[A-Za-z0-9_]*$/.test(name)) return 'has a { that opens no placeholder; the only placeholder is {model_id}';
      if (!PLACEHOLDERS.has(name)) return `has an unknown placeholder {${name}}; the only placeholder is {model_id}`;
      i = end;
    }
  }
  if (template.endsWith('/')) return 'ends with /, so it names a directory; add a file name such as {model_id}.ndjson';
  return undefined;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * Renders a (valid) path template for one model at one instant (UTC).
 * `modelId` is inserted as given; the caller makes it safe for a file name.
 */
export function renderPathTemplate(template: string, modelId: string, atMs: number): string {
  const d = new Date(atMs);
  const dayOfYear = Math.floor((atMs - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
  return template.replace(/%([YmdHMSj%])|\{model_id\}/g, (whole, code: string | undefined) => {
    switch (code) {
      case undefined:
        return modelId;
      case 'Y':
        return pad(d.getUTCFullYear(), 4);
      case 'm':
        return pad(d.getUTCMonth() + 1);
      case 'd':
        return pad(d.getUTCDate());
      case 'H':
        return pad(d.getUTCHours());
      case 'M':
        return pad(d.getUTCMinutes());
      case 'S':
        return pad(d.getUTCSeconds());
      case 'j':
        return pad(dayOfYear, 3);
      case '%':
        return '%';
      default:
        return whole;
    }
  });
}
