// NFR4.3: the audit line's argv is bounded per word and in total, marks what it leaves out, and
// carries the SHA-256 of the full argv (each word's UTF-8 and a NUL, as /proc/PID/cmdline).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditedArgv } from '../../src/calls/audit-argv.js';

const sha = (bytes: string) => createHash('sha256').update(bytes, 'utf8').digest('hex');

describe('auditedArgv', () => {
  it('NFR4.3: a short argv is kept whole, unmarked', () => {
    expect(auditedArgv(['git', 'commit', '-m', 'héllo'])).toEqual({
      argv: ['git', 'commit', '-m', 'héllo'],
      argv_elided: false,
      argv_sha256: sha('git\0commit\0-m\0héllo\0'),
    });
    expect(auditedArgv([]).argv_sha256).toBe(sha(''));
    // Word boundaries count: ['a b'] and ['a', 'b'] differ.
    expect(auditedArgv(['a b']).argv_sha256).not.toBe(auditedArgv(['a', 'b']).argv_sha256);
  });

  it('NFR4.3: a long word keeps its first 768 and last 256 characters around a marker', () => {
    const word = `${'h'.repeat(1000)}${'m'.repeat(5000)}${'t'.repeat(1000)}`;
    const { argv, argv_elided } = auditedArgv(['bash', '-c', word]);
    expect(argv_elided).toBe(true);
    expect(argv[2]).toBe(
      `${'h'.repeat(768)}…[${String(7000 - 1024)} chars elided]…${'t'.repeat(256)}`,
    );
  });

  it('NFR4.3: a long word is never cut inside a surrogate pair', () => {
    const word = `${'a'.repeat(767)}😀${'b'.repeat(2000)}`;
    const [, capped = ''] = auditedArgv(['x', word]).argv;
    expect(capped.startsWith(`${'a'.repeat(767)}…`)).toBe(true);
  });

  it('NFR4.3: past 8192 characters in all, the remaining words become one marker', () => {
    const words = Array.from(
      { length: 100 },
      (_, i) => `${String(i).padStart(3, '0')}${'w'.repeat(97)}`,
    );
    const { argv, argv_elided } = auditedArgv(words);
    expect(argv_elided).toBe(true);
    expect(argv.slice(0, -1)).toEqual(words.slice(0, 81));
    expect(argv.at(-1)).toBe('…[19 more words elided]');
  });
});
