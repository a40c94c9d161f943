// pnpm's offline commands run for real in the sandbox where pnpm is installed: pnpm passes what
// follows the script (or command) name to it untouched, and takes its own options only before it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  catalog,
  catalogRunner,
  expectSuccess,
  installed,
  type Catalog,
  type CatalogRunner,
} from './helpers.js';

const ECHO_ARGS = 'node -e "console.log(JSON.stringify(process.argv.slice(1)))"';
const TRICKY = ['plain', '--flag', '-F', 'two words', '$(id)'];

let loaded: Catalog;
let runner: CatalogRunner;

function lastLine(output: string): string {
  return output.trim().split('\n').at(-1) ?? '';
}

describe.skipIf(!installed('pnpm'))('pnpm, run for real in the sandbox (offline)', () => {
  beforeAll(async () => {
    loaded = await catalog(['pnpm']);
    runner = await catalogRunner(loaded, { ...process.env, npm_config_userconfig: '/dev/null' });
    await writeFile(
      join(runner.scope, 'package.json'),
      JSON.stringify({
        name: 'demo',
        version: '1.0.0',
        scripts: { echo: ECHO_ARGS, test: ECHO_ARGS },
      }),
    );
  });
  afterAll(async () => {
    await runner.dispose();
  });

  it('SPEC §2: pnpm_run passes args to the script exactly as given, flags included', async () => {
    const output = expectSuccess(await runner.call('pnpm_run', { script: 'echo', args: TRICKY }));
    expect(JSON.parse(lastLine(output))).toEqual(TRICKY);
  });

  it("SPEC §2: pnpm_run's own options come before the script name, where pnpm reads them", async () => {
    const result = await runner.call('pnpm_run', { script: 'missing', 'if-present': true });
    expect(result.argv).toEqual(['pnpm', 'run', '--if-present', 'missing']);
    expectSuccess(result);
    const without = await runner.call('pnpm_run', { script: 'missing' });
    expect(without.status).toBe('failed');
  });

  it('SPEC §2: pnpm_test and pnpm_exec hand every argument to the script or command', async () => {
    expect(
      JSON.parse(lastLine(expectSuccess(await runner.call('pnpm_test', { args: TRICKY })))),
    ).toEqual(TRICKY);
    const exec = await runner.call('pnpm_exec', {
      command: ['node', '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...TRICKY],
    });
    expect(JSON.parse(lastLine(expectSuccess(exec)))).toEqual(TRICKY);
  });
});
