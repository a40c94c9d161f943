// R7.6 red team, the confused deputy: the server writes full-output logs unconfined, so a command
// that could plant a link where a log will be written would make the server write anywhere it can.
// Through the engine and the real kernel: a command cannot write anywhere in the server's private
// state; links planted there anyway (by the test, from outside the sandbox) are never followed.
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, outputBudgetBytes } from '../../src/process/output.js';
import {
  bash,
  engineFixture,
  quote,
  refusal,
  removeAll,
  run,
  varTmpDir,
  type EngineFixture,
} from '../support/engine.js';

let fixture: EngineFixture;
let outside: string;

beforeAll(async () => {
  fixture = await engineFixture();
  outside = await varTmpDir('outside');
});

afterAll(async () => {
  await fixture.dispose();
  await removeAll([outside]);
});

const DENIED = /Permission denied|Operation not permitted/;
/** More than the output budget (distinct lines, nothing collapses): a full log is written. */
const BIG = outputBudgetBytes(DEFAULT_MAX_OUTPUT_TOKENS) + 4096;
const bigOutput = (bytes = BIG) => bash(`seq 1 2000000 | head -c ${String(bytes)}`);

describe('R7.6: nothing the server writes lives where a command can write', () => {
  it('R7.6: the private state lies outside every writable path, and the cache is not inside it', () => {
    const { state, sandbox } = fixture.engine;
    for (const path of [state.root, state.serverDir, state.logDir]) {
      for (const writable of sandbox.writable) {
        if (writable === state.cacheDir) continue;
        expect(path.startsWith(`${writable}/`) || path === writable, `${path} in ${writable}`).toBe(
          false,
        );
      }
    }
    expect(sandbox.writable).toContain(state.cacheDir);
    expect(state.cacheDir.startsWith(`${state.serverDir}/`)).toBe(false);
    expect(state.logDir.startsWith(`${state.cacheDir}/`)).toBe(false);
  });

  it('R7.6: a sandboxed command cannot create a file or plant a link among the logs', async () => {
    const { state } = fixture.engine;
    const target = join(outside, 'victim.txt');
    await writeFile(target, 'untouched\n');
    // The old exploit: predict the next log's name and plant a link there; and variations on it.
    const attempts = [
      `ln -s ${quote(target)} ${quote(join(state.logDir, 'op_000000_2.log'))}`,
      `touch ${quote(join(state.logDir, 'planted.log'))}`,
      `ln -s ${quote(outside)} ${quote(join(state.serverDir, 'output2'))}`,
      `mkdir ${quote(join(state.root, 'servers', 'evil'))}`,
      `ln -s ${quote(outside)} ${quote(join(state.root, 'caches', 'evil'))}`,
      `mv ${quote(state.logDir)} ${quote(join(fixture.scope, 'stolen'))}`,
    ];
    for (const attempt of attempts) {
      const result = await run(fixture.engine, bash(attempt));
      expect(result.status, attempt).toBe('failed');
      expect(result.output, attempt).toMatch(DENIED);
    }
    expect(await readdir(state.logDir)).toEqual([]);
    expect((await readdir(state.serverDir)).sort()).toEqual(['args', 'output']);
    expect(existsSync(join(state.root, 'servers', 'evil'))).toBe(false);
    expect(existsSync(join(state.root, 'caches', 'evil'))).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('untouched\n');
  });

  it('R7.6: a command can write its cache directory (tools must), which is not the private one', async () => {
    const result = await run(
      fixture.engine,
      bash(
        'mkdir -p "$XDG_CACHE_HOME" && echo cached > "$XDG_CACHE_HOME/probe" && cat "$XDG_CACHE_HOME/probe"',
      ),
    );
    expect(result).toMatchObject({ status: 'completed', output: 'cached\n' });
    expect(existsSync(join(fixture.engine.state.cacheDir, 'xdg', 'probe'))).toBe(true);
  });

  it('R7.6: a link planted (from outside the sandbox) at the predictable old log name is not followed', async () => {
    const { state } = fixture.engine;
    const target = join(outside, 'planted-target.txt');
    await writeFile(target, 'untouched\n');
    const logName = 'op_abcdef_7';
    // What the old server would have opened: <log dir>/<operation id>.log.
    await symlink(target, join(state.logDir, `${logName}.log`));
    const result = await run(fixture.engine, bigOutput(), { logName });
    expect(result.truncated).toBe(true);
    const path = result.fullOutputPath ?? '';
    expect(dirname(path)).toBe(state.logDir);
    expect(path).not.toBe(join(state.logDir, `${logName}.log`));
    // A fresh regular file of ours with the whole output; the link's target is untouched.
    expect((await lstat(path)).isFile()).toBe(true);
    expect((await lstat(path)).size).toBe(BIG);
    expect(await readFile(target, 'utf8')).toBe('untouched\n');
  });

  it('R7.6: log names are unpredictable: the same run twice gets two different files', async () => {
    const first = await run(fixture.engine, bigOutput(), { logName: 'same' });
    const second = await run(fixture.engine, bigOutput(), { logName: 'same' });
    expect(first.fullOutputPath).toMatch(/\/same-[0-9a-f]{16}\.log$/);
    expect(second.fullOutputPath).toMatch(/\/same-[0-9a-f]{16}\.log$/);
    expect(first.fullOutputPath).not.toBe(second.fullOutputPath);
  });

  it('R7.6: a log directory replaced by a link (from outside the sandbox) is not written through', async () => {
    const own = await engineFixture();
    try {
      const { logDir } = own.engine.state;
      const elsewhere = join(outside, 'redirected');
      await mkdir(elsewhere);
      await rename(logDir, `${logDir}.moved`);
      await symlink(elsewhere, logDir);
      const result = await run(own.engine, bigOutput());
      expect(result.truncated).toBe(true);
      expect(result.fullOutputPath).toBeUndefined();
      expect(result.output).toMatch(/the full output could not be saved: .*was replaced/);
      expect(await readdir(elsewhere)).toEqual([]);
    } finally {
      await own.dispose();
    }
  });
});

