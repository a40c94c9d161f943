// The pool zygote of the Linux sandbox helper (`ahma-sandbox --pool N --`, native/ahma-sandbox.c),
// run for real against the kernel: every command in a unit of its own, taken from the warm units
// kept ready for each mode (a sandboxed shell for a script, a waiting fork of the helper for an
// argv command) or forked on the spot beyond them (SPEC §5, R4.1), the sandbox inherited by every
// unit (R7.2), and supervision: no orphan or zombie survives a command, a kill or the zygote
// (SPEC §3). The /proc helpers are shared with helper.test.ts (../support/sandbox-helper.ts).
//
// The wire protocol is spoken directly here, with a tiny frame encoder and decoder: frames of a
// 9-byte header (type u8 ASCII, id u32 LE, length u32 LE) and `length` payload bytes.
//
// Scopes live under /var/tmp, not /tmp: the server grants /tmp by design, so a write that lands in
// /tmp would prove nothing about the scope.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildHelperIfStale,
  childrenOf,
  cmdlineOf,
  commOf,
  descendantsOf,
  helper,
  isGone,
  newMarker as newMarkerWithPrefix,
  pidsWithMarker,
  processState,
  processTable,
  quote,
  sessionOf,
  sleep,
  waitFor,
} from '../support/sandbox-helper.js';

// ---- frames ------------------------------------------------------------------------------------

interface Frame {
  type: string;
  id: number;
  payload: Buffer;
}

const HEADER = 9;

function encodeFrame(type: string, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(HEADER);
  header.write(type, 0, 1, 'latin1');
  header.writeUInt32LE(id, 1);
  header.writeUInt32LE(payload.length, 5);
  return Buffer.concat([header, payload]);
}

/** cwd NUL mode NUL word NUL ...: every field NUL-terminated. */
const runPayload = (cwd: string, mode: 'argv' | 'shell', words: readonly string[]) =>
  Buffer.concat([cwd, mode, ...words].map((field) => Buffer.from(`${field}\0`, 'utf8')));

class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Frame[] = [];
    while (this.pending.length >= HEADER) {
      const length = this.pending.readUInt32LE(5);
      if (this.pending.length < HEADER + length) break;
      frames.push({
        type: String.fromCharCode(this.pending[0] ?? 0),
        id: this.pending.readUInt32LE(1),
        payload: Buffer.from(this.pending.subarray(HEADER, HEADER + length)),
      });
      this.pending = this.pending.subarray(HEADER + length);
    }
    return frames;
  }
}

// ---- a zygote driven over its pipes -------------------------------------------------------------

interface RunResult {
  /** pid of the unit's supervisor, from the S frame (0 when none came). */
  pid: number;
  output: string;
  /** X: exit code, -1 when signalled; null when the id ended with E. */
  code: number | null;
  signal: number;
  error?: string;
  /** The frame types for this id, in arrival order. */
  types: string[];
}

const zygotes: Zygote[] = [];

