// R7.3: the macOS Seatbelt profile and sandbox-exec command line. sandbox-exec cannot run on Linux,
// so the profile is checked as text and the command line as data.
import { describe, expect, it } from 'vitest';
import { SANDBOX_EXEC, seatbeltArgv, seatbeltProfile } from '../../src/sandbox/seatbelt.js';

const scope = '/Users/agent/Projects/my app (v2)';
const cache = '/Users/agent/Library/Caches/ahma-123';
const writable = [scope, '/private/var/folders/xy/T', cache];

/** The top-level s-expressions of a line, or undefined when its parentheses do not balance. */
function topLevelForms(line: string): number | undefined {
  let depth = 0;
  let forms = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '(') {
      if (depth === 0) forms++;
      depth++;
    } else if (c === ')') {
      depth--;
      if (depth < 0) return undefined;
    }
  }
  return depth === 0 && !inString ? forms : undefined;
}

describe('seatbeltProfile', () => {
  it('R7.3: starts with (version 1) and (deny default)', () => {
    const lines = seatbeltProfile(2).split('\n');
    expect(lines[0]).toBe('(version 1)');
    expect(lines[1]).toBe('(deny default)');
  });

  it('R7.3: one rule per line, each a single balanced form', () => {
    const lines = seatbeltProfile(3)
      .split('\n')
      .filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      expect(line, line).toMatch(/^\(.*\)$/);
      expect(topLevelForms(line), line).toBe(1);
    }
  });

  it('R7.3: writable roots are referenced only as (param "WRITABLE_n"), one rule each', () => {
    const profile = seatbeltProfile(3);
    for (const index of [0, 1, 2]) {
      expect(profile).toContain(
        `(allow file-write* (subpath (param "WRITABLE_${String(index)}")))`,
      );
    }
    expect(profile).not.toContain('WRITABLE_3');
    expect(seatbeltProfile(0)).not.toContain('WRITABLE_');
    // Everything else that allows writing is a fixed system path, never a caller's path.
    const writeRules = profile.split('\n').filter((line) => line.startsWith('(allow file-write*'));
    for (const rule of writeRules) {
      expect(rule).toMatch(/\(param "WRITABLE_\d+"\)|"\/private\/|"\/dev\/|#"\^\/dev\//);
    }
  });

  it('R7.3: allows writes to /private/tmp and /private/var/folders', () => {
    const profile = seatbeltProfile(1);
    expect(profile).toContain('(allow file-write* (subpath "/private/tmp"))');
    expect(profile).toContain('(allow file-write* (subpath "/private/var/folders"))');
  });
});

describe('seatbeltArgv', () => {
  const hostile = [
    'sh',
    '-c',
    'echo "$HOME"; rm -rf ~ `id` $(whoami)',
    "it's",
    '") (allow file-write* (subpath "/"))',
    '2>&1',
    '',
    'line\nbreak',
    '*',
  ];
  const argv = seatbeltArgv(writable, hostile);

  it('R7.3: runs /usr/bin/sandbox-exec with the profile via -p', () => {
    expect(argv[0]).toBe(SANDBOX_EXEC);
    expect(SANDBOX_EXEC).toBe('/usr/bin/sandbox-exec');
    expect(argv[1]).toBe('-p');
    expect(argv[2]).toBe(seatbeltProfile(writable.length));
  });

  it('R7.3: the profile contains no literal path of the scope', () => {
    const profile = argv[2] ?? '';
    for (const path of writable) expect(profile).not.toContain(path);
    expect(profile).not.toContain('Users');
  });

  it('R7.3: passes -D WRITABLE_n=<path> per writable root, in order', () => {
    expect(argv.slice(3, 3 + 2 * writable.length)).toEqual(
      writable.flatMap((path, index) => ['-D', `WRITABLE_${String(index)}=${path}`]),
    );
  });

  it('R7.3: then /bin/sh -c \'exec "$@" 2>&1\' sh <argv…>, hostile words untouched', () => {
    const rest = argv.slice(3 + 2 * writable.length);
    expect(rest).toEqual(['/bin/sh', '-c', 'exec "$@" 2>&1', 'sh', ...hostile]);
    // Each word is its own element, identical to the input (not joined, quoted or escaped).
    expect(rest.slice(4)).toStrictEqual(hostile);
    expect(argv).toHaveLength(3 + 2 * writable.length + 4 + hostile.length);
  });

  it('R7.3: with no writable roots there are no -D parameters', () => {
    expect(seatbeltArgv([], ['true'])).toEqual([
      SANDBOX_EXEC,
      '-p',
      seatbeltProfile(0),
      '/bin/sh',
      '-c',
      'exec "$@" 2>&1',
      'sh',
      'true',
    ]);
  });
});
