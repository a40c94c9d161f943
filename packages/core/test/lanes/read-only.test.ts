// The read_only lane (SPEC §14 lanes): a command runs with no write access to the scope — the
// kernel refuses its writes there, whatever the tool file claims — while the scope stays readable,
// the temp directory writable, and git takes no optional locks. With the warm shell pool on: the
// pool's shells may write the scope, so a read-only command must not be run in one.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import {
  bash,
  engineFixture,
  removeAll,
  varTmpDir,
  type EngineFixture,
} from '../support/engine.js';

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

  it.concurrent(
    'SPEC §14 lanes: a scope inside the temp directory is still read-only: the temp directory is then read-only for the call too',
    async () => {
      // Landlock cannot take the scope out of the temp directory's grant, so the call gets neither.
      const base = await varTmpDir('nested');
      const temp = join(base, 'tmp');
      const scope = join(temp, 'project');
      await mkdir(scope, { recursive: true });
      const engine = await createEngine({
        scope,
        tempDir: temp,
        stateDir: join(base, 'state'),
        noShellPool: true,
      });
      try {
        const result = await engine.executor.run({
          command: {
            kind: 'argv',
            argv: bash(`touch ${scope}/inside; touch ${temp}/beside; ls ${scope}`),
          },
          cwd: scope,
          logName: `read-only-nested-${String(process.pid)}`,
          readOnly: true,
        });
        expect(result.output).toMatch(/inside': Permission denied/);
        expect(result.output).toMatch(/beside': Permission denied/);
        expect(existsSync(join(scope, 'inside'))).toBe(false);
      } finally {
        await engine.close();
        await removeAll([base]);
      }
    },
  );
});
