// The livelog tool's view of the output (SPEC §2 Compatibility, livelog): lines decoded across
// chunk boundaries and bounded, chunks by line count, by time since their first line, and by size.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Chunker } from '../../src/livelog/chunker.js';
import { LineSplitter } from '../../src/livelog/lines.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('LineSplitter', () => {
  it('SPEC §2 livelog: lines are split as they complete, UTF-8 and CRLF handled, escapes removed', () => {
    const lines = new LineSplitter();
    const euro = Buffer.from('€');
    expect(lines.push(Buffer.concat([Buffer.from('a\r\nb'), euro.subarray(0, 1)]))).toEqual(['a']);
    expect(
      lines.push(Buffer.concat([euro.subarray(1), Buffer.from('\n\u001b[31mred\u001b[0m\nlast')])),
    ).toEqual(['b€', 'red']);
    expect(lines.end()).toEqual(['last']);
    expect(lines.end()).toEqual([]);
  });

  it('SPEC §3 bounded output: an endless line is cut at the limit and says how much was cut', () => {
    const lines = new LineSplitter(10);
    for (let i = 0; i < 1000; i++) expect(lines.push(Buffer.from('x'.repeat(1000)))).toEqual([]);
    const [line] = lines.push(Buffer.from('\n'));
    expect(line).toBe(`${'x'.repeat(10)} [… ${String(1_000_000 - 10)} characters cut]`);
  });
});

describe('Chunker', () => {
  it('SPEC §2 livelog: a chunk goes at chunk_max_lines lines', () => {
    const chunks: string[] = [];
    const chunker = new Chunker({
      maxLines: 3,
      maxSeconds: 60,
      maxChars: 1000,
      onChunk: (c) => chunks.push(c),
    });
    for (const line of ['1', '2', '3', '4', '5']) chunker.add(line);
    expect(chunks).toEqual(['1\n2\n3']);
    chunker.flush();
    expect(chunks).toEqual(['1\n2\n3', '4\n5']);
    chunker.flush();
    expect(chunks).toHaveLength(2);
  });

  it('SPEC §2 livelog: a chunk goes chunk_max_seconds after its first line', () => {
    vi.useFakeTimers();
    const chunks: string[] = [];
    const chunker = new Chunker({
      maxLines: 50,
      maxSeconds: 2,
      maxChars: 1000,
      onChunk: (c) => chunks.push(c),
    });
    chunker.add('a');
    vi.advanceTimersByTime(1500);
    chunker.add('b');
    expect(chunks).toEqual([]);
    vi.advanceTimersByTime(500);
    expect(chunks).toEqual(['a\nb']);
    // Nothing is sent while nothing arrives.
    vi.advanceTimersByTime(10_000);
    expect(chunks).toEqual(['a\nb']);
  });

  it('SPEC §2 livelog: a chunk goes early when it would outgrow the size bound', () => {
    const chunks: string[] = [];
    const chunker = new Chunker({
      maxLines: 50,
      maxSeconds: 60,
      maxChars: 10,
      onChunk: (c) => chunks.push(c),
    });
    chunker.add('12345');
    chunker.add('67890');
    expect(chunks).toEqual(['12345']);
    chunker.flush();
    expect(chunks).toEqual(['12345', '67890']);
  });
});
