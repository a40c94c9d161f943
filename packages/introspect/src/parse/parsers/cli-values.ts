// What a placeholder or a description says about an option's value, for the cobra, argparse,
// npm and commander readers: its type (`<n>` is a whole number, `(default 180.0 seconds)` a
// fraction), whether it names a file or directory, and the choices it lists.
import type { HelpValue, ValueType } from '../model.js';

/** Placeholder words that mean a whole number. */
const INTEGER_WORD =
  /^(?:n|num|number|count|int|integer|uint|lines?|depth|jobs|port|seconds?|secs?|ms|milliseconds|minutes|mins|hours|days|retries|times|limit|width|indent|level|max|size)$/i;
/** Placeholder words that mean a number with a fraction. */
const FRACTION_WORD = /^(?:float|decimal|ratio|fraction|factor)$/i;
/** A file or directory; `profile` ends in `file` but is not one. */
const PATH_WORD =
  /(?:file|files|filename|filenames|dir|dirs|directory|directories|path|paths|folder)$/i;

/** `<out>`, `[when]`, `<items...>`, `[=WHEN]` → `out`, `when`, `items`, `WHEN`. */
export function bare(placeholder: string): string {
  return placeholder
    .trim()
    .replace(/^\[?=?/, '')
    .replace(/\]$/, '')
    .replace(/^<(.*)>$/, '$1')
    .replace(/(?:\s*\.\.\.|…)$/, '')
    .replace(/^<(.*)>$/, '$1')
    .trim();
}

export function isPathWord(word: string): boolean {
  const name = bare(word);
  return PATH_WORD.test(name) && !/profile$/i.test(name);
}

/** The type a placeholder's words say: its last word (`requirements file`, `max-count`) decides. */
export function wordType(placeholder: string): ValueType {
  const name = bare(placeholder);
  const last = name.split(/[-_ ]/).pop() ?? name;
  if (FRACTION_WORD.test(name) || FRACTION_WORD.test(last)) return 'number';
  if (INTEGER_WORD.test(name) || INTEGER_WORD.test(last)) return 'integer';
  return 'string';
}

/** The type a stated default says: `(default 5 times)` integer, `(default: 180.0)` number. */
export function defaultType(description: string): ValueType | undefined {
  const match = /\(default:? ([-+]?\d+(\.\d+)?)(?:\s[a-z ]*)?\)/i.exec(description);
  if (match === null) return undefined;
  return match[2] === undefined ? 'integer' : 'number';
}

/** `("always", "missing", "never")` or `One of: (json, yaml)` / `[disabled, import, subprocess]`. */
export function describedChoices(description: string): string[] | undefined {
  const quoted = /\(((?:"[\w.-]+",\s*)+"[\w.-]+")\)/.exec(description);
  if (quoted?.[1] !== undefined)
    return [...quoted[1].matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? '');
  const oneOf = /One of:? \(?([\w.-]+(?:(?:,\s*|\|)[\w.-]+)+)\)?/.exec(description);
  if (oneOf?.[1] !== undefined) return oneOf[1].split(/,\s*|\|/);
  // pip's `Specify which mechanism to use [disabled, import, subprocess]`, `[on, off]`.
  const listed = /\[([a-z][\w-]*(?:, [a-z][\w-]*)+)\]/.exec(description);
  if (listed?.[1] !== undefined) return listed[1].split(/,\s*/);
  return undefined;
}

/** `{a,b,c}` or `<a|b|c>`: the choices the placeholder itself spells. */
export function placeholderChoices(placeholder: string): string[] | undefined {
  const braces = /^\{([^{}]+)\}$/.exec(placeholder.trim());
  if (braces?.[1] !== undefined) return braces[1].split(',').map((choice) => choice.trim());
  const name = bare(placeholder);
  if (/^[\w.-]+(?:\|[\w.-]+)+$/.test(name)) return name.split('|');
  return undefined;
}

/** A HelpValue from its parts, leaving out what is not said. */
export function value(
  name: string,
  type: ValueType,
  extra: { optional?: boolean; choices?: readonly string[] | undefined; path?: boolean } = {},
): HelpValue {
  return {
    name,
    type: extra.choices === undefined ? type : 'string',
    ...(extra.optional === true ? { optional: true } : {}),
    ...(extra.choices === undefined ? {} : { choices: extra.choices }),
    ...(extra.path === true ? { path: true } : {}),
  };
}
