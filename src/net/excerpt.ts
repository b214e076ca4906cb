//! Excerpts of bodies received (error answers of the service and of sinks), as they appear
//! in errors and logs: one line, whitespace collapsed, clipped with an ellipsis.

/** `text` on one line (runs of whitespace made one space, trimmed), at most `maxChars` characters. */
export function clipExcerpt(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxChars ? `${flat.slice(0, Math.max(0, maxChars - 1))}…` : flat;
}
