import { it } from 'vitest';
import { loadConfig } from '/work/main/src/config/index.ts';
it('x', async () => { const c = await loadConfig('/work/main/config/compose/mls.yaml', { MLS_API_TOKEN: 'abc' }); console.log(JSON.stringify(c.sinks, null, 1)); });
