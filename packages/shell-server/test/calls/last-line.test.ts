// The last line of a running command's output, as its heartbeats show it (SPEC §12).
import { describe, expect, it } from 'vitest';
import { LastLine } from '../../src/calls/last-line.js';

const fed = (...chunks: string[]) => {
  const last = new LastLine();
  for (const chunk of chunks) last.push(Buffer.from(chunk));
  return last.line;
};

describe('LastLine', () => {
  it('SPEC §12: nothing printed yet is no line', () => {
    expect(fed()).toBeUndefined();
    expect(fed('\n\n  \n')).toBeUndefined();
  });

  it('SPEC §12: the last non-blank line, across chunks, whatever ends it', () => {
    expect(fed('one\ntwo\n\n')).toBe('two');
    expect(fed('compil', 'ing a\nlinking b\r\n')).toBe('linking b');
    expect(fed('old\n', '\n   \n')).toBe('old');
  });

  it('SPEC §12: a line being written (a progress bar redrawn with \\r) is the latest', () => {
    expect(fed('step 1\n', '[##   ] 40%\r[#### ] 80%')).toBe('[#### ] 80%');
  });

  it('SPEC §12: colours are stripped, and a long line is cut', () => {
    expect(fed('\u001b[32mok\u001b[0m done\n')).toBe('ok done');
    const line = fed(`${'x'.repeat(5000)}\n`);
    expect(line).toBe(`${'x'.repeat(200)}…`);
  });

  it('SPEC §12: a line without end is kept bounded however long it grows', () => {
    const last = new LastLine();
    for (let i = 0; i < 1000; i++) last.push(Buffer.from('y'.repeat(1000)));
    expect(last.line).toBe(`${'y'.repeat(200)}…`);
  });
});
