// An isolated session answers its client's initialize itself, as the server it will start would
// (protocol/initialize-answer.ts): the answer of the HTTP server's runtime must be the answer of
// the session's process, started with the command line the session gives it, the built binary.
import { describe, expect } from 'vitest';
import { isolatedChildCommand } from '../../src/isolation/child-command.js';
import { initializeAnswer } from '../../src/protocol/initialize-answer.js';
import { it, RawSession } from '../support/harness.js';

const PARAMS = {
  protocolVersion: '2025-06-18',
  capabilities: { roots: { listChanged: true } },
  clientInfo: { name: 'initialize-answer-test', version: '1.0.0' },
};

describe.concurrent('the initialize answer of an isolated session', { timeout: 60_000 }, () => {
  for (const flags of [[], ['--claude-channel', '--inline-wait', '3', '--no-tool-discovery']]) {
    it(`R8D.3, R8D.14: the server answers initialize as the session's process does (${flags.join(' ') || 'no flags'})`, async ({
      e2e,
    }) => {
      const scope = await e2e.scope();
      const { runtime, options } = await e2e.runtime(scope, [
        '--mode',
        'http',
        '--session-isolation',
        ...flags,
      ]);
      const ours = await initializeAnswer(runtime, {
        jsonrpc: '2.0',
        id: 7,
        method: 'initialize',
        params: PARAMS,
      });
      // The process as the session starts it: `<bin> --mode stdio <the server's flags>`.
      const child = isolatedChildCommand(options, scope.dir);
      // The server's flags, after `BIN --mode stdio`.
      const process = new RawSession(
        e2e,
        scope,
        child.args.slice(child.args.indexOf('--mode') + 2),
      );
      const theirs = await process.request(7, 'initialize', PARAMS, 45_000);
      await process.end();
      expect(theirs['result']).toBeDefined();
      expect(ours).toEqual(theirs);
    });
  }
});
