// SPEC §6: newline framing with bounded memory: lines up to the limit come out whole, longer ones
// are reported (size, head, tail) without being kept, across any chunking.
import { describe, expect, it } from 'vitest';
import { LineFramer, type Frame } from '../../src/jsonrpc/line-framer.js';

const text = (frame: Frame | undefined) =>
  frame?.kind === 'line' ? frame.bytes.toString('utf8') : frame;

/** Feeds `input` in chunks of `size` bytes and collects every frame. */
function frames(framer: LineFramer, input: string, size: number): Frame[] {
  const bytes = Buffer.from(input);
  const out: Frame[] = [];
  for (let at = 0; at < bytes.length; at += size)
    out.push(...framer.push(bytes.subarray(at, at + size)));
  return out;
}

describe('LineFramer', () => {
  it('SPEC §6: splits lines whatever the chunking, keeping empty lines', () => {
    for (const size of [1, 2, 3, 7, 100]) {
      const out = frames(new LineFramer(100), 'one\ntwo\n\nthree\n', size);
      expect(out.map(text), String(size)).toEqual(['one', 'two', '', 'three']);
    }
  });

  it('SPEC §6: a line of exactly the limit passes; one byte more is oversized, and the next line is whole', () => {
    const framer = new LineFramer(5);
    expect(frames(framer, '12345\n', 2).map(text)).toEqual(['12345']);
    const out = frames(framer, '123456\nok\n', 2);
    expect(out[0]).toMatchObject({ kind: 'oversized', size: 6 });
    expect(text(out[1])).toBe('ok');
  });

  it('SPEC §6: an oversized line keeps only its first and last 4 KiB', () => {
    const framer = new LineFramer(10_000);
    const line = `HEAD${'x'.repeat(100_000)}TAIL`;
    const [frame] = frames(framer, `${line}\n`, 1000);
    if (frame?.kind !== 'oversized') throw new Error('expected an oversized frame');
    expect(frame.size).toBe(line.length);
    expect(frame.head.length).toBe(4096);
    expect(frame.head.toString().startsWith('HEAD')).toBe(true);
    expect(frame.tail.length).toBe(4096);
    expect(frame.tail.toString().endsWith('xTAIL')).toBe(true);
  });

  it('SPEC §6: at the end of input the unterminated last line is a frame; nothing pending, none', () => {
    const framer = new LineFramer(10);
    expect(framer.push(Buffer.from('a\nbc'))).toHaveLength(1);
    expect(text(framer.end())).toBe('bc');
    expect(framer.end()).toBeUndefined();
    framer.push(Buffer.from('x'.repeat(20)));
    expect(framer.end()).toMatchObject({ kind: 'oversized', size: 20 });
  });
});
