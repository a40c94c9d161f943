// Which of the server's test files are which kind (TestKinds in vitest.shared.ts). test/red-team/**
// is sequential (named in vitest.shared.ts); every file not listed here is `system`.
import { testConfig, type TestKinds } from '../../vitest.shared.js';

export const tests: TestKinds = {
  // The files that start no process and open no server (vitest.unit-setup.ts fails one that does).
  unit: [
    'test/cli/flags.test.ts',
    'test/isolation/{handshake,message-router,restart-policy,termination}.test.ts',
    'test/jsonrpc/message-kind.test.ts',
  ],
  e2e: ['test/e2e/**/*.test.ts'],
};

export default testConfig(tests);
