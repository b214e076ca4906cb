//! undici's connection pool for the service's client, loaded on its own. The package's
//! index also loads fetch, WebSocket, the HTTP caches, mocks and proxies, none of which the
//! daemon uses; loading only the pool saves 50–100 ms at every start. The pool is used only
//! through `dispatch` (see exchange.ts) and `close`: the convenience methods (`request`,
//! `stream`…) are added to the prototype by the package's index, and are not needed here.
//! A test runs the client in a process that never loads the index.
import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';

const require = createRequire(import.meta.url);

/** `undici`'s `Pool`, without the package's index. */
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
