// R15.3: reading an operation's whole output a window at a time. Byte windows (from the start and,
// with a negative offset, from the end), the last lines, and a search with line numbers and
// context; only the window is read (a 1 GiB sparse log answers at once); a pattern that backtracks
// catastrophically is stopped by the time bound without blocking the event loop, and a pattern too
// long or invalid is refused. A running command's output is found by its log name.
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import { stripAnsi } from '../../src/process/output.js';
import {
  grepOutput,
  liveSource,
  readByteWindow,
  readTail,
  type OutputSource,
} from '../../src/process/output-reader.js';
import {
  bash,
  engineFixture,
  removeAll,
  sleep,
  varTmpDir,
  type EngineFixture,
} from '../support/engine.js';

let dir: string;
let numbers: OutputSource;
/** `1\n2\n…\n100000\n`. */
let numbersText: string;

beforeAll(async () => {
  dir = await varTmpDir('reader');
  numbersText = Array.from({ length: 100_000 }, (_, i) => `${String(i + 1)}\n`).join('');
  const path = join(dir, 'numbers.log');
  await writeFile(path, numbersText);
  numbers = { kind: 'file', path };
});

afterAll(() => removeAll([dir]));

const bytes = (text: string): OutputSource => ({ kind: 'bytes', bytes: Buffer.from(text) });

async function refusal(promise: Promise<unknown>): Promise<AhmaError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AhmaError);
  return error as AhmaError;
}

