// Which of core's test files are which kind (TestKinds in vitest.shared.ts). Core's folders follow
// src/, so a folder can hold both kinds: the unit files are named here. Every other file runs real
// processes or the sandbox (system) or is sequential (named in vitest.shared.ts). A new file is
// `system` until it is listed here; list it when it starts no process and opens no server.
import { testConfig, type TestKinds } from '../../vitest.shared.js';

export const tests: TestKinds = {
  unit: [
    'test/argv/{file-args,paths}.test.ts',
    'test/catalog/{argv,docs,option-like,read-catalog}.test.ts',
    'test/definition/{check-document,compat,docs-examples,flatten}.test.ts',
    'test/definition/{input-schema,input-schemas,json-schema,load}.test.ts',
    'test/definition/{livelog,livelog-upstream-keys,semantic-checks,sequences}.test.ts',
    'test/definition/{structural-checks,upstream-files,upstream-round2,validate-files}.test.ts',
    'test/docs/requirements.test.ts',
    'test/lanes/workspace-lanes.test.ts',
    'test/layering/test-mirrors-src.test.ts',
    // Not prefilter.test.ts: it times the event loop while a worker thread spins.
    'test/livelog/{lines-chunker,prefilter-pattern,start}.test.ts',
    'test/network/{address-ranges,host-rules,relay-guard}.test.ts',
    'test/paths/{inside,real-sync}.test.ts',
    'test/registry/{batch,command,config-file,draft,exec,registry-file}.test.ts',
    'test/sandbox/write-grants.test.ts',
    'test/state/grant-ledger.test.ts',
  ],
  // Reads the build output, so it needs the build.
  e2e: ['test/layering/dist-clean.test.ts'],
};

export default testConfig(tests);
