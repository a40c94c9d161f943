// SPEC §3, R15.2 (output is held to a budget): within the budget the output is returned as a
// terminal would have left it; beyond it the head and the tail are kept (the tail weighted more
// when the command failed), the middle elided with a marker saying how many bytes and lines were
// left out, where the full output is and how to read it, and the log file holds every byte. ANSI
// escapes and carriage-return progress bars are cleaned away and runs of identical lines
// collapsed before the budget applies; bytes decode as UTF-8 with replacement.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionStatus } from '../../src/process/execution-types.js';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  OutputCollector,
  operationRef,
  outputBudgetBytes,
  stripAnsi,
} from '../../src/process/output.js';
import { LogStore } from '../../src/state/log-store.js';
import {
  bash,
  engineFixture,
  removeAll,
  run,
  varTmpDir,
  type EngineFixture,
} from '../support/engine.js';

let stateDir: string;
let logDir: string;
let logs: LogStore;

beforeAll(async () => {
  stateDir = await varTmpDir('state');
  logDir = join(stateDir, 'output', 'nested');
  await mkdir(logDir, { recursive: true, mode: 0o700 });
  logs = new LogStore(logDir);
});

afterAll(() => removeAll([stateDir]));

let names = 0;
const collector = (budgetBytes: number, logName = `out-${String(++names)}`) =>
  new OutputCollector({ budgetBytes, logs }, logName);

/** Printable ASCII without newlines, so byte offsets and string offsets agree. */
function asciiBytes(length: number): Buffer {
  const bytes = randomBytes(length);
  for (let i = 0; i < length; i++) bytes[i] = 0x21 + ((bytes[i] ?? 0) % 94);
  return bytes;
}

/** `count` distinct lines of 12 bytes: `line 000001\n`, … */
function numberedLines(count: number, from = 1): string {
  let text = '';
  for (let n = from; n < from + count; n++) text += `line ${String(n).padStart(6, '0')}\n`;
  return text;
}

/** Feeds `data` in odd-sized chunks, honouring back-pressure like the executor does. */
async function feed(
  target: OutputCollector,
  data: Buffer,
  sizes: readonly number[],
): Promise<void> {
  let offset = 0;
  for (let i = 0; offset < data.length; i++) {
    const size = sizes[i % sizes.length] ?? 1;
    if (!target.push(data.subarray(offset, offset + size))) await target.drained();
    offset += size;
  }
}

/** The marker line of a cut output (without its surrounding newlines). */
const MARKER = /\n(\[… (\d+) bytes \((\d+) lines?\) left out \(of (\d+)\); [^\n]*…\])\n/;

/** A cut output's head, marker and tail, and the marker's numbers. */
function split(output: string) {
  const found = MARKER.exec(output);
  if (found === null) throw new Error(`no marker in ${output.slice(0, 200)}`);
  return {
    head: output.slice(0, found.index),
    marker: found[1] ?? '',
    tail: output.slice(found.index + found[0].length),
    bytes: Number(found[2]),
    lines: Number(found[3]),
    total: Number(found[4]),
  };
}

