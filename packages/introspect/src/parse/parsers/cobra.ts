// Go cobra/pflag helps (docker, kubectl, gh, helm…): `Usage:`, grouped `… Commands:` blocks,
// `Flags:` / `Options:` / `Global Flags:` (gh: `FLAGS`, `CORE COMMANDS`) with pflag rows where
// the value's Go type follows the flag (`-f, --filename strings`, booleans have none), and
// kubectl's own layout (`-A, --all-namespaces=false:` with the default after `=`).
import type {
  HelpModel,
  HelpOption,
  HelpParser,
  HelpSubcommand,
  HelpValue,
  ValueType,
} from '../model.js';
import {
  firstSentence,
  parseSpec,
  readRows,
  shorten,
  splitSections,
  usagePositionals,
  type Section,
} from './cli-common.js';
import { describedChoices, isPathWord, value, wordType } from './cli-values.js';

/** pflag's type words (`Type()` of its values) and what they mean here. */
const INTEGER_TYPES = /^u?int(?:8|16|32|64)?$/;
const NUMBER_TYPES = /^(?:float32|float64|decimal)$/;
const LIST_TYPES =
  /^(?:strings|stringArray|stringSlice|list|ints|uints|intSlice|int32Slice|int64Slice|uintSlice|float32Slice|float64Slice|durationSlice|boolSlice|ipSlice)$/;
/** Type words pflag prints for values that are text to the user. */
const STRING_TYPES =
  /^(?:string|duration|bytes|map|ip|ipMask|ipNet|stringToString|stringToInt|bytesHex|bytesBase64|count)$/;

function pflagType(word: string): ValueType {
  if (INTEGER_TYPES.test(word) || /^u?ints$|Int(?:\d+)?Slice$/.test(word)) return 'integer';
  if (NUMBER_TYPES.test(word) || /^float(?:32|64)Slice$/.test(word)) return 'number';
  if (LIST_TYPES.test(word) || STRING_TYPES.test(word)) return 'string';
  // docker's own value types (`filter`, `mount`, `gpu-request`) and gh's names (`login`, `file`).
  return wordType(word);
}

function cleanDescription(text: string): string {
  return firstSentence(text.replace(/\s*\(default:? [^)]*\)/g, ''));
}

/** A pflag row: `-f, --filename strings   Filename, …`. */
function pflagOption(spec: string, description: string): HelpOption | undefined {
  const parsed = parseSpec(spec);
  if (parsed === undefined) return undefined;
  const word = parsed.placeholder;
  let optionValue: HelpValue | undefined;
  if (word !== undefined) {
    const choices = describedChoices(description);
    const textual = STRING_TYPES.test(word) || LIST_TYPES.test(word);
    const path =
      isPathWord(word) || (textual && parsed.long !== undefined && isPathWord(parsed.long));
    optionValue = value(word, pflagType(word), { choices, path });
  }
  return {
    ...(parsed.long === undefined ? {} : { long: parsed.long }),
    ...(parsed.short === undefined ? {} : { short: parsed.short }),
    ...(optionValue === undefined ? {} : { value: optionValue }),
    ...(description === '' ? {} : { description: cleanDescription(description) }),
    ...(word !== undefined && LIST_TYPES.test(word) ? { repeatable: true } : {}),
  };
}

const KUBECTL_ROW = /^(?:-(\w), )?--([\w-]+)=(.*):$/;

/** kubectl's row: the default after `=` says the type (`=false` a flag, `=[]` a list, `=500` a number). */
function kubectlOption(spec: string, description: string): HelpOption | undefined {
  const match = KUBECTL_ROW.exec(spec);
  if (match === null) return undefined;
  const [, short, long = '', fallback = ''] = match;
  const base = {
    long,
    ...(short === undefined ? {} : { short }),
    ...(description === '' ? {} : { description: cleanDescription(description) }),
  };
  if (fallback === 'true' || fallback === 'false') return base;
  const list = fallback.startsWith('[');
  let type: ValueType = 'string';
  if (/^-?\d+$/.test(fallback)) type = 'integer';
  else if (/^-?\d+\.\d+$/.test(fallback)) type = 'number';
  const choices = describedChoices(description);
  return {
    ...base,
    value: value(long, type, { choices, path: isPathWord(long) }),
    ...(list ? { repeatable: true } : {}),
  };
}

function isCommandSection(title: string): boolean {
  return /\bcommands\b/i.test(title) && !/help topics|plugins/i.test(title);
}

