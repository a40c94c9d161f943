// The read_only lane (SPEC §14 lanes): a command runs with no write access to the scope — the
// kernel refuses its writes there, whatever the tool file claims — while the scope stays readable,
// the temp directory writable, and git takes no optional locks. With the warm shell pool on: the
// pool's shells may write the scope, so a read-only command must not be run in one.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, engineFixture, type EngineFixture } from '../support/engine.js';

let fixture: EngineFixture;
let counter = 0;

beforeAll(async () => {
  fixture = await engineFixture({ noShellPool: false });
  await mkdir(join(fixture.scope, 'src'), { recursive: true });
  await writeFile(join(fixture.scope, 'src', 'main.txt'), 'kept\n');
}, 30_000);
afterAll(() => fixture.dispose());

const runScript = (script: string, readOnly: boolean) =>
  fixture.engine.executor.run({
    command: { kind: 'argv', argv: bash(script) },
    cwd: fixture.scope,
    logName: `read-only-${String(process.pid)}-${String(++counter)}`,
    readOnly,
  });

describe.runIf(process.platform === 'linux')('the read_only lane', () => {
  it.concurrent(
    'SPEC §14 lanes: writing, creating or removing anything in the scope fails with EACCES',
    async () => {
      const result = await runScript(
        'echo changed > src/main.txt; echo "write=$?"; touch new.txt; echo "create=$?"; rm -f src/main.txt; echo "remove=$?"; mkdir made; echo "mkdir=$?"',
        true,
      );
      expect(result.output).toMatch(/write=1/);
      expect(result.output).toMatch(/create=1/);
      expect(result.output).toMatch(/remove=1/);
      expect(result.output).toMatch(/mkdir=1/);
      expect(result.output).toMatch(/Permission denied/);
      expect(await readFile(join(fixture.scope, 'src', 'main.txt'), 'utf8')).toBe('kept\n');
    },
  );

  it.concurrent(
    'SPEC §14 lanes: the scope stays readable, the temp directory writable, and GIT_OPTIONAL_LOCKS=0 is set',
    async () => {
      const scratch = join(tmpdir(), `ahma-read-only-${String(process.pid)}-${String(++counter)}`);
      const result = await runScript(
        `cat src/main.txt && echo scratch > ${scratch} && cat ${scratch} && echo "locks=$GIT_OPTIONAL_LOCKS"`,
        true,
      );
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('kept\nscratch\nlocks=0\n');
    },
  );

  it.concurrent(
    'SPEC §14 lanes: the same command outside the read_only lane writes the scope (the pool too)',
    async () => {
      const result = await runScript(
        'echo written > src/other.txt && echo "locks=${GIT_OPTIONAL_LOCKS-unset}"',
        false,
      );
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('locks=unset\n');
      expect(await readFile(join(fixture.scope, 'src', 'other.txt'), 'utf8')).toBe('written\n');
    },
  );
});
