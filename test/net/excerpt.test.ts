import { describe, expect, it } from 'vitest';
import { clipExcerpt } from '../../src/net/excerpt.js';

describe('clipExcerpt', () => {
  it('puts a body on one line and clips it with an ellipsis within the limit', () => {
    expect(clipExcerpt('  <html>\n  <body>oops</body>\t</html>\n', 100)).toBe('<html> <body>oops</body> </html>');
    const long = clipExcerpt('x'.repeat(500), 10);
    expect(long).toBe('xxxxxxxxx…');
    expect(long).toHaveLength(10);
    expect(clipExcerpt('short', 10)).toBe('short');
  });
});
