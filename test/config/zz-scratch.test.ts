import { test } from 'vitest';
import { configJsonSchema } from '../../src/config/index.js';
test('scratch', () => { console.log(JSON.stringify(configJsonSchema(), null, 1)); });
