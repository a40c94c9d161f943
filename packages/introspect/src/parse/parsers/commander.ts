// Node CLIs built on commander (`Usage: x [options] [command]`, `Options:` rows like
// `-d, --out-dir <out>` / `--color [when]`, `Commands:` rows like `deploy [options] <env>` or
// `status|st`) and on yargs (the usage alone on the first line, `Commands:` rows that repeat the
// script name, `Positionals:`, and `Options:` rows whose type is a tag at the end: `[boolean]`,
// `[string]`, `[number]`, `[array]`, `[count]`, `[choices: …]`).
import type {
  HelpModel,
  HelpOption,
  HelpParser,
  HelpPositional,
  HelpSubcommand,
  HelpValue,
} from '../model.js';
import {
  firstSentence,
  parseSpec,
  readRows,
  shorten,
  splitSections,
  usagePositionals,
  type Row,
  type Section,
} from './cli-common.js';
import {
  bare,
  defaultType,
  isPathWord,
  placeholderChoices,
  value,
  wordType,
} from './cli-values.js';

/** yargs' trailing tags: `[boolean]`, `[required]`, `[default: 2]`, `[choices: "a", "b"]`. */
const TAG =
  /\s*\[(boolean|string|number|array|count|required|deprecated|default: (?:\[[^\]]*\]|[^\]])*|choices: [^\]]*|aliases: [^\]]*)\]/g;

interface Tagged {
  readonly text: string;
  readonly tags: readonly string[];
}

function splitTags(description: string): Tagged {
  const tags = [...description.matchAll(TAG)].map((match) => match[1] ?? '');
  return { text: description.replace(TAG, '').trim(), tags };
}

function quotedList(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? '');
}

function tagChoices(tags: readonly string[]): string[] | undefined {
  const tag = tags.find((item) => item.startsWith('choices: '));
  return tag === undefined ? undefined : quotedList(tag);
}

