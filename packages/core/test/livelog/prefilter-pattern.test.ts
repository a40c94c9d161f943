// prefilter_regex in Rust regex syntax, as upstream writes it, run by JavaScript (SPEC §2
// Compatibility): what translates is translated, what does not is refused, never matched otherwise.
import { describe, expect, it } from 'vitest';
import { compilePrefilter } from '../../src/livelog/prefilter-pattern.js';

const compiled = (pattern: string): RegExp => {
  const result = compilePrefilter(pattern);
  if (!result.ok) throw new Error(result.problem);
  return new RegExp(result.pattern.source, result.pattern.flags);
};

const problem = (pattern: string): string => {
  const result = compilePrefilter(pattern);
  if (result.ok) throw new Error(`compiled: ${pattern}`);
  return result.problem;
};

describe.concurrent('compilePrefilter', () => {
  it("SPEC §2 livelog: upstream android-logcat's pattern matches logcat error lines and not info lines", () => {
    const regex = compiled(
      '(?i)(FATAL|ANR\\b|Exception|SIGSEGV|SIGABRT|SIGILL|NativeCrash|beginning of crash|backtrace|tombstone|StrictMode|\\sE\\s|\\sF\\s|/E\\s|/F\\s)',
    );
    expect(regex.test('05-12 10:00:01.123  1234  1234 E AndroidRuntime: boom')).toBe(true);
    expect(regex.test('05-12 10:00:01.123  1234  1234 I ActivityManager: started')).toBe(false);
    expect(regex.test('java.lang.nullpointerexception at Foo')).toBe(true);
    expect(regex.test('ANRs are fine here')).toBe(false);
  });

  it('SPEC §2 livelog: leading flags, named groups, \\A and \\z, \\pL and POSIX classes are translated', () => {
    expect(compiled('(?is)a.b').flags).toBe('isu');
    expect(compiled('(?i-s)x').test('X')).toBe(true);
    expect(compiled('(?P<level>[EF])/').exec('E/Tag')?.groups?.['level']).toBe('E');
    expect(compiled('\\Apanic').test('a panic')).toBe(false);
    expect(compiled('\\Apanic').test('panic!')).toBe(true);
    expect(compiled('done\\z').test('done\n')).toBe(false);
    expect(compiled('^\\pL+$').test('Ärger')).toBe(true);
    expect(compiled('^[[:digit:][:upper:]]+$').test('E42')).toBe(true);
    expect(compiled('^[[:digit:]]+$').test('4a')).toBe(false);
    // A class ends at its first unescaped "]" (a "]" first in it is a literal one).
    expect(compiled('^[\\[x][[:digit:]]$').test('[1')).toBe(true);
    expect(compiled('^[]a]+$').test(']a]')).toBe(true);
    // Escapes Rust allows and JavaScript's "u" mode does not still compile.
    expect(compiled('a\\-b').test('a-b')).toBe(true);
  });

  it('SPEC §2 livelog: what JavaScript cannot say is refused with the reason', () => {
    expect(problem('(?x) a b')).toBe(
      'takes the flag "x" ((?x)), which JavaScript\'s regular expressions do not have; use i, m or s',
    );
    expect(problem('a(?i)b')).toMatch(/^sets flags in the middle/);
    expect(problem('(?i:a)b')).toMatch(/^sets flags for a group/);
    expect(problem('[[:nope:]]')).toBe('uses the unknown class [:nope:]');
    expect(problem('(a')).toMatch(/^is not a valid regular expression: /);
  });
});
