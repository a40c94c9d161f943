// SPEC §4 "Resources": a server killed with SIGKILL cannot clean up, so the next server to start on
// the same state root sweeps what it left — its private directory (logs) and its cache directory —
// and nothing else: not a live server's directories, not names Ahma did not make, not what a link
// points to. The killed server is a real second process running the built engine.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { ownerName, ownTag } from '../../src/state/owner.js';
import { removeConfined } from '../../src/state/remove.js';
import { removeAll, varTmpDir } from '../support/engine.js';

const CHILD = fileURLToPath(new URL('../fixtures/state/engine-child.mjs', import.meta.url));

interface ChildState {
  readonly pid: number;
  readonly status: string;
  readonly serverDir: string;
  readonly cacheDir: string;
  readonly log: string;
}

let scope: string;
let root: string;
let outside: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  scope = await varTmpDir('scope');
  root = await varTmpDir('root');
  outside = await varTmpDir('outside');
  await writeFile(join(outside, 'keep.txt'), 'keep\n');
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await removeAll([scope, root, outside]);
});

/** Starts a real engine in a second process; resolves with its directories once it has run. */
function startServer(): Promise<{ child: ChildProcess; state: ChildState }> {
  const child = spawn(process.execPath, [CHILD, scope, root, outside], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve({ child, state: JSON.parse(out) as ChildState });
    });
    child.once('exit', (code) =>
      reject(new Error(`engine child exited (${String(code)}): ${err}`)),
    );
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('SPEC §4 Resources: the sweep at start', () => {
  it("SPEC §4 Resources: what a server killed with SIGKILL left is swept at the next start; a live server's is not", async () => {
    const dead = await startServer();
    const live = await startServer();
    for (const { state } of [dead, live]) {
      expect(state.status).toBe('completed');
      expect(existsSync(state.log)).toBe(true);
      expect(existsSync(join(state.cacheDir, 'xdg', 'tool', 'ro', 'sub', 'file'))).toBe(true);
    }
    await killed(dead.child);
    // Nobody cleaned up after the kill.
    expect([existsSync(dead.state.serverDir), existsSync(dead.state.cacheDir)]).toEqual([
      true,
      true,
    ]);

    const engine = await createEngine({ scope, stateDir: root, noShellPool: true });
    try {
      const report = await engine.swept;
      expect(report.failed).toEqual([]);
      expect([...report.removed].sort()).toEqual(
        [dead.state.serverDir, dead.state.cacheDir].sort(),
      );
      expect([existsSync(dead.state.serverDir), existsSync(dead.state.cacheDir)]).toEqual([
        false,
        false,
      ]);
      // The live server keeps everything; what the links pointed to is untouched.
      expect(existsSync(live.state.log)).toBe(true);
      expect(existsSync(join(live.state.cacheDir, 'xdg', 'tool', 'ro', 'sub', 'file'))).toBe(true);
      expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');
    } finally {
      await engine.close();
    }
  });

  it('SPEC §4 Resources: only directories whose owner has certainly ended are swept; links and foreign names are left alone', async () => {
    const self = ownTag();
    const servers = join(root, 'servers');
    await mkdir(servers, { recursive: true, mode: 0o700 });
    // A reused pid: this very process's pid, but another start time — its owner has ended.
    const reused = join(servers, ownerName({ ...self, start: '1' }));
    await mkdir(join(reused, 'output'), { recursive: true });
    // Another machine sharing the directory (same pid and all): not ours to judge.
    const foreignHost = self.host === '00000000' ? '11111111' : '00000000';
    const foreign = join(servers, ownerName({ ...self, host: foreignHost, start: '1' }));
    await mkdir(foreign);
    // A name Ahma never makes.
    const notes = join(servers, 'notes');
    await mkdir(notes);
    // A link with a dead owner's name, pointing outside: neither removed as a tree nor followed.
    const link = join(servers, ownerName({ ...self, start: '2' }));
    await symlink(outside, link);

    const engine = await createEngine({ scope, stateDir: root, noShellPool: true });
    try {
      const report = await engine.swept;
      expect(report.removed).toEqual([reused]);
      expect(existsSync(reused)).toBe(false);
      expect([existsSync(foreign), existsSync(notes)]).toEqual([true, true]);
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
      expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');
      // The engine's own directories are live, of course.
      expect(existsSync(engine.state.serverDir)).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it('R7.6: a cache directory is emptied by a remover confined to it, so a link there leads nowhere', async () => {
    const engine = await createEngine({ scope, stateDir: root, noShellPool: true });
    try {
      const dir = engine.state.cacheDir;
      const line = engine.sandbox.confine(
        [dir],
        ['/bin/sh', '-c', 'touch "$1/inside" && touch "$2/escaped"', 'sh', dir, outside],
      );
      const ran = spawnSync(line.file, line.args, { encoding: 'utf8' });
      expect(ran.status).not.toBe(0);
      expect(ran.stdout + ran.stderr).toMatch(/Permission denied/);
      expect(existsSync(join(dir, 'inside'))).toBe(true);
      expect(existsSync(join(outside, 'escaped'))).toBe(false);
      // Not even the scope or the temp dir: only the directory named.
      const other = engine.sandbox.confine([dir], ['touch', join(scope, 'x')]);
      const scoped = spawnSync(other.file, other.args);
      expect(scoped.status).not.toBe(0);
      expect(existsSync(join(scope, 'x'))).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it('R7.6: an empty cache directory is removed without a remover; one that holds files gets it', async () => {
    const ran = join(outside, 'remover-ran');
    // Stands for the confined remover: says it ran, and empties the directory it is given.
    const remover = (dir: string) => ({
      file: '/bin/sh',
      args: ['-c', 'echo "$2" >> "$1"; rm -rf -- "$2"', 'sh', ran, dir],
    });
    const empty = join(root, 'empty-cache');
    await mkdir(empty);
    expect(await removeConfined(empty, remover(empty), {})).toBe(true);
    expect(existsSync(empty)).toBe(false);
    expect(existsSync(ran)).toBe(false);

    const written = join(root, 'written-cache');
    await mkdir(join(written, 'go', 'mod'), { recursive: true });
    expect(await removeConfined(written, remover(written), {})).toBe(true);
    expect(existsSync(written)).toBe(false);
    expect(await readFile(ran, 'utf8')).toBe(`${written}\n`);
  });
});
