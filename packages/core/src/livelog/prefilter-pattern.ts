// A livelog `prefilter_regex` as JavaScript runs it. Upstream compiles it with Rust's `regex`
// crate, whose syntax is close to JavaScript's but not the same; what upstream files write is
// translated (a leading `(?i)`, `(?P<name>…)`, `\A`, `\z`, `\pL`, `[[:alpha:]]`), and what has no
// JavaScript equivalent is refused with a message that says so, never silently matched otherwise.

/** A prefilter ready for `new RegExp(source, flags)`. */
export interface PrefilterPattern {
  /** As the file wrote it (shown in messages). */
  readonly written: string;
  readonly source: string;
  readonly flags: string;
}

export type PrefilterCompilation =
  | { readonly ok: true; readonly pattern: PrefilterPattern }
  | { readonly ok: false; readonly problem: string };

/** Rust's POSIX classes (ASCII), inside a bracket class. */
const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Flags of a group like `(?i)` or `(?i-s:`; group 1: the flags, group 2: ")" or ":". */
const FLAG_GROUP = /^\(\?([A-Za-z-]+)([):])/;

export function compilePrefilter(written: string): PrefilterCompilation {
  const flags = new Set<string>();
  let rest = written;
  // Flags at the very start apply to the whole pattern, as JavaScript's flags do.
  for (let group = FLAG_GROUP.exec(rest); group?.[2] === ')'; group = FLAG_GROUP.exec(rest)) {
    const problem = applyFlags(group[1] ?? '', flags);
    if (problem !== undefined) return { ok: false, problem };
    rest = rest.slice(group[0].length);
  }
  const translated = translate(rest);
  if (typeof translated !== 'string') return translated;
  const base = [...flags].sort().join('');
  // With "u" where it compiles (\p{…}, astral characters); Rust accepts escapes like "\-" that
  // "u" refuses, so a pattern without \p is also tried without it.
  const unicode = tryCompile(translated, `${base}u`);
  if (unicode === undefined) {
    return { ok: true, pattern: { written, source: translated, flags: `${base}u` } };
  }
  if (!/\\[pP]/.test(translated) && tryCompile(translated, base) === undefined) {
    return { ok: true, pattern: { written, source: translated, flags: base } };
  }
  return { ok: false, problem: `is not a valid regular expression: ${unicode}` };
}

function applyFlags(letters: string, flags: Set<string>): string | undefined {
  let on = true;
  for (const letter of letters) {
    if (letter === '-') {
      on = false;
    } else if (letter === 'i' || letter === 'm' || letter === 's') {
      if (on) flags.add(letter);
      else flags.delete(letter);
    } else if (letter !== 'u') {
      // u: Rust's Unicode mode, on by default (and "u" is used where it compiles).
      return `takes the flag "${letter}" ((?${letters})), which JavaScript's regular expressions do not have; use i, m or s`;
    }
  }
  return undefined;
}

/** The pattern in JavaScript syntax, or the refusal of what cannot be said there. */
function translate(pattern: string): string | { ok: false; problem: string } {
  let out = '';
  let inClass = false;
  /** Where the open class's body starts in `out` (a "]" first in it is a literal). */
  let classBody = 0;
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at] ?? '';
    const next = pattern[at + 1] ?? '';
    if (char === '\\') {
      const single = /^[pP]$/.test(next) && /^[A-Za-z]$/.test(pattern[at + 2] ?? '');
      if (single) {
        // Rust's one-letter property (\pL) is \p{L} in JavaScript.
        out += `\\${next}{${pattern[at + 2] ?? ''}}`;
        at += 2;
      } else if (!inClass && next === 'A') {
        out += '(?<![\\s\\S])';
        at += 1;
      } else if (!inClass && next === 'z') {
        out += '(?![\\s\\S])';
        at += 1;
      } else {
        out += char + next;
        at += 1;
      }
      continue;
    }
    if (inClass) {
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(at));
      if (posix !== null) {
        const ranges = POSIX_CLASSES[posix[2] ?? ''];
        if (ranges === undefined) {
          return { ok: false, problem: `uses the unknown class [:${posix[2] ?? ''}:]` };
        }
        if (posix[1] === '^') {
          return {
            ok: false,
            problem: `uses a negated class [:^${posix[2] ?? ''}:], which JavaScript cannot say inside brackets`,
          };
        }
        out += ranges;
        at += posix[0].length - 1;
        continue;
      }
      const body = out.slice(classBody);
      if (char === ']' && (body === '' || body === '^')) {
        // Rust reads a "]" first in a class as itself; JavaScript would end the class there.
        out += '\\]';
        continue;
      }
      if (char === ']') inClass = false;
      out += char;
      continue;
    }
    if (char === '[') {
      inClass = true;
      out += char;
      classBody = out.length;
      continue;
    }
    if (char === '(' && pattern.startsWith('(?P<', at)) {
      // Rust's named group (?P<name>…) is (?<name>…) in JavaScript.
      out += '(?<';
      at += 3;
      continue;
    }
    const group = char === '(' ? FLAG_GROUP.exec(pattern.slice(at)) : null;
    if (group !== null) {
      return {
        ok: false,
        problem:
          group[2] === ')'
            ? `sets flags in the middle ((?${group[1] ?? ''})); JavaScript takes flags for the whole pattern only: put them at its start`
            : `sets flags for a group ((?${group[1] ?? ''}:…)), which JavaScript's regular expressions cannot; put the flags at the start of the pattern`,
      };
    }
    out += char;
  }
  return out;
}

/** The compile error's message, or undefined when it compiles. */
function tryCompile(source: string, flags: string): string | undefined {
  try {
    new RegExp(source, flags);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
