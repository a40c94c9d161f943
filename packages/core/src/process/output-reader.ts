// R15.3: reading the whole of an operation's output, a window at a time (the `output` tool). The
// source is a full-output log (output.ts streams a command's output to one once it outgrows what a
// result keeps) or bytes in memory (a result that was not cut, or what a running command's
// collector holds). Every read is bounded: a byte window reads only the window (a positioned
// read), `tail` reads backwards in blocks and stops at its line count or byte cap, and a search
// streams the source a block at a time in a worker thread whose time is bounded.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { AhmaError } from '../errors.js';
import { stripAnsi, wholeCharactersAfter, wholeCharactersBefore } from './output.js';

/** Where an output is read from: a log file (it may still grow), or bytes in memory. */
export type OutputSource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'bytes'; readonly bytes: Buffer };

/** What a running command's output can be read from now (Executor.liveOutput). */
export interface LiveOutput {
  /** The name it runs under: an operation id, or `<id>-stepN` for a sequence's step. */
  readonly logName: string;
  /** The log holding the whole output so far, once there is one. */
  readonly logPath: string | undefined;
  /** The raw bytes kept in memory: the whole output while they add up to `totalBytes`. */
  readonly head: Buffer;
  readonly tail: Buffer;
  readonly totalBytes: number;
}

/**
 * Where to read a running command's output: its log once it has one, else the bytes kept in
 * memory (`complete`: they are all of it; else head and tail with a line saying what is missing).
 */
export function liveSource(live: LiveOutput): {
  readonly source: OutputSource;
  readonly complete: boolean;
} {
  if (live.logPath !== undefined)
    return { source: { kind: 'file', path: live.logPath }, complete: true };
  const missing = live.totalBytes - live.head.length - live.tail.length;
  if (missing <= 0) {
    return {
      source: { kind: 'bytes', bytes: Buffer.concat([live.head, live.tail]) },
      complete: true,
    };
  }
  const note = Buffer.from(`\n[… ${String(missing)} bytes not kept: no log holds them …]\n`);
  return {
    source: { kind: 'bytes', bytes: Buffer.concat([live.head, note, live.tail]) },
    complete: false,
  };
}

/** A byte window's default size: about 2,000 tokens. */
export const OUTPUT_WINDOW_DEFAULT_BYTES = 8000;
/**
 * The most one read returns (a byte window, the lines of `tail`, a search's lines): about 8,000
 * tokens, well under the 25,000-token result limit of the strictest client.
 */
export const OUTPUT_WINDOW_MAX_BYTES = 32_000;
/** The most lines `tail` asks for. */
export const OUTPUT_TAIL_MAX_LINES = 2000;
/** The longest search pattern taken. */
export const GREP_MAX_PATTERN_CHARS = 1000;
export const GREP_DEFAULT_MATCHES = 100;
export const GREP_MAX_MATCHES = 1000;
export const GREP_MAX_CONTEXT = 10;
/** How long the pattern may take on one line before the search is refused as too slow. */
export const GREP_STALL_MS = 2000;
/** How long a whole search may take; past it, the lines searched so far are answered. */
export const GREP_TIME_LIMIT_MS = 20_000;

/** Lines shown longer than this are cut to it (around the match, for a matching line). */
const LINE_SHOW_CHARS = 1000;
/** A line longer than this is searched in pieces of this size, under the same line number. */
const LINE_MAX_BYTES = 1024 * 1024;
/** The block size of backward reads. */
const BLOCK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export interface ByteWindow {
  /** The window's text: whole UTF-8 characters, terminal escapes removed. */
  readonly text: string;
  /** Byte offsets of the window in the raw output: [start, end). */
  readonly start: number;
  readonly end: number;
  /** The output's size now (a running command's log keeps growing). */
  readonly totalBytes: number;
}

export interface TailWindow extends ByteWindow {
  /** Lines returned (fewer than asked when the output has fewer, or the byte cap was reached). */
  readonly lines: number;
  /** The first returned line's number, when the window reaches the start of the output. */
  readonly firstLine: number | undefined;
  /** The byte cap stopped it before it had the lines asked for. */
  readonly capped: boolean;
}

export interface GrepOptions {
  /** A JavaScript regular expression, without delimiters or flags. */
  readonly pattern: string;
  /** Lines shown before and after each match (0..10). */
  readonly context?: number;
  /** Matches shown at most (all are counted). */
  readonly maxMatches?: number;
  /** The most bytes of lines shown. */
  readonly maxBytes?: number;
  readonly stallMs?: number;
  readonly timeLimitMs?: number;
}