/** commander 7+ prints `(choices: "a", "b")` in the description. */
function commanderChoices(description: string): string[] | undefined {
  const match = /\(choices: ((?:"[^"]*"(?:, )?)+)\)/.exec(description);
  return match?.[1] === undefined ? undefined : quotedList(match[1]);
}

function cleanDescription(text: string): string {
  return firstSentence(text.replace(/\s*\((?:default|choices): [^)]*\)/g, ''));
}

function yargsOption(row: Row, yargs: boolean): HelpOption | undefined {
  const spec = parseSpec(row.spec);
  if (spec === undefined) return undefined;
  const { text, tags } = yargs ? splitTags(row.description) : { text: row.description, tags: [] };
  const name = spec.long ?? spec.short ?? '';
  let optionValue: HelpValue | undefined;
  let repeatable = spec.repeated;
  if (yargs) {
    const choices = tagChoices(tags);
    if (tags.includes('number')) optionValue = value(name, 'number');
    else if (tags.includes('string') || tags.includes('array') || choices !== undefined) {
      optionValue = value(name, 'string', { choices, path: isPathWord(name) });
    } else if (!tags.includes('boolean') && !tags.includes('count')) {
      // An untyped yargs option takes whatever follows it.
      optionValue = value(name, 'string');
    }
    repeatable = tags.includes('array') || tags.includes('count');
  } else if (spec.placeholder !== undefined) {
    const placeholder = bare(spec.placeholder);
    const choices = placeholderChoices(spec.placeholder) ?? commanderChoices(text);
    optionValue = value(placeholder, defaultType(text) ?? wordType(placeholder), {
      choices,
      optional: spec.optional,
      path: isPathWord(placeholder),
    });
  }
  const description = cleanDescription(text);
  return {
    ...(spec.long === undefined ? {} : { long: spec.long }),
    ...(spec.short === undefined ? {} : { short: spec.short }),
    ...(optionValue === undefined ? {} : { value: optionValue }),
    ...(description === '' ? {} : { description }),
    ...(repeatable ? { repeatable: true } : {}),
  };
}

/** `deploy [options] <env>` / `status|st` / yargs' `prog serve [port]  …  [aliases: s]`. */
function readCommands(
  section: Section,
  program: string | undefined,
  unparsed: string[],
): HelpSubcommand[] {
  const out: HelpSubcommand[] = [];
  for (const row of readRows(section.lines, (line) => !line.startsWith('-'))) {
    const words = row.spec.split(/\s+/);
    if (program !== undefined && words[0] === program) words.shift();
    const [names = ''] = words;
    const [name, ...aliases] = names.split('|');
    if (name === undefined || !/^[\w][\w:.-]*$/.test(name)) {
      unparsed.push(shorten(row.spec));
      continue;
    }
    const { text, tags } = splitTags(row.description);
    const aliasTag = tags.find((tag) => tag.startsWith('aliases: '));
    const allAliases = [
      ...aliases,
      ...(aliasTag === undefined ? [] : aliasTag.slice('aliases: '.length).split(/,\s*/)),
    ];
    out.push({
      name,
      ...(text === '' ? {} : { description: firstSentence(text) }),
      ...(allAliases.length === 0 ? {} : { aliases: allAliases }),
    });
  }
  return out;
}

/** yargs' `Positionals:` rows: `entry  entry file  [array] [required]`. */
function readPositionals(section: Section): HelpPositional[] {
  return readRows(section.lines, (line) => !line.startsWith('-')).map((row) => {
    const { text, tags } = splitTags(row.description);
    const name = row.spec.toLowerCase();
    return {
      name,
      required: tags.includes('required'),
      repeated: tags.includes('array'),
      ...(isPathWord(name) ? { path: true } : {}),
      ...(text === '' ? {} : { description: firstSentence(text) }),
    };
  });
}

function isYargs(text: string): boolean {
  return /\[(?:boolean|string|number|array|count)\]\s*$/m.test(text);
}

function parse(text: string): HelpModel {
  const sections = splitSections(text);
  const yargs = isYargs(text);
  const unparsed: string[] = [];
  const usageSection = sections.find((section) => /^usage$/i.test(section.title));
  // yargs prints the usage alone as the first line; commander after `Usage:`.
  const firstLine = sections[0]?.lines.find((line) => line.trim() !== '')?.trim();
  const usage = usageSection?.inline ?? (yargs ? firstLine : undefined);
  const program = usage?.split(/\s+/)[0];
  let subcommands: HelpSubcommand[] = [];
  let options: HelpOption[] = [];
  let described: HelpPositional[] = [];
  for (const section of sections) {
    if (/^commands$/i.test(section.title)) {
      subcommands = [
        ...subcommands,
        ...readCommands(section, yargs ? program : undefined, unparsed),
      ];
    } else if (/^positionals$/i.test(section.title)) {
      described = readPositionals(section);
    } else if (/options$/i.test(section.title)) {
      for (const row of readRows(section.lines, (line) => line.startsWith('-'))) {
        const option = yargsOption(row, yargs);
        if (option === undefined) unparsed.push(shorten(row.spec));
        else options = [...options, option];
      }
    }
  }
  const fromUsage = usage === undefined ? [] : usagePositionals(usage, subcommands.length > 0);
  const positionals = described.length > 0 ? described : fromUsage;
  // The description: commander's line after the usage, yargs' after its first line.
  const lines = usageSection === undefined ? (sections[0]?.lines ?? []) : usageSection.lines;
  const descriptionLine = lines
    .filter((line) => /^\S/.test(line))
    .find((line) => line.trim() !== firstLine);
  const description = descriptionLine === undefined ? undefined : firstSentence(descriptionLine);
  return {
    style: 'commander',
    ...(description === undefined ? {} : { description }),
    subcommands,
    options,
    positionals,
    unparsed,
  };
}

export const commanderParser: HelpParser = {
  style: 'commander',
  detect(text) {
    if (isYargs(text) && /^Options:$/m.test(text)) return 0.9;
    if (/^ +-h, --help +(?:output usage information|display help for command)$/m.test(text))
      return 0.9;
    if (/^Usage: \S+(?: [\w-]+)* \[options\]/m.test(text) && /^Options:$/m.test(text)) return 0.7;
    return 0;
  },
  parse: (text) => parse(text),
  subcommandHelp: (path) => [[...path, '--help']],
};
