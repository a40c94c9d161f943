// Reads a usage line — `Usage: grep [OPTION]... PATTERNS [FILE]...`, `usage: git clone [<options>]
// [--] <repo> [<dir>]` — for its positionals, and (git's root help lists its options only there)
// for the options its bracket groups spell.
import type { HelpOption, HelpPositional } from '../model.js';
import { isPathName, makeValue } from './text-values.js';

/** The first usage of the help, its wrapped continuation lines joined; undefined without one. */
export function usageText(text: string): string | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const inline = /^\s*usage:\s*(\S.*)$/i.exec(line);
    let first = inline?.[1];
    let k = i + 1;
    // clap 2 and cobra put the usage on the line below `USAGE:` / `Usage:`.
    if (first === undefined && /^\s*usage:\s*$/i.test(line)) {
      first = (lines[k] ?? '').trim();
      k++;
    }
    if (first === undefined || first === '') continue;
    const parts = [first.replace(/\t/g, ' ')];
    // Wrapped usages (git commit's) continue on deeper lines that open with a bracket.
    for (; k < lines.length; k++) {
      const next = lines[k] ?? '';
      if (!/^\s{4,}[[(<]/.test(next)) break;
      parts.push(next.trim());
    }
    return parts.join(' ');
  }
  return undefined;
}

/** Top-level tokens of a usage (brackets kept whole). */
export function usageTokens(usage: string): string[] {
  const tokens: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of usage) {
    if ('[(<{'.includes(ch)) depth++;
    if (')]>}'.includes(ch)) depth = Math.max(0, depth - 1);
    if (/\s/.test(ch) && depth === 0) {
      if (current !== '') tokens.push(current);
      current = '';
    } else current += ch;
  }
  if (current !== '') tokens.push(current);
  return tokens;
}

/** Words that stand for options or a subcommand, not for positionals. */
const NOT_POSITIONAL =
  /^(?:options?|flags?|option\.\.\.|options\.\.\.|command|commands|subcommand|args|arguments|global[ _-]options|\+toolchain|--)$/i;

/** The positionals of a usage: `PATTERNS`, `[FILE]...`, `<repo>`, `[<pathspec>...]`, `SRC [SRC]...`. */
export function usagePositionals(usage: string): HelpPositional[] {
  const tokens = usageTokens(usage);
  // Skip the program and the bare words of the subcommand path (`git remote add`) after it.
  let start = 1;
  while (start < tokens.length && /^[a-z][\w-]*$/.test(tokens[start] ?? '')) start++;
  const positionals: HelpPositional[] = [];
  for (const token of tokens.slice(start)) {
    const read = readPositional(token);
    if (read === undefined) continue;
    const same = positionals.findIndex((positional) => positional.name === read.name);
    if (same >= 0) {
      // `SRC [SRC]...`: one positional, repeated.
      const first = positionals[same];
      if (first !== undefined) positionals[same] = { ...first, repeated: true };
      continue;
    }
    positionals.push(read);
  }
  return positionals;
}

function readPositional(token: string): HelpPositional | undefined {
  let text = token;
  let repeated = false;
  let required = true;
  if (text.endsWith('...')) {
    repeated = true;
    text = text.slice(0, -3);
  }
  if (text.startsWith('[') && text.endsWith(']')) {
    required = false;
    text = text.slice(1, -1).trim();
    if (text.endsWith('...')) {
      repeated = true;
      text = text.slice(0, -3).trim();
    }
    // `[PATH ...]`
    if (/ \.\.\.$/.test(token.slice(0, -1))) repeated = true;
    text = text.replace(/\s*\.\.\.$/, '');
  }
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (text.startsWith('<') && text.endsWith('>')) text = text.slice(1, -1);
  if (text.endsWith('...')) {
    repeated = true;
    text = text.slice(0, -3);
  }
  if (text.startsWith('-') || /[[\]|()<>{}=:]/.test(text) || text === '') return undefined;
  // `[OPTIONS]`, `<command>`, `[<args>]`, `[--]`: not positionals.
  if (NOT_POSITIONAL.test(text)) return undefined;
  const name = text.toLowerCase().replace(/\s+/g, '-');
  return { name, required, repeated, ...(isPathName(name) ? { path: true } : {}) };
}

/**
 * The options a usage's bracket groups spell: `[-C <path>]`, `[--exec-path[=<path>]]`,
 * `[-v | --version]` (a short and a long of the same letter are one option).
 */
export function usageOptions(usage: string): HelpOption[] {
  const options: HelpOption[] = [];
  for (const token of usageTokens(usage)) {
    if (!token.startsWith('[') || !token.endsWith(']')) continue;
    const inner = token.slice(1, -1).trim();
    if (!inner.startsWith('-')) continue;
    // `--[no-]status` is `--status` and `--no-status`.
    const alternatives = inner
      .split(/\s+\|\s+/)
      .flatMap((alternative) =>
        alternative.startsWith('--[no-]')
          ? [`--${alternative.slice(7)}`, `--no-${alternative.slice(7)}`]
          : [alternative],
      );
    let pendingShort: HelpOption | undefined;
    for (const alternative of alternatives) {
      const option = usageOption(alternative);
      if (option === undefined) continue;
      if (
        option.long !== undefined &&
        pendingShort?.short !== undefined &&
        pendingShort.value === undefined
      ) {
        const sameLetter = option.long[0]?.toLowerCase() === pendingShort.short.toLowerCase();
        if (sameLetter) {
          options.push({ ...option, short: pendingShort.short });
          pendingShort = undefined;
          continue;
        }
      }
      if (pendingShort !== undefined) options.push(pendingShort);
      pendingShort = undefined;
      if (option.long === undefined) pendingShort = option;
      else options.push(option);
    }
    if (pendingShort !== undefined) options.push(pendingShort);
  }
  return options;
}

function usageOption(text: string): HelpOption | undefined {
  const match = /^(--?)([A-Za-z0-9][\w-]*)(?:(\[?=)(.+?)\]?|\s+(\S.*))?$/.exec(text.trim());
  if (match === null) return undefined;
  const [, dashes, name, glue, glued, spaced] = match;
  if (dashes === '-' && (name ?? '').length > 1) return undefined;
  const raw = glued ?? spaced;
  const key = dashes === '-' ? { short: name ?? '' } : { long: name ?? '' };
  if (raw === undefined) return key;
  return { ...key, value: makeValue(raw, glue === '[=') };
}