describe('OutputCollector', () => {
  it('SPEC §3: within the budget the output is verbatim, not truncated, and no log file is written', async () => {
    const out = collector(128);
    const text = 'line one\n\ttabbed  spaces \r\nünïcödé ✓ 🚀\n';
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeLessThanOrEqual(128);
    // Split inside multi-byte characters: decoding happens on the whole, not per chunk.
    await feed(out, bytes, [3, 1, 7]);
    const result = await out.finish('completed');
    expect(result).toEqual({
      output: text,
      truncated: false,
      fullOutputPath: undefined,
      totalBytes: bytes.length,
    });
  });

  it('SPEC §3: exactly at the budget nothing is elided', async () => {
    const out = collector(100);
    const data = asciiBytes(100);
    await feed(out, data, [4]);
    const result = await out.finish('failed');
    expect(result.truncated).toBe(false);
    expect(result.output).toBe(data.toString('latin1'));
  });

  it('SPEC §3: empty output is the empty string', async () => {
    expect(await collector(100).finish('completed')).toMatchObject({
      output: '',
      truncated: false,
    });
  });

  it('R15.2: over the budget head and tail are kept within it, the marker gives what was left out, the log path and how to read it', async () => {
    const budget = 4000;
    const out = collector(budget, 'op_test_7');
    const data = asciiBytes(3 * 1024 * 1024 + 17);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      await feed(out, data, [1, 4093, 65_537, 17, 8191, 250_001]);
    } finally {
      process.off('warning', onWarning);
    }
    const result = await out.finish('completed');
    // Waiting for the log to drain, over and over, must not pile up listeners on it.
    expect(warnings.map((warning) => warning.message)).toEqual([]);
    const text = data.toString('latin1');
    expect(result.truncated).toBe(true);
    expect(result.totalBytes).toBe(data.length);
    expect(result.fullOutputPath).toBeDefined();
    const logPath = result.fullOutputPath ?? '';
    expect(logPath.startsWith(`${logDir}/`)).toBe(true);

    // The whole result, marker included, is within the budget.
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(budget);
    const { head, tail, marker, bytes, lines, total } = split(result.output);
    expect(text.startsWith(head)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
    expect(head.length + tail.length + bytes).toBe(data.length);
    expect(total).toBe(data.length);
    expect(lines).toBe(0);
    expect(marker).toBe(
      `[… ${String(bytes)} bytes (0 lines) left out (of ${String(data.length)}); full output: ${logPath}; read any part with the \`output\` tool: {"id": "op_test_7"} …]`,
    );
    // A success: a third of what is shown is the head, the rest the tail.
    expect(head.length / (head.length + tail.length)).toBeCloseTo(1 / 3, 2);

    // The log file holds the complete output, byte for byte, readable only by the server's user.
    const logged = await readFile(logPath);
    expect(logged.length).toBe(data.length);
    expect(logged.equals(data)).toBe(true);
    expect((await stat(logPath)).mode & 0o777).toBe(0o600);
  });

  it('R15.2: a command that succeeded shows a third head and two thirds tail; one that failed, timed out or was cancelled a fifth and four fifths', async () => {
    const data = Buffer.from(numberedLines(5000));
    const shares: Record<string, number> = {};
    for (const status of ['completed', 'failed', 'timed_out', 'cancelled'] as ExecutionStatus[]) {
      const out = collector(6000);
      await feed(out, data, [4096, 333]);
      const result = await out.finish(status);
      expect(result.truncated).toBe(true);
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(6000);
      const { head, tail, bytes, lines } = split(result.output);
      const full = data.toString();
      expect(full.startsWith(head)).toBe(true);
      expect(full.endsWith(tail)).toBe(true);
      expect(tail).toMatch(/^line \d{6}\n/); // whole lines: the cut fell on a line end
      expect(tail.endsWith('line 005000\n')).toBe(true);
      // What was left out, counted in bytes and in lines, is exactly the middle.
      const middle = full.slice(head.length, full.length - tail.length);
      expect(bytes).toBe(Buffer.byteLength(middle));
      expect(lines).toBe(middle.split('\n').length - 1);
      shares[status] = head.length / (head.length + tail.length);
    }
    expect(shares['completed']).toBeCloseTo(1 / 3, 1);
    for (const status of ['failed', 'timed_out', 'cancelled']) {
      expect(shares[status]).toBeCloseTo(1 / 5, 1);
    }
  });

  it('R15.2: carriage-return progress bars keep only what was written after the last return; \\r\\n is a plain line end', async () => {
    const out = collector(4096);
    const bar = Array.from({ length: 101 }, (_, i) => `Downloading… ${String(i)}%`).join('\r');
    const text =
      `start\r\n${bar}\n` +
      // An erase-line escape before the return, as progress libraries print them.
      `\u001b[2K\r  Building [=====>    ] 50%\u001b[2K\r  Building [==========] 100%\n` +
      `done\r\r\n`;
    await feed(out, Buffer.from(text), [7]);
    const result = await out.finish('completed');
    expect(result.truncated).toBe(false);
    expect(result.output).toBe(
      'start\r\nDownloading… 100%\n  Building [==========] 100%\ndone\r\r\n',
    );
  });

  it('R15.2: runs of three or more identical lines collapse to the line and how many more times it came', async () => {
    const out = collector(8192);
    const text =
      'Compiling x v1\n'.repeat(500) +
      // Identical once the colours are gone.
      '\u001b[32mwarning\u001b[0m: unused\n' +
      'warning: unused\n'.repeat(3) +
      'twice\ntwice\n' +
      '\n\n\n' +
      // Collapsing these would not make the text shorter.
      'a\na\na\n' +
      'end';
    await feed(out, Buffer.from(text), [100]);
    const result = await out.finish('completed');
    expect(result.truncated).toBe(false);
    expect(result.fullOutputPath).toBeUndefined();
    expect(result.output).toBe(
      'Compiling x v1\n[… repeated 499 more times]\n' +
        'warning: unused\n[… repeated 3 more times]\n' +
        'twice\ntwice\n\n\n\na\na\na\nend',
    );
  });

  it('R15.2: an output over the budget that fits once cleaned is whole, and leaves no log behind', async () => {
    const name = `fits-${String(process.pid)}`;
    const out = collector(2000, name);
    // 2204 bytes raw: beyond the 2000 bytes, but within the 2600 kept while streaming.
    const data = Buffer.from(`${'same line here\n'.repeat(120)}${'x\r'.repeat(200)}end\n`);
    await feed(out, data, [512]);
    const result = await out.finish('completed');
    expect(data.length).toBeGreaterThan(2000);
    expect(result).toMatchObject({
      output: 'same line here\n[… repeated 119 more times]\nend\n',
      truncated: false,
      fullOutputPath: undefined,
    });
    await logs.deletionsDone();
    expect((await readdir(logDir)).filter((file) => file.startsWith(name))).toEqual([]);
  });

  it('R15.2: a cut output is cleaned too: its repeats collapse and its progress bars go', async () => {
    const out = collector(3000);
    const text =
      `${'\u001b[1;32m   Compiling\u001b[0m dep v1.0.0\n'.repeat(2000)}` +
      numberedLines(2000) +
      `${Array.from({ length: 50 }, (_, i) => `Building ${String(i)}/50`).join('\r')}\n` +
      'error: could not compile `app`\n';
    await feed(out, Buffer.from(text), [1000]);
    const result = await out.finish('failed');
    expect(result.truncated).toBe(true);
    const { head, tail } = split(result.output);
    // The head kept while streaming (half the budget, raw) holds the start of the run only.
    expect(head).toMatch(/^ {3}Compiling dep v1\.0\.0\n\[… repeated \d+ more times\]\n/);
    expect(tail.endsWith('line 002000\nBuilding 49/50\nerror: could not compile `app`\n')).toBe(
      true,
    );
    expect(result.output).not.toContain('\r');
    expect(result.output).not.toContain('\u001b');
  });

  it('R15.2: the marker of a sequence step names the operation and the step', () => {
    expect(operationRef('op_ab12_3')).toBe('{"id": "op_ab12_3"}');
    expect(operationRef('op_ab12_3-step2')).toBe('{"id": "op_ab12_3", "step": 2}');
  });

  it('R15.2: a budget in tokens is 4 bytes a token', () => {
    expect(outputBudgetBytes(DEFAULT_MAX_OUTPUT_TOKENS)).toBe(40_000);
    const out = new OutputCollector({ budgetBytes: 40_000, logs }, 'tokens', 500);
    out.push(Buffer.from(numberedLines(1000)));
    return out.finish('completed').then((result) => {
      expect(result.truncated).toBe(true);
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(2000);
    });
  });

  it('SPEC §3: a single chunk crossing the budget is still logged completely', async () => {
    const out = collector(300);
    const first = asciiBytes(7);
    const second = asciiBytes(5000);
    out.push(first);
    if (!out.push(second)) await out.drained();
    const result = await out.finish('completed');
    const all = Buffer.concat([first, second]);
    expect(result.truncated).toBe(true);
    expect((await readFile(result.fullOutputPath ?? '')).equals(all)).toBe(true);
    const { head, tail, bytes } = split(result.output);
    expect(all.toString().startsWith(head)).toBe(true);
    expect(all.toString().endsWith(tail)).toBe(true);
    expect(head.length + tail.length + bytes).toBe(all.length);
  });

  it('SPEC §3: valid UTF-8 cut by the head or the tail keeps whole characters, never U+FFFD', async () => {
    // Every character is 2, 3 or 4 bytes, so most cut positions fall inside one.
    const text = 'äé€😀'.repeat(400);
    for (const budget of [400, 401, 402, 403, 517]) {
      for (const status of ['completed', 'failed'] as const) {
        const out = collector(budget);
        const bytes = Buffer.from(text);
        if (!out.push(bytes)) await out.drained();
        const result = await out.finish(status);
        expect(result.truncated).toBe(true);
        expect(result.output).not.toContain('\uFFFD');
        const { head, tail, bytes: elided } = split(result.output);
        expect(text.startsWith(head)).toBe(true);
        expect(text.endsWith(tail)).toBe(true);
        // The marker counts what is really missing between the two.
        expect(Buffer.byteLength(head) + Buffer.byteLength(tail) + elided).toBe(bytes.length);
      }
    }
  });

  it('SPEC §3: invalid UTF-8 still decodes with replacement after a cut', async () => {
    const out = collector(400);
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0x41]),
      asciiBytes(4000),
      Buffer.from([0x80, 0x80, 0x80, 0x80, 0x42]),
    ]);
    if (!out.push(bytes)) await out.drained();
    const result = await out.finish('completed');
    expect(result.output.startsWith('\uFFFDA')).toBe(true);
    expect(result.output.endsWith('\uFFFD\uFFFD\uFFFD\uFFFDB')).toBe(true);
  });

  it('R15.2: an output within the budget raw that decodes to more is cut, and its log holds it', async () => {
    const out = collector(400);
    const bytes = Buffer.alloc(390, 0xff);
    out.push(bytes);
    const result = await out.finish('completed');
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(400);
    expect(result.output).toContain('left out (of 390); full output: ');
    expect((await readFile(result.fullOutputPath ?? '')).equals(bytes)).toBe(true);
  });

  it('SPEC §3: when the log cannot be written the output is still bounded and says so', async () => {
    const out = new OutputCollector(
      { budgetBytes: 400, logs: new LogStore(join(stateDir, 'missing', 'dir')) },
      'unwritable',
    );
    await feed(out, asciiBytes(5000), [9]);
    const result = await out.finish('completed');
    expect(result.truncated).toBe(true);
    expect(result.fullOutputPath).toBeUndefined();
    expect(result.output).toMatch(/left out \(of 5000\); the full output could not be saved/);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(400);
    expect(existsSync(join(stateDir, 'missing'))).toBe(false);
  });

  it('SPEC §3: ANSI colour, cursor and OSC sequences are stripped', async () => {
    const out = collector(8192);
    const coloured =
      '\u001b[1;31merror\u001b[0m: \u001b[38;5;208mbad\u001b[m\n' +
      '\u001b[2J\u001b[H\u001b[10;20Hcursor\u001b[K\u001b[?25l\n' +
      '\u001b]0;window title\u0007title\n' +
      '\u001b]8;;https://example.com\u001b\\link\u001b]8;;\u001b\\\n' +
      '\u001b7saved\u001b8 \u001bMreverse\n' +
      // `tput sgr0` on xterm: a charset selection before the SGR reset; keypad mode; full reset.
      '\u001b[1mbold\u001b(B\u001b[m \u001b=\u001b>keypad \u001bcreset\n';
    await feed(out, Buffer.from(coloured), [5]);
    const result = await out.finish('completed');
    expect(result.output).toBe(
      'error: bad\ncursor\ntitle\nlink\nsaved reverse\nbold keypad reset\n',
    );
    expect(result.output).not.toContain('\u001b');
    expect(stripAnsi('plain [brackets] (stay)')).toBe('plain [brackets] (stay)');
  });

  it('SPEC §3: invalid UTF-8 is decoded with U+FFFD', async () => {
    const out = collector(8192);
    await feed(out, Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0x63, 0xe2, 0x82]), [2]);
    const result = await out.finish('completed');
    expect(result.output).toBe('a\uFFFDb\uFFFD(c\uFFFD');
  });
});