export interface GrepResult {
  /** `N:line` for a matching line, `N-line` for context, `--` between groups (with context). */
  readonly text: string;
  /** Matching lines in what was searched. */
  readonly matches: number;
  /** Matching lines shown (at most maxMatches, fewer when the byte bound was reached). */
  readonly shown: number;
  readonly linesSearched: number;
  readonly bytesSearched: number;
  /** The whole source was searched (false: the time limit stopped it). */
  readonly complete: boolean;
}

/**
 * The bytes [offset, offset + length) of the output; a negative offset counts from the end. Only
 * the window is read. Its edges move inwards to whole UTF-8 characters.
 */
export async function readByteWindow(
  source: OutputSource,
  offset: number,
  length: number = OUTPUT_WINDOW_DEFAULT_BYTES,
): Promise<ByteWindow> {
  const size = Math.max(1, Math.min(OUTPUT_WINDOW_MAX_BYTES, Math.trunc(length)));
  return withReader(source, async (totalBytes, read) => {
    const start =
      offset < 0 ? Math.max(0, totalBytes + Math.trunc(offset)) : Math.min(totalBytes, offset);
    const end = Math.min(totalBytes, start + size);
    const raw = await read(start, end - start);
    const head = start === 0 ? raw : wholeCharactersAfter(raw);
    const whole = end === totalBytes ? head : wholeCharactersBefore(head);
    const from = start + (raw.length - head.length);
    return {
      text: stripAnsi(whole.toString('utf8')),
      start: from,
      end: from + whole.length,
      totalBytes,
    };
  });
}

/**
 * The last `lines` lines of the output, at most `maxBytes` of them: read backwards a block at a
 * time, never more than the cap and one block.
 */
export async function readTail(
  source: OutputSource,
  lines: number,
  maxBytes: number = OUTPUT_WINDOW_MAX_BYTES,
): Promise<TailWindow> {
  const wanted = Math.max(1, Math.min(OUTPUT_TAIL_MAX_LINES, Math.trunc(lines)));
  return withReader(source, async (totalBytes, read) => {
    const end = totalBytes;
    // A final newline ends the last line; it does not start an empty one.
    const last = end === 0 ? undefined : (await read(end - 1, 1))[0];
    const searchEnd = last === NEWLINE ? end - 1 : end;
    const floor = Math.max(0, end - maxBytes);
    let start: number | undefined;
    let found = 0;
    for (let pos = searchEnd; pos > floor && start === undefined;) {
      const from = Math.max(floor, pos - BLOCK_BYTES);
      const block = await read(from, pos - from);
      for (let i = block.length - 1; i >= 0; i--) {
        if (block[i] === NEWLINE && ++found === wanted) {
          start = from + i + 1;
          break;
        }
      }
      pos = from;
    }
    const capped = start === undefined && floor > 0;
    let raw = await read(start ?? floor, end - (start ?? floor));
    let from = start ?? floor;
    if (capped) {
      // Cut by the byte cap: start at the next whole line when there is one.
      const newline = raw.indexOf(NEWLINE);
      const skip = newline >= 0 && newline < raw.length - 1 ? newline + 1 : 0;
      const rest = wholeCharactersAfter(raw.subarray(skip));
      from += raw.length - rest.length;
      raw = rest;
    }
    const text = stripAnsi(raw.toString('utf8'));
    return {
      text,
      start: from,
      end,
      totalBytes,
      lines: countLines(raw),
      firstLine: from === 0 ? 1 : undefined,
      capped,
    };
  });
}

/** Lines in `bytes`: its newlines, and one more for a last line without one. */
function countLines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE ? count + 1 : count;
}

type Read = (position: number, length: number) => Promise<Buffer>;