describe('R7.6: the private state root is checked before it is used', () => {
  it('R7.6: a state root inside the temp directory (writable by commands) is refused with the fix', async () => {
    const scope = await varTmpDir('scope');
    try {
      const error = await refusal(
        createEngine({ scope, stateDir: join(tmpdir(), 'ahma-state'), noShellPool: true }),
      );
      expect(error.code).toBe('STATE_DIR_UNSAFE');
      expect(error.message).toContain('inside the temp directory');
      expect(error.message).toContain('--state-dir');
      expect(existsSync(join(tmpdir(), 'ahma-state'))).toBe(false);
    } finally {
      await removeAll([scope]);
    }
  });

  it('R7.6: a state root inside the scope, or containing it, is refused', async () => {
    const scope = await varTmpDir('scope');
    try {
      const inside = await refusal(
        createEngine({ scope, stateDir: join(scope, '.state'), noShellPool: true }),
      );
      expect(inside.message).toContain('inside the sandbox scope');
      const containing = await refusal(
        createEngine({ scope, stateDir: dirname(scope), noShellPool: true }),
      );
      expect(containing.message).toContain('contains the sandbox scope');
      // Spelled through a link that leads into the scope: judged by where it really is.
      const link = join(outside, 'to-scope');
      await symlink(scope, link);
      const linked = await refusal(createEngine({ scope, stateDir: link, noShellPool: true }));
      expect(linked.code).toBe('STATE_DIR_UNSAFE');
      expect(existsSync(join(scope, '.state'))).toBe(false);
    } finally {
      await removeAll([scope]);
    }
  });

  it('R7.6: a link planted in place of the servers directory is refused, not followed', async () => {
    const scope = await varTmpDir('scope');
    const root = await varTmpDir('root');
    const target = await varTmpDir('target');
    try {
      await symlink(target, join(root, 'servers'));
      const error = await refusal(createEngine({ scope, stateDir: root, noShellPool: true }));
      expect(error.code).toBe('STATE_DIR_UNSAFE');
      expect(error.message).toContain('is a symbolic link');
      expect(await readdir(target)).toEqual([]);
    } finally {
      await removeAll([scope, root, target]);
    }
  });

  it('R7.6: by default the first of $XDG_STATE_HOME/ahma, ~/.local/state/ahma outside the writable paths is used, mode 0700', async () => {
    const scope = await varTmpDir('scope');
    const home = await varTmpDir('home');
    try {
      // XDG_STATE_HOME inside the scope: skipped for ~/.local/state.
      const engine = await createEngine({
        scope,
        noShellPool: true,
        env: { ...process.env, XDG_STATE_HOME: join(scope, 'state'), HOME: home },
      });
      try {
        expect(engine.state.root).toBe(join(home, '.local', 'state', 'ahma'));
        expect((await lstat(engine.state.root)).mode & 0o777).toBe(0o700);
        expect((await lstat(engine.state.serverDir)).mode & 0o777).toBe(0o700);
        expect(existsSync(join(scope, 'state'))).toBe(false);
      } finally {
        await engine.close();
      }
      // Nowhere outside: refused, naming every candidate and the fix.
      const error = await refusal(
        createEngine({
          scope,
          noShellPool: true,
          extraWritable: [home],
          env: { XDG_STATE_HOME: join(scope, 'state'), HOME: home, PATH: process.env['PATH'] },
        }),
      );
      expect(error.code).toBe('STATE_DIR_UNSAFE');
      expect(error.message).toContain('$XDG_STATE_HOME/ahma');
      expect(error.message).toContain('~/.local/state/ahma');
      expect(error.message).toMatch(/--state-dir DIR \(AHMA_STATE_DIR\)/);
    } finally {
      await removeAll([scope, home]);
    }
  });
});