describe('R15.2: the budget through a real engine', () => {
  let fixture: EngineFixture;

  beforeAll(async () => {
    fixture = await engineFixture();
  });

  afterAll(() => fixture.dispose());

  it('R15.2: 50 MB of output gives a result within the default budget, and its log holds all of it', async () => {
    const size = 50 * 1024 * 1024;
    const logName = `fifty-mb-${String(process.pid)}`;
    const result = await run(
      fixture.engine,
      // Distinct lines (nothing collapses), then the same line over and over.
      bash(`{ seq 1 2000000; yes 'line of text'; } | head -c ${String(size)}`),
      { logName },
    );
    expect(result.status).toBe('completed');
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(
      outputBudgetBytes(DEFAULT_MAX_OUTPUT_TOKENS),
    );
    const { head, tail, bytes, lines, total } = split(result.output);
    expect(head.startsWith('1\n2\n3\n')).toBe(true);
    // Whole lines: the line a cut fell in is left out.
    expect(tail).toMatch(/^line of text\n\[… repeated \d+ more times\]\n/);
    expect(total).toBe(size);
    // A collapsed run stands for all of its lines: more is covered than is shown.
    expect(bytes).toBeGreaterThan(size - 200_000);
    expect(lines).toBeGreaterThan(3_000_000);
    expect(result.output).toContain(`read any part with the \`output\` tool: {"id": "${logName}"}`);
    const logged = await stat(result.fullOutputPath ?? '');
    expect(logged.size).toBe(size);
  }, 60_000);

  it('R15.2: a call asks for its own budget (max_output_tokens)', async () => {
    const result = await fixture.engine.executor.run({
      command: { kind: 'argv', argv: bash('seq 1 100000; exit 3') },
      cwd: fixture.scope,
      logName: `own-budget-${String(process.pid)}`,
      maxOutputTokens: 100,
    });
    expect(result.status).toBe('failed');
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(400);
    // A failure: the end (where the error is) gets four fifths.
    const { head, tail } = split(result.output);
    expect(tail.length).toBeGreaterThan(head.length * 3);
    expect(tail.endsWith('99999\n100000\n')).toBe(true);
  });
});
