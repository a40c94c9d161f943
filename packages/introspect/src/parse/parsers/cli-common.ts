// Pieces the cobra, argparse, npm and commander readers share: cutting a help into titled
// sections, reading `-s, --long VALUE   description` rows with their continuation lines,
// splitting an option spec into names and placeholder, and reading positionals off a usage line.
// Each family decides what a section means and what its placeholders say about the type.
import type { HelpModel, HelpPositional, HelpStyle } from '../model.js';
import { isPathWord } from './cli-values.js';

export interface Section {
  /** The heading without its colon (`Options`, `Global Flags`, `FLAGS`); '' for text before any. */
  readonly title: string;
  /** The text after the colon on the heading line (`Usage:  docker [OPTIONS] COMMAND`). */
  readonly inline: string;
  readonly lines: readonly string[];
}

/** A heading: unindented, `Title:` (argparse's `positional arguments:` too) or gh's `CORE COMMANDS`. */
const COLON_HEADING = /^([A-Za-z][\w ()/,.'-]{0,60}?):(?:\s+(\S.*))?$/;
const CAPS_HEADING = /^([A-Z][A-Z -]{1,40})$/;

export function splitSections(text: string): Section[] {
  const out: { title: string; inline: string; lines: string[] }[] = [
    { title: '', inline: '', lines: [] },
  ];
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    const colon = /^\S/.test(line) ? COLON_HEADING.exec(line.trimEnd()) : null;
    const caps = /^\S/.test(line) ? CAPS_HEADING.exec(line.trimEnd()) : null;
    // `Usage: prog [options]` (and npm's `aliases: i, add`) is a heading with inline text; other
    // `Word: text` lines are prose (`Sucrase: super-fast Babel alternative.`).
    const inlineOk = colon?.[2] === undefined || /^(?:usage|aliases)$/i.test(colon[1] ?? '');
    if (colon?.[1] !== undefined && inlineOk && colon[1].split(' ').length <= 5) {
      out.push({ title: colon[1].trim(), inline: (colon[2] ?? '').trim(), lines: [] });
    } else if (caps?.[1] !== undefined) {
      out.push({ title: caps[1].trim(), inline: '', lines: [] });
    } else {
      out[out.length - 1]?.lines.push(line);
    }
  }
  return out;
}

export interface Row {
  /** `-f, --filename strings` / `-b ADDRESS, --bind ADDRESS` / `deploy [options] <env>`. */
  readonly spec: string;
  /** The description with its continuation lines joined by one space. */
  readonly description: string;
}

/** Where rows start: option rows are indented little, continuation lines a lot. */
const ROW_INDENT_MAX = 8;

/**
 * The rows of a section: a line indented at most ROW_INDENT_MAX starting a row when `isRow`
 * says so; deeper (or tab-indented) lines continue the description of the row above.
 */
export function readRows(lines: readonly string[], isRow: (trimmed: string) => boolean): Row[] {
  const rows: { spec: string; parts: string[] }[] = [];
  let open = false;
  for (const line of lines) {
    if (line.trim() === '') continue;
    // Unindented text after the rows (`Run 'docker COMMAND --help' …`) continues none of them.
    if (/^\S/.test(line)) {
      open = false;
      continue;
    }
    const indent = /^ */.exec(line)?.[0].length ?? 0;
    const trimmed = line.trim();
    if (!line.startsWith('\t') && indent <= ROW_INDENT_MAX && isRow(trimmed)) {
      const split = /^(\S.*?)(?:\s{2,}|\t+)(\S.*)$/.exec(trimmed);
      rows.push({ spec: split?.[1] ?? trimmed, parts: split?.[2] === undefined ? [] : [split[2]] });
      open = true;
    } else if (open) {
      rows[rows.length - 1]?.parts.push(trimmed);
    }
  }
  // A word the help wrapped at its hyphen (`globally-` / `installed`) is joined back whole.
  return rows.map((row) => ({
    spec: row.spec,
    description: row.parts.join(' ').replace(/([a-z])- (?=[a-zA-Z])/g, '$1-'),
  }));
}

export interface Spec {
  readonly long?: string;
  readonly short?: string;
  /** The placeholder as written, brackets kept (`<out>`, `[when]`, `ADDRESS`, `strings`). */
  readonly placeholder?: string;
  /** `--color [when]`, `--opt[=X]`: the value may be left out. */
  readonly optional: boolean;
  /** `<items...>`, `X [X ...]`: the value may be given several times / as a list. */
  readonly repeated: boolean;
}

/** Splits at `sep` outside brackets, so `{a,b}` and `[X ...]` stay whole. */
export function splitOutside(text: string, sep: RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if ('[{(<'.includes(char)) depth += 1;
    if (']})>'.includes(char)) depth = Math.max(0, depth - 1);
    if (depth === 0 && sep.test(char)) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part.length > 0);
}

