// R7.11, detection and renewal through a real engine (warm pool, mount namespace): a hand-off file
// a command makes is reported in its result; .git/config replaced outside (as an editor or git
// itself does, by renaming a new file over it) is seen by the next command, not the bind mount's
// old file; and the new file is protected again.
import { execFileSync } from 'node:child_process';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine.js';
import { bash, engineFixture, type EngineFixture } from '../support/engine.js';

let own: EngineFixture;
let engine: Engine;

const sh = (script: string) =>
  engine.executor.run({
    command: { kind: 'argv', argv: bash(script) },
    cwd: own.scope,
    logName: 'handoff-watch',
  });

describe.runIf(process.platform === 'linux')(
  'R7.11: hand-off files watched around each command',
  () => {
    beforeAll(async () => {
      own = await engineFixture({ noShellPool: false });
      engine = own.engine;
      // Made after the engine: the first command sees it appear and renews the mounts.
      execFileSync('git', ['init', '-q', own.scope]);
    }, 60_000);

    afterAll(async () => {
      await own.dispose();
    });

    it('R7.11: a hand-off file a command makes is in its result (handoffWrites and a note), and protected afterwards', async () => {
      const made = await sh('echo "export X=1" > .envrc');
      expect(made.status, made.output).toBe('completed');
      expect(made.handoffWrites).toEqual([{ path: join(own.scope, '.envrc'), change: 'created' }]);
      expect(made.output).toContain('hand-off files changed while this command ran');
      expect(made.output).toContain('created .envrc');
      const again = await sh('echo more >> .envrc');
      expect(again.status).toBe('failed');
      expect(again.output).toContain('Read-only file system');
      expect(await readFile(join(own.scope, '.envrc'), 'utf8')).toBe('export X=1\n');
      // An ordinary command reports nothing.
      const plain = await sh('echo plain > plain.txt');
      expect(plain.handoffWrites).toBeUndefined();
      expect(plain.output).toBe('');
    });

    it('R7.11: .git/config replaced outside is seen by the next command (the mounts are renewed), and stays protected', async () => {
      const config = join(own.scope, '.git', 'config');
      expect((await sh('git config user.name x')).status).toBe('failed');
      const original = await readFile(config, 'utf8');
      await writeFile(`${config}.new`, `${original}[user]\n\tname = set-outside\n`);
      await rename(`${config}.new`, config);
      const seen = await sh('git config user.name');
      expect(seen.output.trim()).toBe('set-outside');
      expect(seen.handoffWrites).toBeUndefined();
      expect((await sh('git config user.name y')).status).toBe('failed');
      expect(await readFile(config, 'utf8')).toContain('set-outside');
    });
  },
);
