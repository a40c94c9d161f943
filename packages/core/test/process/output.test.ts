// SPEC §3 (output is bounded): under the cap the output is returned verbatim; beyond it the head and
// tail are kept, the middle elided with a marker saying how much and where the full output is, and
// the log file holds every byte. ANSI escapes are stripped; bytes decode as UTF-8 with replacement.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutputCollector, stripAnsi } from '../../src/process/output.js';
import { LogStore } from '../../src/state/log-store.js';
import { removeAll, varTmpDir } from '../support/engine.js';

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
const collector = (headBytes: number, tailBytes: number) =>
  new OutputCollector({ headBytes, tailBytes, logs }, `out-${String(++names)}`);

/** Printable ASCII, so byte offsets and string offsets agree. */
function asciiBytes(length: number): Buffer {
  const bytes = randomBytes(length);
  for (let i = 0; i < length; i++) bytes[i] = 0x21 + ((bytes[i] ?? 0) % 94);
  return bytes;
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

describe('OutputCollector', () => {
  it('SPEC §3: under the cap the output is verbatim, not truncated, and no log file is written', async () => {
    const out = collector(64, 64);
    const text = 'line one\n\ttabbed  spaces \r\nünïcödé ✓ 🚀\n';
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeLessThanOrEqual(128);
    // Split inside multi-byte characters: decoding happens on the whole, not per chunk.
    await feed(out, bytes, [3, 1, 7]);
    const result = await out.finish();
    expect(result).toEqual({
      output: text,
      truncated: false,
      fullOutputPath: undefined,
      totalBytes: bytes.length,
    });
  });

  it('SPEC §3: exactly at the cap nothing is elided', async () => {
    const out = collector(10, 20);
    const data = asciiBytes(30);
    await feed(out, data, [4]);
    const result = await out.finish();
    expect(result.truncated).toBe(false);
    expect(result.output).toBe(data.toString('latin1'));
  });

  it('SPEC §3: empty output is the empty string', async () => {
    expect(await collector(8, 8).finish()).toMatchObject({ output: '', truncated: false });
  });

  it('SPEC §3: over the cap head and tail are kept and the marker gives the elided count and log path', async () => {
    const head = 1000;
    const tail = 3000;
    const out = collector(head, tail);
    const data = asciiBytes(3 * 1024 * 1024 + 17);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      await feed(out, data, [1, 4093, 65_537, 17, 8191, 250_001]);
    } finally {
      process.off('warning', onWarning);
    }
    const result = await out.finish();
    // Waiting for the log to drain, over and over, must not pile up listeners on it.
    expect(warnings.map((warning) => warning.message)).toEqual([]);
    const text = data.toString('latin1');
    expect(result.truncated).toBe(true);
    expect(result.totalBytes).toBe(data.length);
    expect(result.fullOutputPath).toBeDefined();
    const logPath = result.fullOutputPath ?? '';
    expect(logPath.startsWith(`${logDir}/`)).toBe(true);

    expect(result.output.startsWith(text.slice(0, head))).toBe(true);
    expect(result.output.endsWith(text.slice(-tail))).toBe(true);
    const marker = result.output.slice(head, result.output.length - tail);
    const elided = data.length - head - tail;
    expect(marker).toContain(String(elided));
    expect(marker).toContain(String(data.length));
    expect(marker).toContain(logPath);
    expect(marker).toMatch(/elided/);
    expect(marker.length).toBeLessThan(200 + logPath.length);
    expect(result.output.length).toBeLessThan(head + tail + 200 + logPath.length);

    // The log file holds the complete output, byte for byte, readable only by the server's user.
    const logged = await readFile(logPath);
    expect(logged.length).toBe(data.length);
    expect(logged.equals(data)).toBe(true);
    expect((await stat(logPath)).mode & 0o777).toBe(0o600);
  });

  it('SPEC §3: a single chunk crossing the cap is still logged completely', async () => {
    const out = collector(5, 5);
    const first = asciiBytes(7);
    const second = asciiBytes(50);
    out.push(first);
    if (!out.push(second)) await out.drained();
    const result = await out.finish();
    const all = Buffer.concat([first, second]);
    expect(result.truncated).toBe(true);
    expect((await readFile(result.fullOutputPath ?? '')).equals(all)).toBe(true);
    expect(result.output.startsWith(all.subarray(0, 5).toString())).toBe(true);
    expect(result.output.endsWith(all.subarray(-5).toString())).toBe(true);
    expect(result.output).toContain('47 bytes elided');
  });

  it('SPEC §3: valid UTF-8 cut by the head or the tail keeps whole characters, never U+FFFD', async () => {
    // Every character is 2, 3 or 4 bytes, so most cut positions fall inside one.
    const text = 'äé€😀'.repeat(40);
    for (const [head, tail] of [
      [5, 5],
      [6, 7],
      [7, 9],
      [10, 11],
    ] as const) {
      const out = collector(head, tail);
      const bytes = Buffer.from(text);
      if (!out.push(bytes)) await out.drained();
      const result = await out.finish();
      expect(result.truncated).toBe(true);
      expect(result.output).not.toContain('\uFFFD');
      const [kept, rest = ''] = result.output.split(/\n\[… \d+ bytes elided[^\n]*\n/);
      expect(text.startsWith(kept ?? '')).toBe(true);
      expect(text.endsWith(rest)).toBe(true);
      // The marker counts what is really missing between the two.
      const elided = Number(/(\d+) bytes elided/.exec(result.output)?.[1]);
      expect(Buffer.byteLength(kept ?? '') + Buffer.byteLength(rest) + elided).toBe(bytes.length);
    }
  });

  it('SPEC §3: invalid UTF-8 still decodes with replacement after a cut', async () => {
    const out = collector(4, 8);
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0x41]),
      asciiBytes(40),
      Buffer.from([0x80, 0x80, 0x80, 0x80, 0x42]),
    ]);
    if (!out.push(bytes)) await out.drained();
    const result = await out.finish();
    expect(result.output.startsWith('\uFFFDA')).toBe(true);
    expect(result.output.endsWith('\uFFFD\uFFFD\uFFFD\uFFFDB')).toBe(true);
  });

  it('SPEC §3: when the log cannot be written the output is still bounded and says so', async () => {
    const out = new OutputCollector(
      { headBytes: 4, tailBytes: 4, logs: new LogStore(join(stateDir, 'missing', 'dir')) },
      'unwritable',
    );
    await feed(out, asciiBytes(100), [9]);
    const result = await out.finish();
    expect(result.truncated).toBe(true);
    expect(result.fullOutputPath).toBeUndefined();
    expect(result.output).toMatch(/could not be saved/);
    expect(existsSync(join(stateDir, 'missing'))).toBe(false);
  });

  it('SPEC §3: ANSI colour, cursor and OSC sequences are stripped', async () => {
    const out = collector(4096, 4096);
    const coloured =
      '\u001b[1;31merror\u001b[0m: \u001b[38;5;208mbad\u001b[m\n' +
      '\u001b[2J\u001b[H\u001b[10;20Hcursor\u001b[K\u001b[?25l\n' +
      '\u001b]0;window title\u0007title\n' +
      '\u001b]8;;https://example.com\u001b\\link\u001b]8;;\u001b\\\n' +
      '\u001b7saved\u001b8 \u001bMreverse\n' +
      // `tput sgr0` on xterm: a charset selection before the SGR reset; keypad mode; full reset.
      '\u001b[1mbold\u001b(B\u001b[m \u001b=\u001b>keypad \u001bcreset\n';
    await feed(out, Buffer.from(coloured), [5]);
    const result = await out.finish();
    expect(result.output).toBe(
      'error: bad\ncursor\ntitle\nlink\nsaved reverse\nbold keypad reset\n',
    );
    expect(result.output).not.toContain('\u001b');
    expect(stripAnsi('plain [brackets] (stay)')).toBe('plain [brackets] (stay)');
  });

  it('SPEC §3: invalid UTF-8 is decoded with U+FFFD', async () => {
    const out = collector(4096, 4096);
    await feed(out, Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0x63, 0xe2, 0x82]), [2]);
    const result = await out.finish();
    expect(result.output).toBe('a\uFFFDb\uFFFD(c\uFFFD');
  });
});
