// What a value placeholder (`NUM`, `<file>`, `[=WHEN]`, `e|a|c`) says about the value: its type,
// whether it names a file, the choices it spells out. Shared by every family reader, so that `-n
// NUM` and `--jobs <N>` get the same type whatever the layout around them.
import type { HelpValue, ValueType } from '../model.js';

/** Placeholders that mean a whole number, as the GNU, git, clap and curl helps spell them. */
const INTEGER =
  /^(?:n|num|number|int|integer|count|lines?|levels|depth|jobs|blocks|port|seconds?|secs|minutes|mins|milliseconds|ms|bytes|offset|limit|width|max|ttl|retries|nth|\d+)$/i;
/** Placeholders that mean a number with a fraction. */
const FRACTION = /^(?:fractional[ _-]?seconds|float|decimal|ratio|fraction)$/i;
/** Placeholders that name a file or directory. */
const PATH =
  /(?:^|[-_ |])(?:file|files|filename|file[ _-]?name|dir|dirs|directory|path|paths|gitdir|script-file|archive|template-directory)$/i;

/** `<a>`, `[x]`: the text is one bracketed run (not `<name>=<value>` nor `[a]b[c]`). */
function enclosed(text: string, open: string, close: string): boolean {
  if (!text.startsWith(open) || !text.endsWith(close)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === open) depth++;
    else if (text[i] === close) depth--;
    if (depth === 0 && i < text.length - 1) return false;
  }
  return true;
}

/** The placeholder without its brackets, `=` and trailing `...`. */
export function bareName(raw: string): string {
  let name = raw.trim().replace(/\.\.\.$/, '');
  if (name.startsWith('=')) name = name.slice(1);
  if (enclosed(name, '[', ']')) name = name.slice(1, -1);
  if (name.startsWith('=')) name = name.slice(1);
  if (enclosed(name, '<', '>')) name = name.slice(1, -1);
  return name.trim();
}

export function valueType(name: string): ValueType {
  const bare = bareName(name);
  if (FRACTION.test(bare)) return 'number';
  // `NUMBER`, `<N>`, but also `max-count=NUM` style names ending in the word.
  if (INTEGER.test(bare) || /[-_](?:num|number|count)$/i.test(bare)) return 'integer';
  return 'string';
}

export function isPathName(name: string): boolean {
  return PATH.test(bareName(name));
}

/** `e|a|c`, `(push|fetch)`, `{a,b}`: the alternatives the placeholder itself lists. */
export function placeholderChoices(name: string): string[] | undefined {
  const bare = bareName(name).replace(/^\((.*)\)$/, '$1');
  const braces = /^\{([^{}]+)\}$/.exec(bare);
  if (braces?.[1] !== undefined && braces[1].includes(',')) return braces[1].split(',');
  if (/^[\w.-]+(?:\|[\w.-]+)+$/.test(bare)) {
    const parts = bare.split('|');
    // `KEY=VALUE|PATH` or `data|filename` name kinds of value, not literal choices: only short
    // lower-case words (or single letters) are taken as choices.
    if (parts.every((part) => /^[a-z0-9][a-z0-9-]{0,11}$/i.test(part) && part.length <= 6))
      return parts;
  }
  return undefined;
}

/** Choices a description lists: clap's `[possible values: a, b]`, GNU's `WHEN is 'a', 'b', or 'c'`. */
export function describedChoices(description: string, name: string): string[] | undefined {
  const clap = /\[possible values: ([^\]]+)\]/.exec(description);
  if (clap?.[1] !== undefined) {
    return clap[1].split(',').map((choice) => choice.trim().replace(/:.*$/, ''));
  }
  const bare = bareName(name);
  if (bare.length === 0) return undefined;
  const gnu = new RegExp(`\\b${escape(bare)} is ((?:'[^']+'(?:,? (?:or )?)?)+)`).exec(description);
  if (gnu?.[1] !== undefined) {
    return [...gnu[1].matchAll(/'([^']+)'/g)].map((match) => match[1] ?? '');
  }
  return undefined;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The HelpValue a placeholder stands for; `description` is searched for listed choices. */
export function makeValue(raw: string, optional: boolean, description = ''): HelpValue {
  const name = bareName(raw);
  const choices = placeholderChoices(raw) ?? describedChoices(description, name);
  return {
    name,
    type: choices === undefined ? valueType(name) : 'string',
    ...(optional ? { optional: true } : {}),
    ...(choices === undefined ? {} : { choices }),
    ...(isPathName(name) ? { path: true } : {}),
  };
}