/** Runs `use` with the source's size now and a positioned read of it. */
async function withReader<T>(
  source: OutputSource,
  use: (size: number, read: Read) => Promise<T>,
): Promise<T> {
  if (source.kind === 'bytes') {
    const { bytes } = source;
    return use(bytes.length, (position, length) =>
      Promise.resolve(bytes.subarray(position, position + length)),
    );
  }
  // The logs are the server's own files in its private state; O_NOFOLLOW all the same.
  const handle = await open(source.path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const { size } = await handle.stat();
    return await use(size, async (position, length) => {
      const buffer = Buffer.alloc(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    });
  } finally {
    await handle.close();
  }
}

/**
 * The lines of the output matching `pattern`, with line numbers and context, searched a block at a
 * time. Refused (AhmaError PATTERN_REFUSED) when the pattern is too long, is no valid regular
 * expression, or takes over `stallMs` on one line.
 *
 * Why a time bound and not a linear-time engine: the pattern comes from the model, and a
 * backtracking engine (V8's Irregexp) can take exponential time on patterns like `(a+)+$`. The
 * linear-time engines are RE2 (the `re2` package: a native addon, to be built for every platform
 * and Node version, while Ahma loads no native Node addon) or ports no one keeps up;
 * V8's own linear engine is behind a V8 flag (--enable-experimental-regexp-engine) that Node does
 * not promise to keep, and it refuses backreferences and lookarounds. So the search runs with
 * JavaScript's own syntax in a worker thread that the server ends when one line takes too long:
 * a slow pattern costs at most that time, and never blocks the server's event loop.
 */
export async function grepOutput(source: OutputSource, options: GrepOptions): Promise<GrepResult> {
  const { pattern } = options;
  if (pattern.length > GREP_MAX_PATTERN_CHARS) {
    throw new AhmaError(
      'PATTERN_REFUSED',
      `the pattern has ${String(pattern.length)} characters; at most ${String(GREP_MAX_PATTERN_CHARS)} are taken`,
    );
  }
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new AhmaError(
      'PATTERN_REFUSED',
      `the pattern is not a valid JavaScript regular expression: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const stallMs = options.stallMs ?? GREP_STALL_MS;
  const timeLimitMs = options.timeLimitMs ?? GREP_TIME_LIMIT_MS;
  // [0]: 1 while a line is being matched; [1]: how many matches have started; [2]: the line.
  const state = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  const flags = new Int32Array(state);
  const worker = new Worker(GREP_WORKER, {
    eval: true,
    workerData: {
      pattern,
      ansi: ANSI_SOURCE,
      path: source.kind === 'file' ? source.path : undefined,
      bytes: source.kind === 'bytes' ? source.bytes : undefined,
      context: clamp(options.context ?? 0, 0, GREP_MAX_CONTEXT),
      maxMatches: clamp(options.maxMatches ?? GREP_DEFAULT_MATCHES, 1, GREP_MAX_MATCHES),
      maxBytes: options.maxBytes ?? OUTPUT_WINDOW_MAX_BYTES,
      lineChars: LINE_SHOW_CHARS,
      maxLine: LINE_MAX_BYTES,
      timeLimitMs,
      state,
    },
    // The server's stdout may be the MCP stream: nothing of the worker's goes there.
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  worker.stdout.resume();
  worker.stderr.resume();
  return new Promise<GrepResult>((resolve, reject) => {
    let watched = -1;
    let since = 0;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(backstop);
      void worker.terminate();
      outcome();
    };
    const tooSlow = (line: string) =>
      new AhmaError(
        'PATTERN_REFUSED',
        `the pattern took too long${line} (over ${String(stallMs)} ms on one line: a pattern with nested or overlapping repetition, like (a+)+ or (.*)*, backtracks exponentially); simplify it`,
      );
    const poll = setInterval(
      () => {
        if (Atomics.load(flags, 0) !== 1) {
          watched = -1;
          return;
        }
        const started = Atomics.load(flags, 1);
        if (started !== watched) {
          watched = started;
          since = performance.now();
        } else if (performance.now() - since >= stallMs) {
          const line = Atomics.load(flags, 2);
          finish(() => reject(tooSlow(` on line ${String(line)}`)));
        }
      },
      Math.max(10, Math.min(100, stallMs / 4)),
    );
    // The worker answers by itself at its time limit; this ends one that cannot (stuck reading).
    const backstop = setTimeout(
      () =>
        finish(() =>
          reject(
            new Error(
              `the search did not answer within ${String(timeLimitMs + stallMs + 2000)} ms`,
            ),
          ),
        ),
      timeLimitMs + stallMs + 2000,
    );
    worker.once('message', (message: WorkerAnswer) =>
      finish(() => {
        if ('error' in message) {
          reject(Object.assign(new Error(message.error), { code: message.code }));
          return;
        }
        resolve({
          text: message.lines.join('\n'),
          matches: message.matches,
          shown: message.shown,
          linesSearched: message.linesSearched,
          bytesSearched: message.bytesSearched,
          complete: message.complete,
        });
      }),
    );
    worker.once('error', (error) => finish(() => reject(error)));
    worker.once('exit', () =>
      finish(() => reject(new Error('the search ended without an answer (out of memory?)'))),
    );
  });
}

type WorkerAnswer =
  | {
      readonly lines: string[];
      readonly matches: number;
      readonly shown: number;
      readonly linesSearched: number;
      readonly bytesSearched: number;
      readonly complete: boolean;
    }
  | { readonly error: string; readonly code: string | undefined };

const clamp = (value: number, min: number, max: number) =>
  Math.max(min, Math.min(max, Math.trunc(value)));

/**
 * output.ts's stripAnsi pattern (its regular expression is its own): lines are matched and shown
 * without terminal escapes. A test checks both strip the same.
 */
const ANSI_SOURCE = String.raw`\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[ -/]*[0-~]`;

/**
 * The search, as a worker's code (CommonJS, evaluated): reads the source a block at a time, splits
 * it at newlines, and matches each line without its terminal escapes and final CR. Before each
 * match it marks the shared state busy (with the line), so the server can end it when one line
 * takes too long; it stops by itself at the time limit with what it has.
 */
const GREP_WORKER = String.raw`
'use strict';
const { parentPort, workerData: d } = require('node:worker_threads');
const { closeSync, constants, openSync, readSync } = require('node:fs');
const state = new Int32Array(d.state);
const regex = new RegExp(d.pattern);
const ansi = new RegExp(d.ansi, 'g');
const deadline = Date.now() + d.timeLimitMs;
const out = [];
let outBytes = 0;
let full = false;
let lineNumber = 0;
let matches = 0;
let shown = 0;
let lastShown = 0;
let after = 0;
const before = [];
let position = 0;
let stopped = false;

function clip(text, at) {
  if (text.length <= d.lineChars) return text;
  const from = Math.max(0, Math.min(at - (d.lineChars >> 2), text.length - d.lineChars));
  return (from > 0 ? '…' : '') + text.slice(from, from + d.lineChars) + (from + d.lineChars < text.length ? '…' : '');
}

function emit(number, mark, text) {
  if (full) return;
  const lines = d.context > 0 && lastShown !== 0 && number > lastShown + 1 ? ['--', number + mark + text] : [number + mark + text];
  const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
  if (outBytes + bytes > d.maxBytes) {
    full = true;
    return;
  }
  out.push(...lines);
  outBytes += bytes;
  lastShown = number;
}

function onLine(bytes, continued) {
  if (!continued) lineNumber++;
  let text = bytes.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  text = text.replace(ansi, '');
  Atomics.store(state, 2, lineNumber);
  Atomics.add(state, 1, 1);
  Atomics.store(state, 0, 1);
  const match = regex.exec(text);
  Atomics.store(state, 0, 0);
  const showing = !full && shown < d.maxMatches;
  if (match !== null) {
    matches++;
    if (showing) {
      for (const line of before) emit(line.number, '-', line.text);
      before.length = 0;
      emit(lineNumber, ':', clip(text, match.index));
      if (!full) shown++;
      after = d.context;
    } else {
      // A match past the ones shown ends the context of the last one shown.
      after = 0;
    }
  } else if (after > 0 && !full) {
    emit(lineNumber, '-', clip(text, 0));
    after--;
  } else if (d.context > 0 && showing) {
    before.push({ number: lineNumber, text: clip(text, 0) });
    if (before.length > d.context) before.shift();
  }
  if ((lineNumber & 1023) === 0 && Date.now() > deadline) stopped = true;
}

function scan(read) {
  const block = Buffer.allocUnsafe(64 * 1024);
  let pending = [];
  let pendingBytes = 0;
  let continued = false;
  for (;;) {
    const count = read(block);
    if (count === 0) break;
    let at = 0;
    while (at < count) {
      const newline = block.indexOf(10, at);
      if (newline < 0 || newline >= count) {
        pending.push(Buffer.from(block.subarray(at, count)));
        pendingBytes += count - at;
        if (pendingBytes >= d.maxLine) {
          onLine(Buffer.concat(pending), continued);
          continued = true;
          pending = [];
          pendingBytes = 0;
        }
        position += count - at;
        break;
      }
      const piece = block.subarray(at, newline);
      onLine(pending.length === 0 ? piece : Buffer.concat([...pending, piece]), continued);
      continued = false;
      pending = [];
      pendingBytes = 0;
      position += newline + 1 - at;
      at = newline + 1;
      if (stopped) return;
    }
    if (stopped) return;
  }
  if (pendingBytes > 0) onLine(Buffer.concat(pending), continued);
}

try {
  if (d.path !== undefined) {
    const fd = openSync(d.path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      scan((block) => readSync(fd, block, 0, block.length, null));
    } finally {
      closeSync(fd);
    }
  } else {
    const source = Buffer.from(d.bytes.buffer, d.bytes.byteOffset, d.bytes.byteLength);
    let offset = 0;
    scan((block) => {
      const count = source.copy(block, 0, offset, offset + block.length);
      offset += count;
      return count;
    });
  }
  parentPort.postMessage({
    lines: out,
    matches,
    shown,
    linesSearched: lineNumber,
    bytesSearched: position,
    complete: !stopped,
  });
} catch (error) {
  parentPort.postMessage({ error: String(error && error.message || error), code: error && error.code });
}
`;
