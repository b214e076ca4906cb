import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most suites wait on sockets, timers and child processes; the default would run one file at a time on 2 cores.
    maxWorkers: 2,
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default'],
  },
});