class Zygote {
  readonly child: ChildProcess;
  readonly frames: Frame[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private nextId = 1;

  constructor(args: readonly string[], binary = helper) {
    this.child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const { stdin, stdout, stderr } = this.child;
    if (!stdin || !stdout || !stderr) throw new Error('zygote without pipes');
    stdin.on('error', () => {}); // EPIPE after the zygote is gone: the test asserts on frames
    const decoder = new FrameDecoder();
    stdout.on('data', (chunk: Buffer) => {
      this.frames.push(...decoder.push(chunk));
      for (const wake of this.waiters) wake();
    });
    stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
      for (const wake of this.waiters) wake();
    });
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code, signal) => {
        resolve({ code, signal });
        for (const wake of this.waiters) wake();
      });
    });
    zygotes.push(this);
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  send(type: string, id: number, payload?: Buffer): void {
    this.child.stdin?.write(encodeFrame(type, id, payload));
  }

  /** Sends an R frame; returns its id. */
  start(mode: 'argv' | 'shell', words: readonly string[], cwd = scope): number {
    const id = this.nextId++;
    this.send('R', id, runPayload(cwd, mode, words));
    return id;
  }

  kill(id: number, signal: number): void {
    this.send('K', id, Buffer.from([signal]));
  }

  /** Resolves when `condition` holds, re-checked on every frame, stderr chunk and exit. */
  until<T>(condition: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = condition();
        if (value === undefined) return false;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(value);
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`));
      }, timeoutMs);
      if (!check()) this.waiters.add(check);
    });
  }

  frame(type: string, id: number): Promise<Frame> {
    return this.until(
      () => this.frames.find((f) => f.type === type && f.id === id),
      `frame ${type} for id ${id}`,
    );
  }

  async result(id: number): Promise<RunResult> {
    const end = await this.until(
      () => this.frames.find((f) => f.id === id && (f.type === 'X' || f.type === 'E')),
      `X or E for id ${id}`,
    );
    const mine = this.frames.filter((f) => f.id === id);
    const started = mine.find((f) => f.type === 'S');
    return {
      pid: started ? started.payload.readUInt32LE(0) : 0,
      output: Buffer.concat(mine.filter((f) => f.type === 'O').map((f) => f.payload)).toString(
        'utf8',
      ),
      code: end.type === 'X' ? end.payload.readInt32LE(0) : null,
      signal: end.type === 'X' ? end.payload.readInt32LE(4) : 0,
      ...(end.type === 'E' ? { error: end.payload.toString('utf8') } : {}),
      types: mine.map((f) => f.type),
    };
  }

  run(mode: 'argv' | 'shell', words: readonly string[], cwd = scope): Promise<RunResult> {
    return this.result(this.start(mode, words, cwd));
  }

  /** stdin EOF: the zygote shuts down. */
  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin?.end();
    return this.exited;
  }
}

const pool = (size: number, extra: readonly string[] = []) =>
  new Zygote(['--rw', scope, ...extra, '--pool', String(size), '--']);

// ---- processes ---------------------------------------------------------------------------------

const newMarker = () => newMarkerWithPrefix('ahma-zyg-marker');

/** A zygote's units: its children that lead a session of their own (their supervisors S). */
const supervisorsOf = (zygotePid: number) =>
  childrenOf(zygotePid).filter((pid) => sessionOf(pid) === pid);

/** The template shell: the zygote's one child that is not a unit (it clones the shell units). */
const templatesOf = (zygotePid: number) =>
  childrenOf(zygotePid).filter((pid) => sessionOf(pid) !== pid);

/** The template or a copy of it: its command line is the template's `ahma_unit` script. */
const isTemplateCopy = (pid: number) => cmdlineOf(pid).some((word) => word.includes('ahma_unit'));

/**
 * A zygote's idle units, by what waits below their supervisor S: a warm shell (bash) or, for an
 * argv unit, B, a fork of the helper blocked until its request arrives. Supervisors, sorted.
 */
const idleUnits = (zygotePid: number, comm: 'bash' | 'ahma-sandbox') =>
  childrenOf(zygotePid).filter((supervisor) => {
    const below = childrenOf(supervisor);
    return below.length === 1 && below.every((pid) => commOf(pid) === comm);
  });
const warmShellUnits = (zygotePid: number) => idleUnits(zygotePid, 'bash');
const warmArgvUnits = (zygotePid: number) => idleUnits(zygotePid, 'ahma-sandbox');

/** The warm shells of a zygote: bash children of its units' supervisors, sorted. */
const warmShells = (zygotePid: number) =>
  warmShellUnits(zygotePid)
    .flatMap(childrenOf)
    .sort((a, b) => a - b);

/**
 * Resolves once the zygote keeps size warm shells and size warm argv units, and nothing else but
 * its template shell.
 */
const poolReady = (zygote: Zygote, size: number, what = `${size} + ${size} warm units`) =>
  waitFor(
    () =>
      warmShellUnits(zygote.pid).length === size &&
      warmArgvUnits(zygote.pid).length === size &&
      supervisorsOf(zygote.pid).length === 2 * size &&
      templatesOf(zygote.pid).length === 1,
    what,
  );

let scope = '';
let outside = '';

describe.runIf(process.platform === 'linux')('ahma-sandbox --pool (zygote)', () => {
  beforeAll(() => {
    buildHelperIfStale();
  }, 60_000);

  beforeEach(async () => {
    scope = await mkdtemp('/var/tmp/ahma-zyg-');
    outside = await mkdtemp('/var/tmp/ahma-zyg-outside-');
  });

  afterEach(async () => {
    for (const zygote of zygotes.splice(0)) {
      if (zygote.alive) {
        zygote.child.stdin?.end();
        const exited = await Promise.race([zygote.exited.then(() => true), sleep(5_000)]);
        if (!exited) zygote.child.kill('SIGKILL');
      }
    }
    await rm(scope, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  describe('usage', () => {
    it('R4.1: --pool must be 1..64 and takes no command; --shell needs --pool', async () => {
      const usage = (args: readonly string[]) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(helper, args, { stdio: ['ignore', 'pipe', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code) => resolve({ code, stderr }));
        });
      for (const size of ['0', '65', 'x']) {
        const result = await usage(['--rw', scope, '--pool', size, '--']);
        expect(result.code).toBe(125);
        expect(result.stderr).toContain('--pool needs a number of warm shells (1..64)');
      }
      const withCommand = await usage(['--rw', scope, '--pool', '2', '--', 'true']);
      expect(withCommand).toMatchObject({ code: 125 });
      expect(withCommand.stderr).toContain('--pool takes no command');
      expect((await usage(['--shell', '/bin/bash', '--', 'true'])).code).toBe(125);
    });
  });

  describe('running commands', () => {
    it('R4.1: an argv command answers S with the supervisor pid, then its output, then X with exit code 0', async () => {
      const zygote = pool(2);
      const result = await zygote.run('argv', ['printf', '%s|%s\\n', 'a', 'b']);
      expect(result).toMatchObject({ output: 'a|b\n', code: 0, signal: 0 });
      expect(result.pid).toBeGreaterThan(0);
      expect(result.types[0]).toBe('S');
      expect(result.types.at(-1)).toBe('X');
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: shell mode runs a script with pipes and redirects in the requested directory', async () => {
      const zygote = pool(2);
      const result = await zygote.run('shell', [
        'echo hello | tr a-z A-Z > out.txt && cat < out.txt && wc -l < out.txt && pwd',
      ]);
      expect(result).toMatchObject({ output: `HELLO\n1\n${scope}\n`, code: 0 });
      expect(await readFile(join(scope, 'out.txt'), 'utf8')).toBe('HELLO\n');
    });

    it('R4.1: stderr is merged into the output in chronological order', async () => {
      const zygote = pool(1);
      const result = await zygote.run('shell', ['echo a; echo b >&2; echo c; ls /nonexistent-x']);
      expect(result.output).toMatch(/^a\nb\nc\nls: cannot access '\/nonexistent-x'.*\n$/);
      expect(result.code).toBe(2);
    });

    it('R4.1: exit codes pass through; a command killed by a signal reports code -1 and the signal', async () => {
      const zygote = pool(2);
      expect(await zygote.run('shell', ['exit 3'])).toMatchObject({ code: 3, signal: 0 });
      expect(await zygote.run('argv', ['false'])).toMatchObject({ code: 1, signal: 0 });
      expect(await zygote.run('shell', ['echo before; kill -9 $$'])).toMatchObject({
        output: 'before\n',
        code: -1,
        signal: 9,
      });
    });

    it('R4.1: a missing command exits 127, a missing working directory 125', async () => {
      const zygote = pool(1);
      const missing = await zygote.run('argv', ['/nonexistent/ahma-no-such-command']);
      expect(missing.code).toBe(127);
      expect(missing.output).toContain('/nonexistent/ahma-no-such-command');
      const noDir = await zygote.run('argv', ['true'], join(scope, 'missing-dir'));
      expect(noDir.code).toBe(125);
      expect(noDir.output).toContain('No such file or directory');
    });

    it('R4.1: argv mode reports like the one-command mode: 127 not found, 126 not executable, 125 missing cwd', async () => {
      const zygote = pool(1);
      const direct = (args: readonly string[]) =>
        new Promise<{ output: string; code: number | null }>((resolve) => {
          const child = spawn(helper, ['--rw', scope, '--', ...args], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.on('close', (code) => resolve({ output, code }));
        });

      const missing = '/nonexistent/ahma-no-such-command';
      const notFound = await zygote.run('argv', [missing, 'arg']);
      expect(notFound).toMatchObject({
        output: `ahma-sandbox: cannot run ${missing}: No such file or directory\n`,
        code: 127,
        signal: 0,
      });
      expect(await direct([missing, 'arg'])).toEqual({ output: notFound.output, code: 127 });
      const bare = await zygote.run('argv', ['ahma-no-such-command-on-path']);
      expect(bare).toMatchObject({
        output:
          'ahma-sandbox: cannot run ahma-no-such-command-on-path: No such file or directory\n',
        code: 127,
      });

      const notExecutable = join(scope, 'not-executable');
      await writeFile(notExecutable, 'echo never\n', { mode: 0o644 });
      const denied = await zygote.run('argv', [notExecutable]);
      expect(denied).toMatchObject({
        output: `ahma-sandbox: cannot run ${notExecutable}: Permission denied\n`,
        code: 126,
      });
      expect(await direct([notExecutable])).toEqual({ output: denied.output, code: 126 });

      const missingDir = join(scope, 'missing dir');
      expect(await zygote.run('argv', ['true'], missingDir)).toMatchObject({
        output: `ahma-sandbox: cannot change to ${missingDir}: No such file or directory\n`,
        code: 125,
        signal: 0,
      });
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: argv words reach the program itself, a direct child of its supervisor, one word each', async () => {
      const zygote = pool(1);
      const words = ['two words', `it's "quoted"`, '$(id)', '`id`', 'a\nb\n', '', '*', '--', '-e'];
      const script =
        'import json, os, sys; print(json.dumps({"argv": sys.argv[1:], "ppid": os.getppid(), "cwd": os.getcwd()}))';
      const cwd = join(scope, 'sub $(id) dir');
      await mkdir(cwd);
      const result = await zygote.run('argv', ['python3', '-c', script, ...words], cwd);
      expect(result.code).toBe(0);
      // No shell in between: the command's parent is the unit's supervisor (the pid in S).
      expect(JSON.parse(result.output)).toEqual({ argv: words, ppid: result.pid, cwd });
    });

    it('R4.1: no state leaks between commands: cd, variables, exit and background jobs stay in the first', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      const first = await zygote.run('shell', [
        `cd /; export AHMA_LEAK=exported; AHMA_LOCAL=local; (exec -a ${marker} sleep 100) & exit 7`,
      ]);
      expect(first).toMatchObject({ code: 7, signal: 0 });
      expect(pidsWithMarker(marker)).toEqual([]); // the background job went with its unit
      const second = await zygote.run('shell', [
        'printf "%s|%s|%s|%s\\n" "$PWD" "${AHMA_LEAK-unset}" "${AHMA_LOCAL-unset}" "$(jobs | wc -l)"',
      ]);
      expect(second).toMatchObject({ output: `${scope}|unset|unset|0\n`, code: 0 });
      expect(second.pid).not.toBe(first.pid);
      const bootstrapVariables = await zygote.run('shell', ['compgen -v __ahma_ || echo none']);
      expect(bootstrapVariables.output).toBe('none\n');
    });

    it('R4.1: argv words arrive verbatim, exactly one word each (spaces, quotes, $(id), globs, newlines, empty)', async () => {
      const zygote = pool(2);
      const words = [
        'two words',
        `it's "quoted"`,
        '$(id)',
        '`id`',
        '*',
        'line1\nline2\n',
        '',
        '-c',
        '\\back\\slash',
        '$HOME ${PATH}',
        '; rm -rf / #',
        'ünïcødé ✓',
      ];
      const cwd = join(scope, `dir with 'quotes' "and" $(id) \\ and\nnewline`);
      await mkdir(cwd);
      const script = 'import json, os, sys; print(json.dumps([os.getcwd()] + sys.argv[1:]))';
      const result = await zygote.run('argv', ['python3', '-c', script, ...words], cwd);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.output)).toEqual([cwd, ...words]);
    });

    it('R4.1: a shell script arrives verbatim too: quotes, newlines and $(...) are the script text', async () => {
      const zygote = pool(1);
      const script = `x='single "double" $(not run)'\nprintf '%s\\n' "$x" "$(echo sub)"`;
      const result = await zygote.run('shell', [script]);
      expect(result).toMatchObject({ output: 'single "double" $(not run)\nsub\n', code: 0 });
    });

    it('R4.1: a large shell script (256 KiB) and arbitrary non-NUL bytes arrive complete', async () => {
      const zygote = pool(1);
      const filler = Array.from({ length: 4096 }, (_, i) => `: ${String(i).padStart(70, '.')}`);
      const large = `${filler.join('\n')}\necho "end $((6 * 7))"`;
      expect(large.length).toBeGreaterThan(256 * 1024);
      expect(await zygote.run('shell', [large])).toMatchObject({ output: 'end 42\n', code: 0 });

      // Bytes that are not UTF-8, control characters, a lone \r: the script sees them as sent.
      const bytes = Buffer.from([0xff, 0xfe, 0x01, 0x80, 0x0d, 0x7f, 0xc3, 0xa9]);
      const id = 77;
      zygote.send(
        'R',
        id,
        Buffer.concat([
          Buffer.from(`${scope}\0shell\0printf '%s' '`),
          bytes,
          Buffer.from("' | od -An -tx1 | tr -s ' \\n' ' '\0"),
        ]),
      );
      const raw = await zygote.result(id);
      expect(raw).toMatchObject({ output: ' ff fe 01 80 0d 7f c3 a9 ', code: 0 });
    });

    it('R4.1: large output arrives complete, in order, in frames of at most 64 KiB, before X', async () => {
      const zygote = pool(1);
      const id = zygote.start('argv', ['seq', '1', '300000']);
      const result = await zygote.result(id);
      const expected = `${Array.from({ length: 300_000 }, (_, i) => i + 1).join('\n')}\n`;
      expect(result.code).toBe(0);
      expect(result.output.length).toBe(expected.length);
      expect(result.output === expected).toBe(true);
      const sizes = zygote.frames.filter((f) => f.id === id && f.type === 'O');
      expect(Math.max(...sizes.map((f) => f.payload.length))).toBeLessThanOrEqual(65_536);
      expect(result.types.indexOf('X')).toBe(result.types.length - 1);
    });

    it('R4.1: backpressure: while the server does not read, the zygote waits; then all output and X arrive', async () => {
      // The command finishes (and its supervisor exits) while the zygote is blocked writing a
      // frame: the exit must still be noticed once the server reads again.
      const zygote = pool(1);
      for (const size of [200_000, 250_000, 300_000]) {
        zygote.child.stdout?.pause();
        const id = zygote.start('shell', [`head -c ${size} /dev/zero | tr '\\0' x`]);
        await sleep(300);
        zygote.child.stdout?.resume();
        const result = await zygote.result(id);
        expect(result).toMatchObject({ code: 0, signal: 0 });
        expect(result.output).toBe('x'.repeat(size));
      }
    });
  });

  describe('the pool', () => {
    it('R4.1: 20 sequential commands all answer, each in a fresh unit, and the pool is refilled', async () => {
      const zygote = pool(2);
      const pids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const result = await zygote.run('shell', [`echo ${i}`]);
        expect(result).toMatchObject({ output: `${i}\n`, code: 0 });
        pids.push(result.pid);
      }
      expect(new Set(pids).size).toBe(20);
      // Idle again: exactly the pool's units (their supervisors) are the zygote's children.
      await poolReady(zygote, 2);
      for (const pid of pids) expect(isGone(pid), `supervisor ${pid}`).toBe(true);
    });

    it('R4.1: a burst of 10 concurrent commands with --pool 2 all complete (cold units beyond the pool)', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const started = Date.now();
      const ids = Array.from({ length: 10 }, (_, i) =>
        zygote.start('shell', [`sleep 0.4; echo ${i}`]),
      );
      const results = await Promise.all(ids.map((id) => zygote.result(id)));
      const elapsed = Date.now() - started;
      results.forEach((result, i) => expect(result).toMatchObject({ output: `${i}\n`, code: 0 }));
      expect(new Set(results.map((r) => r.pid)).size).toBe(10);
      expect(elapsed).toBeLessThan(3_000); // they ran side by side, not one after another
    });

    it('R4.1: a unit that dies while idle is replaced, its shell swept; after 3 deaths in a row only the next request retries', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const [victim] = warmShellUnits(zygote.pid);
      if (victim === undefined) throw new Error('no warm unit');
      const shell = childrenOf(victim);
      expect(shell).toHaveLength(1);
      process.kill(victim, 'SIGKILL');
      await waitFor(
        () => !childrenOf(zygote.pid).includes(victim) && warmShellUnits(zygote.pid).length === 2,
        'a replacement unit',
      );
      for (const pid of [victim, ...shell]) await waitFor(() => isGone(pid), `pid ${pid} gone`);
      expect(await zygote.run('argv', ['echo', 'ok'])).toMatchObject({ output: 'ok\n', code: 0 });

      // A "shell" that exits at once: every warm unit dies while idle.
      const failing = pool(1, ['--shell', '/bin/false']);
      const deaths = () => failing.stderr.match(/died while idle/g)?.length ?? 0;
      await failing.until(() => (deaths() >= 3 ? true : undefined), 'three idle deaths');
      await sleep(300);
      expect(deaths()).toBe(3);
      // An argv command needs no warm shell: a warm argv unit runs it, and no shell is retried.
      expect(await failing.run('argv', ['true'])).toMatchObject({ code: 0, signal: 0 });
      await sleep(300);
      expect(deaths()).toBe(3);
      // A shell script runs in a cold unit (whose "shell" exits 1), and the pool is tried again.
      expect(await failing.run('shell', ['true'])).toMatchObject({ code: 1, signal: 0 });
      await failing.until(() => (deaths() >= 6 ? true : undefined), 'three more idle deaths');
      await sleep(300);
      expect(deaths()).toBe(6);
      expect(failing.alive).toBe(true);
    });

    it('R4.1: malformed or duplicate requests are answered with E; K for an unknown id is ignored', async () => {
      const zygote = pool(1);
      zygote.send('R', 900, Buffer.from('no terminating nul'));
      expect((await zygote.frame('E', 900)).payload.toString()).toContain('malformed');
      zygote.send('R', 901, runPayload(scope, 'argv', []));
      expect((await zygote.frame('E', 901)).payload.toString()).toContain('malformed');
      zygote.send('R', 902, Buffer.from(`${scope}\0bogus\0x\0`));
      expect((await zygote.frame('E', 902)).payload.toString()).toContain('argv or shell');
      zygote.send('R', 903, runPayload(scope, 'shell', ['echo a', 'echo b']));
      expect((await zygote.frame('E', 903)).payload.toString()).toContain('exactly one word');
      zygote.kill(12345, 15);
      zygote.send('Z', 904, Buffer.from('unknown type'));

      zygote.send('R', 905, runPayload(scope, 'shell', ['sleep 0.3; echo first']));
      await zygote.frame('S', 905);
      zygote.send('R', 905, runPayload(scope, 'shell', ['echo second']));
      expect((await zygote.frame('E', 905)).payload.toString()).toContain('duplicate id');
      const exit = await zygote.frame('X', 905);
      expect(exit.payload.readInt32LE(0)).toBe(0);
      const output = zygote.frames.filter((f) => f.id === 905 && f.type === 'O');
      expect(Buffer.concat(output.map((f) => f.payload)).toString()).toBe('first\n');
      expect(zygote.frames.filter((f) => f.id === 905 && f.type === 'S')).toHaveLength(1);
      expect(await zygote.run('argv', ['echo', 'still fine'])).toMatchObject({ code: 0 });
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: warm argv units are ready before any request: N supervisors with a waiting child each, besides the N warm shells', async () => {
      const zygote = pool(3);
      await poolReady(zygote, 3, 'three warm shells and three warm argv units');
      // Nothing but the units below the zygote, each a supervisor (session leader) with one child,
      // and the template shell. A shell unit's supervisor is a copy of the template, an argv
      // unit's a fork of the helper.
      const supervisors = supervisorsOf(zygote.pid);
      expect(supervisors).toHaveLength(6);
      expect(childrenOf(zygote.pid)).toHaveLength(7);
      for (const supervisor of supervisors) expect(childrenOf(supervisor)).toHaveLength(1);
      expect(warmShellUnits(zygote.pid).every(isTemplateCopy)).toBe(true);
      for (const supervisor of warmArgvUnits(zygote.pid))
        expect(commOf(supervisor)).toBe('ahma-sandbox');
      // An argv unit's B blocks in read(2) until the zygote hands it a request.
      for (const supervisor of warmArgvUnits(zygote.pid)) {
        const [waiting] = childrenOf(supervisor);
        expect(waiting === undefined ? undefined : processState(waiting)).toBe('S');
      }
      expect(zygote.frames).toEqual([]);
    });

    it('R4.1: an argv request is served by a warm argv unit alive before it, which is then replaced', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const shells = warmShells(zygote.pid);
      const served: number[] = [];
      for (let i = 0; i < 5; i++) {
        const warm = warmArgvUnits(zygote.pid);
        expect(warm).toHaveLength(2);
        const result = await zygote.run('argv', ['echo', `${i}`]);
        expect(result).toMatchObject({ output: `${i}\n`, code: 0, signal: 0 });
        expect(warm).toContain(result.pid); // the oldest warm unit, not one forked for it
        served.push(result.pid);
        await waitFor(() => isGone(result.pid), `supervisor ${result.pid} gone`);
        await waitFor(
          () => warmArgvUnits(zygote.pid).filter((pid) => !warm.includes(pid)).length === 1,
          'a replacement argv unit',
        );
        await poolReady(zygote, 2);
      }
      expect(new Set(served).size).toBe(5);
      // The warm shells were neither consumed nor replaced by the argv commands.
      expect(warmShells(zygote.pid)).toEqual(shells);
    });

    it('R4.1: argv commands get a unit each (distinct supervisors), warm or forked on the spot beyond the pool', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const warm = warmArgvUnits(zygote.pid);
      const shellUnits = warmShellUnits(zygote.pid);
      const shells = warmShells(zygote.pid);

      const sequential: RunResult[] = [];
      for (let i = 0; i < 10; i++) sequential.push(await zygote.run('argv', ['echo', `${i}`]));
      const burst = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          zygote.run('argv', ['sh', '-c', `sleep 0.2; echo ${i}`]),
        ),
      );
      [...sequential, ...burst].forEach((result, i) =>
        expect(result).toMatchObject({ output: `${i % 10}\n`, code: 0, signal: 0 }),
      );
      const supervisors = [...sequential, ...burst].map((result) => result.pid);
      expect(new Set(supervisors).size).toBe(20);
      expect(supervisors.slice(0, 2)).toEqual(warm);
      for (const pid of supervisors) {
        expect(shellUnits).not.toContain(pid);
        await waitFor(() => isGone(pid), `supervisor ${pid} gone`);
      }
      // The same warm shells, still waiting: no argv command consumed or replaced one.
      await poolReady(zygote, 2);
      expect(warmShellUnits(zygote.pid)).toEqual(shellUnits);
      expect(warmShells(zygote.pid)).toEqual(shells);

      // A shell script still takes a warm shell unit (the oldest), and the pool is refilled.
      const script = await zygote.run('shell', ['echo from a warm shell']);
      expect(script).toMatchObject({ output: 'from a warm shell\n', code: 0 });
      expect(script.pid).toBe(shellUnits[0]);
      await poolReady(zygote, 2, 'the pool refilled');
    });

    it('R4.1: an idle argv unit killed from outside is replaced, its waiting child swept; after 3 deaths in a row only the next argv request retries', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      // SIGKILL to the supervisor: B re-parents to the zygote, which sweeps it.
      const [victim] = warmArgvUnits(zygote.pid);
      if (victim === undefined) throw new Error('no warm argv unit');
      const [waiting] = childrenOf(victim);
      if (waiting === undefined) throw new Error('no waiting child');
      process.kill(victim, 'SIGKILL');
      await waitFor(
        () => !childrenOf(zygote.pid).includes(victim) && warmArgvUnits(zygote.pid).length === 2,
        'a replacement argv unit',
      );
      for (const pid of [victim, waiting]) await waitFor(() => isGone(pid), `pid ${pid} gone`);
      // SIGTERM to the waiting child: its supervisor ends with it, and is replaced as well.
      const [second] = warmArgvUnits(zygote.pid);
      const [secondChild] = second === undefined ? [] : childrenOf(second);
      if (second === undefined || secondChild === undefined) throw new Error('no warm argv unit');
      process.kill(secondChild, 'SIGTERM');
      await waitFor(
        () => !childrenOf(zygote.pid).includes(second) && warmArgvUnits(zygote.pid).length === 2,
        'another replacement argv unit',
      );
      await waitFor(() => isGone(second) && isGone(secondChild), 'the second unit gone');
      for (const signal of [9, 15]) {
        const death = new RegExp(
          `a warm argv unit \\(pid \\d+\\) died while idle: signal ${signal}\n`,
        );
        await zygote.until(() => (death.test(zygote.stderr) ? true : undefined), `death ${signal}`);
      }
      expect(await zygote.run('argv', ['echo', 'ok'])).toMatchObject({ output: 'ok\n', code: 0 });

      // The same anti-spin rule as for warm shells: after 3 idle deaths in a row, no more.
      const small = pool(1);
      await poolReady(small, 1);
      const deaths = () => small.stderr.match(/warm argv unit .* died while idle/g)?.length ?? 0;
      for (let i = 1; i <= 3; i++) {
        const [unit] = warmArgvUnits(small.pid);
        if (unit === undefined) throw new Error('no warm argv unit');
        process.kill(unit, 'SIGKILL');
        await small.until(() => (deaths() >= i ? true : undefined), `idle death ${i}`);
        if (i < 3) await poolReady(small, 1, `replacement ${i}`);
      }
      await sleep(300);
      expect(deaths()).toBe(3);
      expect(warmArgvUnits(small.pid)).toEqual([]);
      expect(warmShellUnits(small.pid)).toHaveLength(1);
      // An argv request runs in a unit forked on the spot, and the argv units are kept again.
      expect(await small.run('argv', ['echo', 'cold'])).toMatchObject({
        output: 'cold\n',
        code: 0,
      });
      await poolReady(small, 1, 'the argv unit back');
      expect(small.alive).toBe(true);
    });
  });

  describe('kill and shutdown (SPEC §3: no orphan survives)', () => {
    const treeScript = (marker: string) =>
      `setsid -f bash -c ${quote(`exec -a ${marker}-daemon sleep 100`)}
       (exec -a ${marker}-job sleep 100) &
       exec -a ${marker}-main sleep 100`;

    it('R4.1: K with SIGTERM ends the command and its setsid grandchild; X reports SIGTERM; no zombie', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      const id = zygote.start('shell', [treeScript(marker)]);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      zygote.kill(id, 15);
      const result = await zygote.result(id);
      expect(result).toMatchObject({ code: -1, signal: 15 });
      expect(pidsWithMarker(marker)).toEqual([]);
      for (const pid of [...pids, result.pid]) expect(isGone(pid), `pid ${pid}`).toBe(true);
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: K with SIGTERM on an argv `sleep 100` with a setsid grandchild leaves nothing behind', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      // argv mode: bash is just the program here; it starts the daemon, then becomes `sleep 100`.
      const id = zygote.start('argv', ['bash', '-c', treeScript(marker)]);
      const started = await zygote.frame('S', id);
      const supervisor = started.payload.readUInt32LE(0);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      // No shell in between: the command (bash, exec'd into `sleep`) is its supervisor's child.
      const [main] = pidsWithMarker(`${marker}-main`);
      expect(main === undefined ? undefined : processTable().get(main)).toBe(supervisor);
      zygote.kill(id, 15);
      const result = await zygote.result(id);
      expect(result).toMatchObject({ pid: supervisor, code: -1, signal: 15 });
      expect(pidsWithMarker(marker)).toEqual([]);
      for (const pid of [...pids, supervisor]) expect(isGone(pid), `pid ${pid}`).toBe(true);
      expect(await zygote.run('argv', ['echo', 'next'])).toMatchObject({ output: 'next\n' });
    });

    it('R4.1: K with SIGKILL on the supervisor still leaves nothing behind (the zygote sweeps orphans)', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      const id = zygote.start('shell', [treeScript(marker)]);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      zygote.kill(id, 9);
      const result = await zygote.result(id);
      expect(result).toMatchObject({ code: -1, signal: 9 });
      await waitFor(() => pids.every(isGone), 'the orphaned tree to be gone');
      expect(pidsWithMarker(marker)).toEqual([]);
      expect(await zygote.run('argv', ['echo', 'next'])).toMatchObject({ output: 'next\n' });
    });

    it('R4.1: stdin EOF shuts the zygote down: busy and warm units end, no process of its tree survives', async () => {
      const zygote = pool(3);
      const marker = newMarker();
      const id = zygote.start('shell', [treeScript(marker)]);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      await waitFor(
        () =>
          supervisorsOf(zygote.pid).length === 7 &&
          warmShellUnits(zygote.pid).length === 3 &&
          warmArgvUnits(zygote.pid).length === 3,
        'three warm shells, three warm argv units and a busy unit',
      );
      const tree = descendantsOf(zygote.pid);
      // 6 idle units (supervisor + shell or waiting child) + the busy unit's supervisor, shell and
      // job (the setsid daemon re-parented to the busy supervisor, still below the zygote).
      expect(tree.length).toBeGreaterThanOrEqual(6 * 2 + 4);
      for (const pid of pidsWithMarker(marker)) expect(tree).toContain(pid);

      expect(await zygote.close()).toEqual({ code: 0, signal: null });
      expect(await zygote.result(id)).toMatchObject({ code: -1, signal: 15 });
      for (const pid of tree) expect(isGone(pid), `pid ${pid}`).toBe(true);
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it('R4.1: SIGTERM to the zygote shuts it down the same way, exit 0', async () => {
      const zygote = pool(2);
      const marker = newMarker();
      zygote.start('shell', [`exec -a ${marker} sleep 100`]);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the marked process');
      await waitFor(
        () => supervisorsOf(zygote.pid).length === 5 && warmArgvUnits(zygote.pid).length === 2,
        'four warm units and a busy one',
      );
      const tree = descendantsOf(zygote.pid);
      zygote.child.kill('SIGTERM');
      expect(await zygote.exited).toEqual({ code: 0, signal: null });
      for (const pid of tree) expect(isGone(pid), `pid ${pid}`).toBe(true);
    });

    it("R4.1: when the zygote's parent dies (PDEATHSIG), the zygote ends every unit and exits", async () => {
      // bash holds the zygote, whose stdin stays open (our pipe), so only PDEATHSIG can end it.
      const parent = spawn(
        'bash',
        ['-c', `exec 3<&0; ${quote(helper)} --rw ${quote(scope)} --pool 2 -- <&3 3<&- & wait`],
        { stdio: ['pipe', 'ignore', 'ignore'] },
      );
      try {
        const parentPid = parent.pid ?? 0;
        // The zygote, two warm shell units and two warm argv units (supervisor and child each),
        // and the template shell.
        await waitFor(() => descendantsOf(parentPid).length === 10, 'zygote and four warm units');
        const [zygotePid] = childrenOf(parentPid);
        const units = descendantsOf(parentPid).filter((pid) => pid !== zygotePid);
        expect(units).toHaveLength(9);
        parent.kill('SIGKILL');
        await waitFor(() => units.every(isGone), 'every unit to be gone');
        // The zygote itself exits; reaping it is up to whoever inherited it (pid 1 here).
        await waitFor(
          () => zygotePid === undefined || isGone(zygotePid) || processState(zygotePid) === 'Z',
          'the zygote to exit',
        );
      } finally {
        parent.kill('SIGKILL');
        parent.stdin?.destroy();
      }
    });
  });

  describe('the template shell', () => {
    // What a shell command sees of its own shell, one line: $$ $BASHPID $PPID $# $SECONDS $RANDOM,
    // the parent of $PPID (the supervisor's parent), and whether this bash is a template copy.
    const introspect =
      'echo "$$ $BASHPID $PPID $# $SECONDS $RANDOM $(cut -d" " -f4 /proc/$PPID/stat)"; ' +
      'if grep -q ahma_unit /proc/$$/cmdline; then echo 1; else echo 0; fi';

    const parse = (output: string) => {
      const [line = '', copies = ''] = output.split('\n');
      const [pid, bashPid, ppid, argc, seconds, random, grandparent] = line.split(' ').map(Number);
      return { pid, bashPid, ppid, argc, seconds, random, grandparent, copy: copies === '1' };
    };

    it('R4.1: shell units are copies of one template bash (no bash start-up per command), with $$, $PPID, $#, SECONDS and RANDOM their own', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const [template] = templatesOf(zygote.pid);
      expect(template === undefined ? false : isTemplateCopy(template)).toBe(true);
      await sleep(2_500); // the template's own SECONDS is now ≥ 2: a copy must not count from it
      // Three warm units and a few forked on the spot beyond the pool.
      const results = await Promise.all(
        Array.from({ length: 5 }, () => zygote.run('shell', [`sleep 1.1; ${introspect}`])),
      );
      const seen = results.map((result) => ({ ...parse(result.output), supervisor: result.pid }));
      for (const each of seen) {
        expect(each).toMatchObject({
          copy: true,
          bashPid: each.pid, // $$ is the unit's own bash, not the template
          ppid: each.supervisor, // $PPID is its supervisor S...
          grandparent: zygote.pid, // ...which is the zygote's child (cloned with CLONE_PARENT)
          argc: 0, // the template's own arguments (the builtin's path) are gone
        });
        // Counted from the command's start (1.1 s ago, whole seconds), not from the template's.
        expect(each.seconds).toBeGreaterThanOrEqual(1);
        expect(each.seconds).toBeLessThanOrEqual(2);
      }
      expect(new Set(seen.map((each) => each.pid)).size).toBe(5);
      expect(new Set(seen.map((each) => each.random)).size).toBeGreaterThan(1);
      expect(templatesOf(zygote.pid)).toEqual([template]); // one template serves them all
    });

    it("R4.1: a template copy's bash handles signals like a fresh bash: same blocked and ignored sets, traps work", async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      // Read by bash itself (no child: a fork would catch bash with signals blocked around it).
      const signals =
        'while IFS= read -r l; do case $l in SigBlk:*|SigIgn:*) echo "$l";; esac; done </proc/$$/status';
      const result = await zygote.run('shell', [
        `${introspect}; ${signals}; echo fresh; bash --noprofile --norc -c ${quote(`${signals}; true`)}; ` +
          "trap 'echo trapped; exit 3' TERM; kill -TERM $$; echo not reached",
      ]);
      expect(parse(result.output).copy).toBe(true);
      const [, copy = '', fresh = ''] =
        /\n(Sig[^]*?)fresh\n(Sig[^]*?)trapped\n/.exec(result.output) ?? [];
      expect(copy).toMatch(/^SigBlk:.*\nSigIgn:.*\n$/);
      expect(copy).toBe(fresh);
      expect(result.output).not.toContain('not reached');
      expect(result).toMatchObject({ code: 3, signal: 0 });
    });

    it('R4.1: without ahma-unit.so beside the helper, every shell unit starts a bash of its own, with the same behaviour', async () => {
      const dir = await mkdtemp('/var/tmp/ahma-zyg-bin-');
      try {
        const lone = join(dir, 'ahma-sandbox');
        await copyFile(helper, lone);
        await chmod(lone, 0o755);
        const zygote = new Zygote(['--rw', scope, '--pool', '2', '--'], lone);
        await waitFor(() => warmShellUnits(zygote.pid).length === 2, 'two warm shells');
        expect(templatesOf(zygote.pid)).toEqual([]);
        const result = await zygote.run('shell', [introspect]);
        expect({ ...parse(result.output), supervisor: result.pid }).toMatchObject({
          copy: false,
          bashPid: parse(result.output).pid,
          ppid: result.pid,
          grandparent: zygote.pid,
          argc: 0,
        });
        expect(parse(result.output).seconds).toBeLessThanOrEqual(1);
        // A script's errors name the same line either way.
        const failing = 'true\n(( 1 / 0 ))';
        const classic = await zygote.run('shell', [failing]);
        const copied = await pool(1).run('shell', [failing]);
        expect(classic.output).toMatch(/line \d+: .*division by 0/);
        expect(copied.output).toBe(classic.output);
        expect(zygote.stderr).toBe('');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('R4.1: when the template shell dies, the zygote says so and starts a bash per shell unit from then on', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const [template] = templatesOf(zygote.pid);
      if (template === undefined) throw new Error('no template shell');
      process.kill(template, 'SIGKILL');
      await zygote.until(
        () => (/template shell/.test(zygote.stderr) ? true : undefined),
        'the message about the template',
      );
      await waitFor(() => isGone(template), 'the template reaped');
      // The warm copy made before its death still serves; the units after it are classic.
      const results = await Promise.all(
        Array.from({ length: 4 }, () => zygote.run('shell', [introspect])),
      );
      for (const result of results) expect(result).toMatchObject({ code: 0, signal: 0 });
      expect(results.filter((result) => !parse(result.output).copy).length).toBeGreaterThanOrEqual(
        3,
      );
      await waitFor(() => warmShellUnits(zygote.pid).length === 1, 'a classic warm shell');
      expect(warmShellUnits(zygote.pid).some(isTemplateCopy)).toBe(false);
      expect(templatesOf(zygote.pid)).toEqual([]);
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: a stopped template costs one short wait, then shell units start a bash each; nothing strays', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const [template] = templatesOf(zygote.pid);
      if (template === undefined) throw new Error('no template shell');
      process.kill(template, 'SIGSTOP');
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 3 }, (_, i) => zygote.run('shell', [`echo ${String(i)}`])),
      );
      results.forEach((result, i) =>
        expect(result).toMatchObject({ output: `${String(i)}\n`, code: 0 }),
      );
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(zygote.stderr).toContain('did not answer');
      await waitFor(() => isGone(template), 'the stopped template killed and reaped');
      // Every unit the zygote knows answers K; no unit it does not know is left.
      const marker = newMarker();
      const id = zygote.start('shell', [`exec -a ${marker} sleep 30`]);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the marked sleep');
      zygote.kill(id, 15);
      expect(await zygote.result(id)).toMatchObject({ code: -1, signal: 15 });
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it("R4.1: a copy's supervisor dies from a K frame's signal like any supervisor; `ahma_unit` is the template's alone", async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const id = zygote.start('shell', ['sleep 5; echo late']);
      const supervisor = (await zygote.frame('S', id)).payload.readUInt32LE(0);
      expect(isTemplateCopy(supervisor)).toBe(true);
      expect(commOf(supervisor)).toBe('ahma-sandbox');
      zygote.kill(id, 10); // SIGUSR1
      expect(await zygote.result(id)).toMatchObject({ code: -1, signal: 10, output: '' });
      // Even a signal the template's bash ignores (SIGQUIT).
      const quit = zygote.start('shell', ['sleep 5; echo late']);
      await zygote.frame('S', quit);
      zygote.kill(quit, 3);
      expect(await zygote.result(quit)).toMatchObject({ code: -1, signal: 3, output: '' });

      const again = await zygote.run('shell', ['ahma_unit 3 0 -1; echo "status $?"']);
      expect(again.output).toContain('only the template shell serves the pool');
      expect(again.output).toMatch(/status [1-9]\d*\n$/);
    });

    it('R7.2: the template shell and its copies are sandboxed like every unit', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const target = join(outside, 'escaped');
      const result = await zygote.run('shell', [`${introspect}; echo x > ${quote(target)}`]);
      expect(parse(result.output).copy).toBe(true);
      expect(result.output).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      const [template] = templatesOf(zygote.pid);
      const status = await readFile(`/proc/${String(template)}/status`, 'utf8');
      expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(status).toMatch(/^Seccomp:\s+2$/m);
    });
  });

  describe('sandbox', () => {
    it('R7.2: every unit inherits the sandbox: a write outside --rw fails, inside works, AF_UNIX is refused', async () => {
      const zygote = pool(2);
      const target = join(outside, 'escaped');
      const result = await zygote.run('shell', [
        `echo x > ${quote(target)}; echo inside > ${quote(join(scope, 'inside'))}`,
      ]);
      expect(result.output).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      expect(await readFile(join(scope, 'inside'), 'utf8')).toBe('inside\n');
      // The same in a cold unit forked on the spot, and in a grandchild of a warm one.
      const burst = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          zygote.run('shell', [`(echo x > ${quote(`${target}-${i}`)}) 2>&1 | cat`]),
        ),
      );
      for (const each of burst) expect(each.output).toContain('Permission denied');
      const socket = await zygote.run('argv', [
        'python3',
        '-c',
        'import socket\ntry:\n  socket.socket(socket.AF_UNIX)\n  print("allowed")\nexcept OSError as e:\n  print(e.errno)',
      ]);
      expect(socket.output).toBe('13\n'); // EACCES from the seccomp filter
    });

    it('R7.6: each command has a Landlock domain of its own: it cannot signal or ptrace the zygote, its supervisor or another command', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const marker = newMarker();
      const victimId = zygote.start('shell', [`exec -a ${marker} sleep 30`]);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the victim command');
      const [victim] = pidsWithMarker(marker);
      if (victim === undefined) throw new Error('no victim');
      const [victimSupervisor] = descendantsOf(zygote.pid).filter((pid) =>
        childrenOf(pid).includes(victim),
      );
      const targets = [zygote.pid, victimSupervisor ?? 0, victim];
      const attacker = await zygote.run('shell', [
        `for pid in $PPID ${targets.join(' ')}; do kill -STOP $pid 2>/dev/null; echo "kill:$?"; done; ` +
          `python3 -c 'import ctypes; libc=ctypes.CDLL(None,use_errno=True); ` +
          `print("ptrace", libc.ptrace(16, ${String(victim)}, 0, 0), ctypes.get_errno())'`,
      ]);
      expect(attacker.output).toBe('kill:1\nkill:1\nkill:1\nkill:1\nptrace -1 1\n');
      for (const pid of targets) expect(processState(pid)).not.toBe('T');
      // The victim still ends normally when its own command is stopped through the zygote.
      zygote.kill(victimId, 15);
      expect(await zygote.result(victimId)).toMatchObject({ signal: 15 });
    });

    it('R7.1: with --scope, a working directory that is not inside the scope (a directory swapped for a link) is refused, in both kinds of unit', async () => {
      const zygote = new Zygote(['--rw', scope, '--scope', scope, '--pool', '1', '--']);
      const link = join(scope, 'swapped');
      await symlink(outside, link);
      for (const [mode, words] of [
        ['argv', ['touch', 'ran-argv']],
        ['shell', ['touch ran-shell']],
      ] as const) {
        const refused = await zygote.run(mode, words, link);
        expect(refused.code).toBe(125);
        expect(refused.output).toContain(`is not inside the scope ${scope}`);
        const inside = await zygote.run(mode, mode === 'argv' ? ['pwd'] : ['pwd; echo "$#"']);
        expect(inside.output).toBe(mode === 'argv' ? `${scope}\n` : `${scope}\n0\n`);
      }
      expect(existsSync(join(outside, 'ran-argv'))).toBe(false);
      expect(existsSync(join(outside, 'ran-shell'))).toBe(false);
    });

    it('R7.2: argv units, warm or forked on the spot, are sandboxed too: a write outside --rw fails, inside works', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const warm = warmArgvUnits(zygote.pid);
      const target = join(outside, 'escaped');
      const denied = await zygote.run('argv', ['touch', target]);
      expect(denied.code).toBe(1);
      expect(denied.output).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      expect(warm).toEqual([denied.pid]);
      // A burst beyond the pool: the units forked on the spot are confined the same way.
      const burst = await Promise.all(
        [0, 1, 2].map((i) =>
          zygote.run('argv', ['sh', '-c', `sleep 0.1; touch ${quote(`${target}-${i}`)}`]),
        ),
      );
      for (const each of burst) {
        expect(each.code).toBe(1);
        expect(each.output).toContain('Permission denied');
      }
      for (const i of [0, 1, 2]) expect(existsSync(`${target}-${i}`)).toBe(false);
      const python = await zygote.run('argv', [
        'python3',
        '-c',
        `import sys\ntry:\n  open(sys.argv[1], "w")\nexcept OSError as e:\n  print(e.errno)`,
        join(outside, 'escaped-too'),
      ]);
      expect(python.output).toBe('13\n');
      const inside = join(scope, 'inside');
      expect(await zygote.run('argv', ['touch', inside])).toMatchObject({ output: '', code: 0 });
      expect(existsSync(inside)).toBe(true);
    });
  });
});