describe('byte windows', () => {
  it('R15.3: a window from the start, and one in the middle, as the bytes at those offsets', async () => {
    const first = await readByteWindow(numbers, 0, 10);
    expect(first).toEqual({
      text: numbersText.slice(0, 10),
      start: 0,
      end: 10,
      totalBytes: numbersText.length,
    });
    const middle = await readByteWindow(numbers, 300_000, 50);
    expect(middle.text).toBe(numbersText.slice(300_000, 300_050));
    expect([middle.start, middle.end]).toEqual([300_000, 300_050]);
  });

  it('R15.3: a negative offset counts from the end; an offset past the end is an empty window', async () => {
    const last = await readByteWindow(numbers, -100);
    expect(last.text).toBe(numbersText.slice(-100));
    expect(last.text.endsWith('99999\n100000\n')).toBe(true);
    expect([last.start, last.end]).toEqual([numbersText.length - 100, numbersText.length]);
    const before = await readByteWindow(numbers, -1_000_000_000, 6);
    expect(before.text).toBe('1\n2\n3\n');
    const past = await readByteWindow(numbers, 10_000_000, 100);
    expect(past).toMatchObject({ text: '', start: numbersText.length, end: numbersText.length });
  });

  it('R15.3: a window is at most 32,000 bytes, and its edges keep whole UTF-8 characters', async () => {
    expect((await readByteWindow(numbers, 0, 1_000_000)).end).toBe(32_000);
    // "é" is 2 bytes: a window from inside one starts after it, one ending inside it ends before.
    const source = bytes('aé bé c');
    expect(await readByteWindow(source, 2, 4)).toEqual({
      text: ' b',
      start: 3,
      end: 5,
      totalBytes: 9,
    });
  });

  it('R15.3: terminal escapes are removed from what is returned', async () => {
    const colored = '\u001b[31merror\u001b[0m: bad\n';
    expect((await readByteWindow(bytes(colored), 0)).text).toBe('error: bad\n');
  });

  it('R15.3: only the window is read: the end of a 1 GiB log comes at once', async () => {
    const path = join(dir, 'sparse.log');
    const handle = await open(path, 'w');
    await handle.truncate(1024 * 1024 * 1024);
    await handle.write('\nthe end\n', 1024 * 1024 * 1024);
    await handle.close();
    const started = performance.now();
    const window = await readByteWindow({ kind: 'file', path }, -8);
    const tail = await readTail({ kind: 'file', path }, 1);
    expect(window.text).toBe('the end\n');
    expect(tail).toMatchObject({ text: 'the end\n', lines: 1, firstLine: undefined });
    // A line of a gigabyte of NULs: the tail of 5 lines stops at its byte cap.
    const capped = await readTail({ kind: 'file', path }, 5);
    expect(capped.capped).toBe(true);
    expect(capped.text).toBe('the end\n');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('tail', () => {
  it('R15.3: the last N lines, with or without a final newline', async () => {
    expect(await readTail(numbers, 3)).toMatchObject({
      text: '99998\n99999\n100000\n',
      lines: 3,
      end: numbersText.length,
      firstLine: undefined,
      capped: false,
    });
    expect((await readTail(bytes('a\nb\nc'), 2)).text).toBe('b\nc');
  });

  it('R15.3: an output with fewer lines returns them all, numbered from line 1', async () => {
    expect(await readTail(bytes('one\ntwo\n'), 10)).toMatchObject({
      text: 'one\ntwo\n',
      lines: 2,
      start: 0,
      firstLine: 1,
    });
    expect(await readTail(bytes(''), 3)).toMatchObject({ text: '', lines: 0 });
  });

  it('R15.3: lines beyond the byte cap are left out, starting at a whole line', async () => {
    const window = await readTail(numbers, 2000, 100);
    expect(window.capped).toBe(true);
    expect(window.text).toBe(
      numbersText.slice(-100).slice(numbersText.slice(-100).indexOf('\n') + 1),
    );
    expect(window.lines).toBe(window.text.split('\n').length - 1);
  });
});

describe('grep', () => {
  it('R15.3: matching lines with their 1-based line numbers, context around them, and how many matched in all', async () => {
    const found = await grepOutput(numbers, { pattern: '^7777[0-4]$', context: 1 });
    expect(found.text).toBe(
      [
        '77769-77769',
        '77770:77770',
        '77771:77771',
        '77772:77772',
        '77773:77773',
        '77774:77774',
        '77775-77775',
      ].join('\n'),
    );
    expect(found).toMatchObject({ matches: 5, shown: 5, linesSearched: 100_000, complete: true });
    expect(found.bytesSearched).toBe(numbersText.length);

    const separate = await grepOutput(numbers, { pattern: '^(10|20)$', context: 2 });
    expect(separate.text).toBe(
      [
        '8-8',
        '9-9',
        '10:10',
        '11-11',
        '12-12',
        '--',
        '18-18',
        '19-19',
        '20:20',
        '21-21',
        '22-22',
      ].join('\n'),
    );
  });

  it('R15.3: at most max_matches are shown, every match is counted, and the shown lines are bounded in bytes', async () => {
    const many = await grepOutput(numbers, { pattern: '7$', maxMatches: 3 });
    expect(many.text).toBe('7:7\n17:17\n27:27');
    expect(many).toMatchObject({ matches: 10_000, shown: 3 });
    // The last match shown keeps its context up to the next match, which is not shown.
    const limited = await grepOutput(numbers, {
      pattern: '^1234[0-2]$',
      maxMatches: 2,
      context: 2,
    });
    expect(limited.text).toBe(
      ['12338-12338', '12339-12339', '12340:12340', '12341:12341'].join('\n'),
    );
    expect(limited).toMatchObject({ matches: 3, shown: 2 });
    const bounded = await grepOutput(numbers, { pattern: '.', maxMatches: 1000, maxBytes: 100 });
    expect(Buffer.byteLength(bounded.text)).toBeLessThanOrEqual(100);
    expect(bounded.shown).toBeLessThan(1000);
    expect(bounded.matches).toBe(100_000);
  });

  it('R15.3: a search past its time limit answers what it found in the lines searched so far', async () => {
    const slow = await grepOutput(numbers, { pattern: '^\\d+$', timeLimitMs: 0 });
    expect(slow.complete).toBe(false);
    // The clock is read every 1,024 lines.
    expect(slow.linesSearched % 1024).toBe(0);
    expect(slow.linesSearched).toBeLessThan(100_000);
    expect(slow.matches).toBe(slow.linesSearched);
    const next = String(slow.linesSearched + 1);
    expect(slow.bytesSearched).toBe(numbersText.indexOf(`\n${next}\n`) + 1);
  });

  it('R15.3: lines are searched and shown without terminal escapes, as stripAnsi leaves them', async () => {
    const lines = [
      '\u001b[1;31merror\u001b[0m: one',
      '\u001b]0;title\u0007plain',
      '\u001b(Bwarning\u001b7: two\u001b8',
      'error at the end\r',
    ];
    const found = await grepOutput(bytes(lines.join('\n')), { pattern: '^(error|warning): |end$' });
    expect(found.text).toBe(
      [
        `1:${stripAnsi(lines[0] ?? '')}`,
        `3:${stripAnsi(lines[2] ?? '')}`,
        '4:error at the end',
      ].join('\n'),
    );
  });

  it('R15.3: a very long line is shown cut around its match', async () => {
    const line = `${'x'.repeat(50_000)}NEEDLE${'y'.repeat(50_000)}`;
    const found = await grepOutput(bytes(`${line}\n`), { pattern: 'NEEDLE' });
    expect(found.text.length).toBeLessThan(1100);
    expect(found.text).toMatch(/^1:…x+NEEDLEy+…$/);
  });

  it('R15.3: a catastrophically backtracking pattern is stopped by the time bound, and the server stays responsive', async () => {
    const line = `${'a'.repeat(40)}b`;
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    const started = performance.now();
    try {
      const error = await refusal(
        grepOutput(bytes(`fine\n${line}\n`), { pattern: '(a+)+$', stallMs: 500 }),
      );
      expect(error.code).toBe('PATTERN_REFUSED');
      expect(error.message).toContain('took too long on line 2');
      expect(error.message).toContain('simplify it');
    } finally {
      clearInterval(ticker);
    }
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(500);
    expect(elapsed).toBeLessThan(3000);
    // The event loop kept running while the pattern spun in its worker.
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it('R15.3: an invalid pattern and one over 1,000 characters are refused with what is wrong', async () => {
    const invalid = await refusal(grepOutput(numbers, { pattern: '(unclosed' }));
    expect(invalid.code).toBe('PATTERN_REFUSED');
    expect(invalid.message).toMatch(
      /not a valid JavaScript regular expression: .*Unterminated group/,
    );
    const long = await refusal(grepOutput(numbers, { pattern: 'a'.repeat(1001) }));
    expect(long.code).toBe('PATTERN_REFUSED');
    expect(long.message).toContain('1001 characters; at most 1000');
  });

  it('R15.3: a log that is gone is an error the caller can tell (ENOENT)', async () => {
    const gone = { kind: 'file', path: join(dir, 'missing.log') } as const;
    await expect(grepOutput(gone, { pattern: 'x' })).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readByteWindow(gone, 0)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('a running command', () => {
  let fixture: EngineFixture;
  beforeAll(async () => {
    fixture = await engineFixture();
  });
  afterAll(() => fixture.dispose());

  it('R15.3: the bytes kept so far, whole or as head and tail with what is missing', () => {
    const whole = liveSource({
      logName: 'op',
      logPath: undefined,
      head: Buffer.from('ab'),
      tail: Buffer.from('cd'),
      totalBytes: 4,
    });
    expect(whole).toEqual({ source: bytes('abcd'), complete: true });
    const cut = liveSource({
      logName: 'op',
      logPath: undefined,
      head: Buffer.from('ab\n'),
      tail: Buffer.from('yz\n'),
      totalBytes: 1006,
    });
    expect(cut.complete).toBe(false);
    expect(cut.source).toEqual(bytes('ab\n\n[… 1000 bytes not kept: no log holds them …]\nyz\n'));
    const logged = { logName: 'op', logPath: '/x.log', head: Buffer.alloc(0), totalBytes: 9 };
    expect(liveSource({ ...logged, tail: Buffer.alloc(0) })).toEqual({
      source: { kind: 'file', path: '/x.log' },
      complete: true,
    });
  });

  it('R15.3: Executor.liveOutput follows a command by its log name, and a sequence by its running step', async () => {
    const { engine } = fixture;
    const name = `live-${String(process.pid)}`;
    const small = engine.executor.run({
      command: { kind: 'argv', argv: bash('echo first; sleep 1.5') },
      cwd: engine.sandbox.scope,
      logName: `${name}-step2`,
    });
    const live = await waitUntil(() => {
      const found = engine.executor.liveOutput(`${name}-step2`);
      return found !== undefined && found.totalBytes > 0 ? found : undefined;
    });
    expect(live.logPath).toBeUndefined();
    expect(liveSource(live)).toEqual({ source: bytes('first\n'), complete: true });
    // The operation id of a sequence finds its running step.
    expect(engine.executor.liveOutput(name)?.logName).toBe(`${name}-step2`);
    expect(engine.executor.liveOutput(`${name}-step`)).toBeUndefined();

    // Past the result's budget the output goes to a log, which holds all of it so far.
    const big = engine.executor.run({
      command: { kind: 'argv', argv: bash('seq 1 200000; sleep 1.5') },
      cwd: engine.sandbox.scope,
      logName: `${name}-big`,
    });
    const logged = await waitUntil(() => {
      const found = engine.executor.liveOutput(`${name}-big`);
      return found?.logPath !== undefined && found.totalBytes === 1_288_895 ? found : undefined;
    });
    const source = liveSource(logged).source;
    await waitUntil(async () =>
      (await readTail(source, 1)).text === '200000\n' ? true : undefined,
    );
    expect((await grepOutput(source, { pattern: '^123456$' })).text).toBe('123456:123456');

    await Promise.all([small, big]);
    expect(engine.executor.liveOutput(`${name}-step2`)).toBeUndefined();
    expect(engine.executor.liveOutput(`${name}-big`)).toBeUndefined();
  });
});

async function waitUntil<T>(probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(20);
  }
}