const NAME = /^(--?)([A-Za-z0-9?][\w.?-]*)(?:(\[?=|\s+|=)(.*))?$/;

/** `-s, --long VALUE` (or argparse's `-s VALUE, --long VALUE`): names and placeholder; undefined if not an option spec. */
export function parseSpec(spec: string): Spec | undefined {
  let long: string | undefined;
  let short: string | undefined;
  let placeholder: string | undefined;
  let optional = false;
  for (const part of splitOutside(spec, /,/)) {
    const match = NAME.exec(part);
    if (match === null) return undefined;
    const [, dashes, name = '', joiner, rest] = match;
    if (dashes === '--') long ??= name;
    else if (name.length === 1) short ??= name;
    else long ??= name; // `-name` single-dash long options (rare here) keep their name
    if (rest !== undefined && rest.trim() !== '') {
      placeholder = rest.trim();
      if (joiner === '[=') {
        optional = true;
        placeholder = placeholder.replace(/\]$/, '');
      }
    }
  }
  if (long === undefined && short === undefined) return undefined;
  let repeated = false;
  if (placeholder !== undefined) {
    // argparse's `X [X ...]` / `[X ...]` and commander's `<items...>`.
    const many = /^(\S+) \[\S+ \.\.\.\]$/.exec(placeholder);
    if (many?.[1] !== undefined) {
      placeholder = many[1];
      repeated = true;
    } else if (/^\[\S+ \.\.\.\]$/.test(placeholder)) {
      placeholder = placeholder.slice(1, -5);
      repeated = true;
      optional = true;
    }
    if (/\.\.\.[\]>]?$/.test(placeholder)) repeated = true;
    if (/^\[[^\]]*\]$/.test(placeholder)) optional = true;
  }
  return {
    ...(long === undefined ? {} : { long }),
    ...(short === undefined ? {} : { short }),
    ...(placeholder === undefined ? {} : { placeholder }),
    optional,
    repeated,
  };
}

/** The first sentence of a description, trimmed, without its final period. */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  // `e.g. 'pp'` and `i.e. setuptools` do not end a sentence.
  const end = /(?<!\b(?:e\.g|i\.e|etc|vs))\.\s+(?=[A-Z(`"'])/.exec(flat);
  const sentence = end === null ? flat : flat.slice(0, end.index);
  return sentence.replace(/\.$/, '').trim();
}

/** Words of a usage line that are not positionals of this command. */
const NOT_POSITIONAL = new Set(['options', 'option', 'flags', 'flag']);
const COMMAND_WORDS = new Set(['command', 'subcommand', 'cmd', 'commands']);

/**
 * The positionals a usage line lists after the program words: `IMAGE [COMMAND] [ARG...]`,
 * `ENV_DIR [ENV_DIR ...]`, `<env> [targets...]`, `[<package-spec> ...]`. Option groups
 * (`[-h]`, `[--x | --y]`), alternatives and parenthesised forms are skipped; a name that is
 * a subcommand placeholder is skipped when the help lists subcommands.
 */
export function usagePositionals(usage: string, hasSubcommands: boolean): HelpPositional[] {
  const all = splitOutside(usage.replace(/\s+/g, ' ').trim(), /\s/);
  // The program and subcommand words (`docker run`, `/usr/bin/python3 -m pip install`) lead.
  let start = 0;
  while (start < all.length && /^(?:[a-z0-9/._~][\w./@~-]*|-m)$/.test(all[start] ?? '')) start += 1;
  const tokens = all.slice(start);
  const out: HelpPositional[] = [];
  for (const token of tokens) {
    if (token === '...') {
      // pip's `<requirement specifier> [package-index-options] ...`: more of the last one.
      const last = out[out.length - 1];
      if (last !== undefined) out[out.length - 1] = { ...last, repeated: true };
      continue;
    }
    // `<requirement specifier>`: one name of several words.
    let inner = token.replace(
      /<([^<>]+)>/g,
      (_all, words: string) => `<${words.trim().replace(/\s+/g, '-')}>`,
    );
    let required = true;
    if (inner.startsWith('[') && inner.endsWith(']')) {
      inner = inner.slice(1, -1).trim();
      required = false;
    }
    inner = inner.replace(/^--\s+/, '');
    if (/^[-({]/.test(inner) || /[|=(]/.test(inner) || inner === '') continue;
    let repeated = false;
    // `FILE...`, `[ARG...]`, yargs' `<entry..>`.
    const many = /(?:\s*\.\.\.|…|\.\.)>?$/;
    if (many.test(inner)) {
      repeated = true;
      inner = inner.replace(many, (tail) => (tail.endsWith('>') ? '>' : ''));
    }
    if (/\s/.test(inner)) continue;
    inner = inner.replace(/^<(.*)>$/, '$1');
    // `REPOSITORY[:TAG]`: the optional suffix is part of the one value.
    const name = inner
      .replace(/^<(.*)>$/, '$1')
      .replace(/\.\.\.$/, '')
      .replace(/\[[^\]]*\]$/, '');
    if (!/^[A-Za-z][\w.-]*$/.test(name)) continue;
    const lower = name.toLowerCase();
    if (NOT_POSITIONAL.has(lower) || /-options$/.test(lower)) continue;
    if (hasSubcommands && COMMAND_WORDS.has(lower)) continue;
    const previous = out[out.length - 1];
    if (previous?.name === lower) {
      // `ENV_DIR [ENV_DIR ...]`: one required, then any number more.
      out[out.length - 1] = { ...previous, repeated: true };
      continue;
    }
    out.push({
      name: lower,
      required,
      repeated,
      ...(isPathWord(lower) ? { path: true } : {}),
    });
  }
  return out;
}

export function emptyModel(style: HelpStyle): HelpModel {
  return { style, subcommands: [], options: [], positionals: [], unparsed: [] };
}

/** A line for `unparsed`: one line, at most 80 characters. */
export function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}
