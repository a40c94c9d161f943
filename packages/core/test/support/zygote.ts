// A driver for the pool zygote of the Linux sandbox helper (`ahma-sandbox --pool N --`,
// native/ahma-sandbox.c), shared by the zygote tests (test/sandbox/zygote-*.test.ts): the wire
// protocol spoken directly, with a tiny frame encoder and decoder; a zygote driven over its pipes;
// what /proc says of its units (warm shells, warm argv units, the template shell); and the hooks
// each of those files registers (useZygoteTests).
//
// Frames have a 9-byte header (type u8 ASCII, id u32 LE, length u32 LE) and `length` payload bytes.
//
// Scopes live under /var/tmp, not /tmp: the server grants /tmp by design, so a write that lands in
// /tmp would prove nothing about the scope.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import {
  buildHelperIfStale,
  childrenOf,
  cmdlineOf,
  commOf,
  helper,
  newMarker as newMarkerWithPrefix,
  sessionOf,
  sleep,
  waitFor,
} from './sandbox-helper.js';

// ---- frames ------------------------------------------------------------------------------------

export interface Frame {
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
export const runPayload = (cwd: string, mode: 'argv' | 'shell', words: readonly string[]) =>
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

export interface RunResult {
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

export class Zygote {
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

export const pool = (size: number, extra: readonly string[] = []) =>
  new Zygote(['--read-all', '--rw', scope, ...extra, '--pool', String(size), '--']);

// ---- processes ---------------------------------------------------------------------------------

export const newMarker = () => newMarkerWithPrefix('ahma-zyg-marker');

/** A zygote's units: its children that lead a session of their own (their supervisors S). */
export const supervisorsOf = (zygotePid: number) =>
  childrenOf(zygotePid).filter((pid) => sessionOf(pid) === pid);

/** The template shell: the zygote's one child that is not a unit (it clones the shell units). */
export const templatesOf = (zygotePid: number) =>
  childrenOf(zygotePid).filter((pid) => sessionOf(pid) !== pid);

/** The template or a copy of it: its command line is the template's `ahma_unit` script. */
export const isTemplateCopy = (pid: number) =>
  cmdlineOf(pid).some((word) => word.includes('ahma_unit'));

/**
 * A zygote's idle units, by what waits below their supervisor S: a warm shell (bash) or, for an
 * argv unit, B, a fork of the helper blocked until its request arrives. Supervisors, sorted.
 */
const idleUnits = (zygotePid: number, comm: 'bash' | 'ahma-sandbox') =>
  childrenOf(zygotePid).filter((supervisor) => {
    const below = childrenOf(supervisor);
    return below.length === 1 && below.every((pid) => commOf(pid) === comm);
  });
export const warmShellUnits = (zygotePid: number) => idleUnits(zygotePid, 'bash');
export const warmArgvUnits = (zygotePid: number) => idleUnits(zygotePid, 'ahma-sandbox');

/** The warm shells of a zygote: bash children of its units' supervisors, sorted. */
export const warmShells = (zygotePid: number) =>
  warmShellUnits(zygotePid)
    .flatMap(childrenOf)
    .sort((a, b) => a - b);

/**
 * Resolves once the zygote keeps size warm shells and size warm argv units, and nothing else but
 * its template shell.
 */
export const poolReady = (zygote: Zygote, size: number, what = `${size} + ${size} warm units`) =>
  waitFor(
    () =>
      warmShellUnits(zygote.pid).length === size &&
      warmArgvUnits(zygote.pid).length === size &&
      supervisorsOf(zygote.pid).length === 2 * size &&
      templatesOf(zygote.pid).length === 1,
    what,
  );

// ---- the hooks of every zygote test file -------------------------------------------------------

/**
 * A fresh scope and a directory outside it, under /var/tmp, for each test (set by
 * useZygoteTests(); an ES module exports the binding, so importers see the current value).
 */
export let scope = '';
export let outside = '';

/**
 * Registers, in the calling describe: the helper built if stale, a fresh scope and outside
 * directory before each test, and after it every zygote of the test ended (stdin EOF, SIGKILL after
 * 5 s) and both directories removed.
 */
export function useZygoteTests(): void {
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
}
