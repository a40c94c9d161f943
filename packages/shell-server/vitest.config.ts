// Which of the server's test files are which kind (TestKinds in vitest.shared.ts). test/red-team/**
// is sequential (named in vitest.shared.ts); every file not listed here is `system`.
import { testConfig, type TestKinds } from '../../vitest.shared.js';

export const tests: TestKinds = {
  // The files that start no process and open no server (vitest.unit-setup.ts fails one that does).
  unit: [
    'test/layout.test.ts',
    'test/calls/{audit-argv,last-line}.test.ts',
    'test/cli/{flags,grants,logging,options}.test.ts',
    'test/isolation/{child-command,handshake,message-router,restart-policy,spare-scope,termination}.test.ts',
    'test/jsonrpc/{incoming,line-framer,message-kind,oversized}.test.ts',
    'test/tools/bundles.test.ts',
    'test/transports/http/{accept,session-limits}.test.ts',
    'test/transports/http/session/{event-store,session-activity}.test.ts',
    'test/transports/stdio/transport.test.ts',
  ],
  e2e: ['test/e2e/**/*.test.ts'],
};

export default testConfig(tests);