function isFlagSection(title: string): boolean {
  return /(?:flags|options)$/i.test(title);
}

function readCommands(section: Section, unparsed: string[]): HelpSubcommand[] {
  const out: HelpSubcommand[] = [];
  for (const row of readRows(section.lines, (line) => !line.startsWith('-'))) {
    const name = /^([\w][\w.-]*):?$/.exec(row.spec)?.[1];
    if (name === undefined) {
      unparsed.push(shorten(`${section.title}: ${row.spec}`));
      continue;
    }
    out.push({
      name,
      ...(row.description === '' ? {} : { description: firstSentence(row.description) }),
    });
  }
  return out;
}

function readFlags(section: Section, unparsed: string[]): HelpOption[] {
  const out: HelpOption[] = [];
  for (const row of readRows(section.lines, (line) => line.startsWith('-'))) {
    const option = KUBECTL_ROW.test(row.spec)
      ? kubectlOption(row.spec, row.description)
      : pflagOption(row.spec, row.description);
    if (option === undefined) unparsed.push(shorten(row.spec));
    else out.push(option);
  }
  return out;
}

/** The usage line: docker's `Usage:  docker run …` inline, kubectl's/gh's on the next line. */
function usageOf(sections: readonly Section[]): string | undefined {
  const usage = sections.find((section) => /^usage$/i.test(section.title));
  if (usage === undefined) return undefined;
  if (usage.inline !== '') return usage.inline;
  return usage.lines.find((line) => /^\s+\S/.test(line))?.trim();
}

/** The one-line description: the help's first line (kubectl, gh) or the line after docker's usage. */
function descriptionOf(sections: readonly Section[]): string | undefined {
  const lead = sections[0]?.lines.find((line) => line.trim() !== '');
  if (lead !== undefined) return firstSentence(lead);
  const usage = sections.find((section) => /^usage$/i.test(section.title));
  if (usage?.inline === '') return undefined;
  const line = usage?.lines.find((text) => /^\S/.test(text));
  return line === undefined ? undefined : firstSentence(line);
}

function parse(text: string): HelpModel {
  const sections = splitSections(text);
  const unparsed: string[] = [];
  const subcommands: HelpSubcommand[] = [];
  const options: HelpOption[] = [];
  for (const section of sections) {
    if (isCommandSection(section.title)) {
      for (const command of readCommands(section, unparsed)) {
        if (!subcommands.some((known) => known.name === command.name)) subcommands.push(command);
      }
    } else if (isFlagSection(section.title)) {
      for (const option of readFlags(section, unparsed)) {
        const key = option.long ?? option.short;
        if (!options.some((known) => (known.long ?? known.short) === key)) options.push(option);
      }
    }
  }
  const usage = usageOf(sections);
  // kubectl's `(TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE/NAME ...)`: alternatives of
  // positionals the model cannot hold; said, not guessed.
  if (usage !== undefined && /\s\(/.test(usage)) unparsed.push(shorten(`usage: ${usage}`));
  const description = descriptionOf(sections);
  return {
    style: 'cobra',
    ...(description === undefined ? {} : { description }),
    subcommands,
    options,
    positionals: usage === undefined ? [] : usagePositionals(usage, subcommands.length > 0),
    unparsed,
  };
}

/** Marks only cobra/pflag helps print. */
const STRONG = [
  /^Use "[\w-]+(?: [\w-]+)* (?:\[command\]|<command>) --help" for more information/m,
  /^Run '[\w-]+(?: [\w-]+)* COMMAND --help' for more information/m,
  /^Available Commands:$/m,
  /^Global Flags:$/m,
  /^ {4}(?:-\w, )?--[\w-]+=.*:$/m,
  /^USAGE\n {2}\S.*\n\n(?:[A-Z ]+\n)?[\s\S]*^(?:FLAGS|INHERITED FLAGS|[A-Z ]+ COMMANDS)$/m,
];
const PFLAG_ROW =
  /^ +(?:-\w, )?--[\w-]+ (?:string|int|int64|uint\d*|strings|stringArray|duration|list|float64|bytes|map)\s{2,}\S/m;

export const cobraParser: HelpParser = {
  style: 'cobra',
  detect(text) {
    if (STRONG.some((mark) => mark.test(text))) return 0.9;
    if (PFLAG_ROW.test(text) && /^(?:Flags|Options|Global Options):$/m.test(text)) return 0.8;
    return 0;
  },
  parse: (text) => parse(text),
  subcommandHelp: (path) => [[...path, '--help']],
};
