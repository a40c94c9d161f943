// Reads option lines — `-e, --regexp=PATTERNS   use PATTERNS`, `--verbose, -v   text`,
// `-p, --package [<SPEC>]`, `--arg a v   text`, `-i[SUFFIX], --in-place[=SUFFIX]` — with the
// description that follows on the same line or on the deeper-indented lines below. GNU, git,
// clap and the generic reading all lay options out this way, differing only in indentation.
import { shorten } from './cli-common.js';
import type { HelpOption } from '../model.js';
import { makeValue } from './text-values.js';

/** One option as its spec spells it, before the description is known. */
interface Spec {
  shorts: string[];
  longs: string[];
  value?: { raw: string; optional: boolean };
  repeatable: boolean;
}

/** Where an option spec must start: deeper lines are description text, not options. */
const MAX_OPTION_INDENT = 8;
const OPTION_START = /^(\s*)(--?[A-Za-z0-9?@#.:])/;

/** The index just past a bracketed run starting at `start` (`<a[b]>`, `[=<x>]`), or -1. */
function closeBracket(text: string, start: number): number {
  const pairs: Record<string, string> = { '<': '>', '[': ']', '(': ')', '{': '}' };
  const stack: string[] = [];
  for (let i = start; i < text.length; i++) {
    const ch = text[i] ?? '';
    const close = pairs[ch];
    if (close !== undefined) stack.push(close);
    else if (ch === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

/** `[=X]`, `[<x>]`: the whole value is optional (not git's `[(amend|reword):]commit`). */
function wholeBracket(raw: string): boolean {
  return raw.startsWith('[') && closeBracket(raw, 0) === raw.length;
}

/** A placeholder word starting at `start`: up to a space or comma outside brackets. */
function readWord(text: string, start: number): number {
  let i = start;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (ch === ' ' || ch === '\t' || ch === ',') break;
    if ('<[({'.includes(ch)) {
      const end = closeBracket(text, i);
      if (end < 0) return -1;
      i = end;
    } else i++;
  }
  return i;
}

/**
 * Reads the spec at the start of `text` (already trimmed of indentation). Returns the spec and the
 * rest of the line (the description), or undefined when the text is not an option spec.
 */
export function readSpec(text: string): { spec: Spec; rest: string } | undefined {
  const spec: Spec = { shorts: [], longs: [], repeatable: false };
  let i = 0;
  for (;;) {
    const name = /^(--?)([A-Za-z0-9?@#.:][\w.#+-]*)/.exec(text.slice(i));
    if (name === null) return undefined;
    const [matched, dashes, dotted] = name as unknown as [string, string, string];
    // clap's `--verbose...`: the dots say the flag repeats, they are not part of the name.
    const word = dotted.replace(/\.{3}$/, '');
    const whole = matched.slice(0, matched.length - (dotted.length - word.length));
    if (dashes === '-' && word.length > 1) {
      // `-NUM`, `-Olevel`: a single dash before a word is not a short option (find's are read
      // by gnu-find.ts); `-u<mode>` style glued values only exist in usage lines.
      return undefined;
    }
    if (dashes === '-') spec.shorts.push(word);
    else spec.longs.push(word);
    i += whole.length;
    // The value, glued (`=X`, `[=X]`, `[X]`) or after one space (`X`, `<x>`, `[<x>]`, `a v`).
    const ch = text[i];
    if (ch === '=' || ch === '[' || ch === '<') {
      const end = readWord(text, i);
      if (end < 0) return undefined;
      const raw = text.slice(i, end);
      spec.value = { raw, optional: wholeBracket(raw) };
      i = end;
    } else if (ch === ' ' && text[i + 1] !== ' ' && text[i + 1] !== '-' && i + 1 < text.length) {
      const taken = readSpacedValue(text, i + 1);
      if (taken !== undefined) {
        spec.value = { raw: taken.raw, optional: wholeBracket(taken.raw) };
        i = taken.end;
      }
    }
    if (spec.value?.raw.endsWith('...') === true) spec.repeatable = true;
    if (text.startsWith('...', i)) {
      spec.repeatable = true;
      i += 3;
    }
    // `, --next`, `,` at the end of the line (grep's `--color[=WHEN],` then `--colour…` below).
    const more = /^,\s*(?=-)/.exec(text.slice(i));
    if (more !== null) {
      i += more[0].length;
      continue;
    }
    if (text[i] === ',' && text.slice(i + 1).trim() === '') i++;
    break;
  }
  const rest = text.slice(i);
  // The description is set off by two spaces or a tab; one space when the spec fills its column
  // (tar's `--exclude-caches-under exclude…`, curl's `--aws-sigv4 <…> Use…`), but `-x -y` is not one.
  if (rest.length > 0 && !/^(?:\s{2,}|\t| [^\s-])/.test(rest)) return undefined;
  return { spec, rest: rest.trim() };
}

/**
 * A value after one space: `<x>` or `[<x>]` always; a bare word (`N`, `script`, jq's `a v`) only
 * when the run of words ends the spec (two spaces, a comma, the end of the line).
 */
function readSpacedValue(text: string, start: number): { raw: string; end: number } | undefined {
  const first = text[start];
  // rsync's `--help, -h (*)`: a note, not a value.
  if (first === '(') return undefined;
  if (first === '<' || first === '[') {
    const end = readWord(text, start);
    return end < 0 ? undefined : { raw: text.slice(start, end), end };
  }
  let end = start;
  for (let words = 0; words < 3; words++) {
    const wordEnd = readWord(text, end);
    if (wordEnd < 0 || wordEnd === end) return undefined;
    end = wordEnd;
    const after = text.slice(end);
    if (/^(?:\s{2,}|\t|,|\.\.\.|$)/.test(after)) return { raw: text.slice(start, end), end };
    if (!/^ [^\s-]/.test(after)) return undefined;
    end += 1;
  }
  return undefined;
}

/** Joins an option's own description and its continuation lines into one first sentence. */
export function firstSentence(text: string): string | undefined {
  const joined = text.replace(/\s+/g, ' ').trim();
  if (joined.length === 0) return undefined;
  // The first `. ` that ends a sentence (not `e.g. `, `...`), a `; `, or clap's bracketed notes.
  const cut =
    /^(.*?)(?:(?<!\b(?:e\.g|i\.e|etc|vs)|\.)\.\s|;\s| \[(?:possible values|default|env|aliases?):|$)/.exec(
      joined,
    );
  const sentence = (cut?.[1] ?? joined).replace(/[.;,:]$/, '').trim();
  return sentence.length > 200 ? `${sentence.slice(0, 197)}...` : sentence;
}

function toOption(spec: Spec, description: string): HelpOption {
  const short = spec.shorts.find((name) => name.length === 1);
  const long = spec.longs[0];
  const text = firstSentence(description);
  return {
    ...(long === undefined ? {} : { long }),
    ...(short === undefined ? {} : { short }),
    ...(spec.value === undefined
      ? {}
      : { value: makeValue(spec.value.raw, spec.value.optional, description) }),
    ...(text === undefined ? {} : { description: text }),
    ...(spec.repeatable ||
    /can be (?:given|used|repeated|specified) (?:more than once|multiple times)/i.test(description)
      ? { repeatable: true }
      : {}),
  };
}

export interface OptionReading {
  options: HelpOption[];
  /** Lines that start like an option but could not be read. */
  unparsed: string[];
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Reads every option line of `lines` (those whose spec starts at most `maxIndent` deep). */
export function readOptions(
  lines: readonly string[],
  maxIndent = MAX_OPTION_INDENT,
): OptionReading {
  const options: HelpOption[] = [];
  const unparsed: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/\t/g, '        ');
    const start = OPTION_START.exec(line);
    if (start === null || (start[1] ?? '').length > maxIndent) continue;
    let specText = line.trim();
    let j = i;
    // `--color[=WHEN],` continued on the next line.
    while (specText.endsWith(',') && OPTION_START.test(lines[j + 1] ?? '')) {
      j++;
      specText = `${specText} ${(lines[j] ?? '').trim()}`;
    }
    const read = readSpec(specText);
    if (read === undefined) {
      unparsed.push(shorten(specText));
      continue;
    }
    const indent = indentOf(line);
    const description = [read.rest];
    for (let k = j + 1; k < lines.length; k++) {
      const next = lines[k] ?? '';
      if (next.trim() === '' || indentOf(next) <= indent) break;
      if (OPTION_START.test(next) && indentOf(next) <= maxIndent) break;
      description.push(next.trim());
    }
    options.push(toOption(read.spec, description.join(' ')));
    i = j;
  }
  return { options: mergeOptions(options), unparsed };
}

/** The same option listed twice (tar's `--null` in a footer, find's usage and list): the first wins. */
export function mergeOptions(options: readonly HelpOption[]): HelpOption[] {
  const seen = new Set<string>();
  const merged: HelpOption[] = [];
  for (const option of options) {
    const key = option.long === undefined ? `-${option.short ?? ''}` : `--${option.long}`;
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(option);
  }
  return merged;
}
