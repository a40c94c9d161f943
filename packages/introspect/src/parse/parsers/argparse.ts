// Python argparse helps (`usage: prog [-h] …`, `positional arguments:`, `options:` or the older
// `optional arguments:`, `-n N, --num N`, `{a,b,c}` choices and subparsers) and pip's optparse
// layout read the same way (`Usage:` on its own line, `Commands:`, `General Options:`,
// `-r, --requirement <file>`): both put the value's name after each alias and say nothing of
// its type, so the type comes from the name (`N`, `<sec>`) or a stated numeric default.
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
  describedChoices,
  isPathWord,
  placeholderChoices,
  value,
  wordType,
} from './cli-values.js';

const POSITIONAL_TITLE = /^(?:positional arguments|arguments|positionals)$/i;
const COMMANDS_TITLE = /^(?:commands|subcommands|available commands)$/i;

function cleanDescription(text: string): string {
  return firstSentence(text.replace(/\s*\(default:? [^)]*\)/gi, ''));
}

function optionOf(row: Row): HelpOption | undefined {
  const spec = parseSpec(row.spec);
  if (spec === undefined) return undefined;
  let optionValue: HelpValue | undefined;
  if (spec.placeholder !== undefined) {
    const choices = placeholderChoices(spec.placeholder) ?? describedChoices(row.description);
    const name = bare(spec.placeholder);
    optionValue = value(name, defaultType(row.description) ?? wordType(name), {
      choices,
      optional: spec.optional,
      path: isPathWord(name),
    });
  }
  const repeatable =
    spec.repeated ||
    /can be (?:used|given|supplied|specified) (?:multiple|several|up to \d+) times|is additive/i.test(
      row.description,
    );
  return {
    ...(spec.long === undefined ? {} : { long: spec.long }),
    ...(spec.short === undefined ? {} : { short: spec.short }),
    ...(optionValue === undefined ? {} : { value: optionValue }),
    ...(row.description === '' ? {} : { description: cleanDescription(row.description) }),
    ...(repeatable ? { repeatable: true } : {}),
  };
}

/** The usage text: argparse's `usage: prog …` with its indented continuation lines; pip's first line. */
function usageOf(sections: readonly Section[]): string | undefined {
  const usage = sections.find((section) => /^usage$/i.test(section.title));
  if (usage === undefined) return undefined;
  const continued: string[] = [];
  for (const line of usage.lines) {
    if (!/^\s+\S/.test(line)) break;
    continued.push(line.trim());
    // pip lists one usage form a line; the first says the common positionals.
    if (usage.inline === '') break;
  }
  return [usage.inline, ...continued].join(' ').trim();
}

function descriptionOf(sections: readonly Section[]): string | undefined {
  const described = sections.find((section) => /^description$/i.test(section.title));
  const fromSection = described?.lines.find((line) => line.trim() !== '');
  if (fromSection !== undefined) return firstSentence(fromSection);
  const usage = sections.find((section) => /^usage$/i.test(section.title));
  const line = usage?.lines.find((text) => /^\S/.test(text));
  return line === undefined ? undefined : firstSentence(line);
}

interface PositionalRows {
  readonly described: Map<string, string>;
  readonly subcommands: HelpSubcommand[];
}

/** `positional arguments:`: described positionals, and a subparser's `{a,b}` with its command rows. */
function readPositionalRows(section: Section): PositionalRows {
  const described = new Map<string, string>();
  const subcommands: HelpSubcommand[] = [];
  let commandNames: string[] = [];
  for (const row of readRows(section.lines, (line) => !line.startsWith('-'))) {
    const braces = placeholderChoices(row.spec);
    if (row.spec.startsWith('{') && braces !== undefined) {
      commandNames = braces;
      for (const name of braces) subcommands.push({ name });
      continue;
    }
    const index = commandNames.indexOf(row.spec);
    if (index >= 0) {
      subcommands[subcommands.findIndex((command) => command.name === row.spec)] = {
        name: row.spec,
        ...(row.description === '' ? {} : { description: firstSentence(row.description) }),
      };
      continue;
    }
    described.set(row.spec.toLowerCase(), cleanDescription(row.description));
  }
  return { described, subcommands };
}

function readCommandRows(section: Section, unparsed: string[]): HelpSubcommand[] {
  const out: HelpSubcommand[] = [];
  for (const row of readRows(section.lines, (line) => !line.startsWith('-'))) {
    if (!/^[\w][\w.-]*$/.test(row.spec)) {
      unparsed.push(shorten(row.spec));
      continue;
    }
    out.push({
      name: row.spec,
      ...(row.description === '' ? {} : { description: firstSentence(row.description) }),
    });
  }
  return out;
}

function parse(text: string): HelpModel {
  const sections = splitSections(text);
  const unparsed: string[] = [];
  const options: HelpOption[] = [];
  let subcommands: HelpSubcommand[] = [];
  let described = new Map<string, string>();
  for (const section of sections) {
    // Prose sections: their `- item` lines are lists, not options.
    if (/^(?:usage|description|examples?|epilog)$/i.test(section.title)) continue;
    if (POSITIONAL_TITLE.test(section.title)) {
      const read = readPositionalRows(section);
      described = read.described;
      subcommands = [...subcommands, ...read.subcommands];
      continue;
    }
    if (COMMANDS_TITLE.test(section.title)) {
      subcommands = [...subcommands, ...readCommandRows(section, unparsed)];
      continue;
    }
    for (const row of readRows(section.lines, (line) => line.startsWith('-'))) {
      const option = optionOf(row);
      if (option === undefined) unparsed.push(shorten(row.spec));
      else if (!options.some((known) => known.long !== undefined && known.long === option.long))
        options.push(option);
    }
  }
  const usage = usageOf(sections);
  const fromUsage = usage === undefined ? [] : usagePositionals(usage, subcommands.length > 0);
  const positionals: HelpPositional[] = fromUsage.map((positional) => {
    const description = described.get(positional.name);
    return description === undefined || description === ''
      ? positional
      : { ...positional, description };
  });
  // A described positional the usage did not show as one (a lower-case name read as a word).
  for (const [name, description] of described) {
    if (positionals.some((positional) => positional.name === name)) continue;
    positionals.push({
      name,
      required: true,
      repeated: false,
      ...(isPathWord(name) ? { path: true } : {}),
      ...(description === '' ? {} : { description }),
    });
  }
  const description = descriptionOf(sections);
  return {
    style: 'argparse',
    ...(description === undefined ? {} : { description }),
    subcommands,
    options,
    positionals,
    unparsed,
  };
}

export const argparseParser: HelpParser = {
  style: 'argparse',
  detect(text, program) {
    const usage = /^usage: \S/m.test(text);
    if (usage && /^(?:options|optional arguments|positional arguments):$/m.test(text)) return 0.9;
    // pip (optparse): `Usage:` alone, the forms indented below, `General Options:`.
    const optparse = /^Usage:\s*\n\s+\S/m.test(text);
    if (optparse && /^General Options:$/m.test(text)) return 0.9;
    if (optparse && /^pip\d*$/.test(program)) return 0.8;
    // `usage:` alone is also git's and many hand-written helps: not enough to claim them.
    return usage ? 0.3 : 0;
  },
  parse: (text) => parse(text),
  subcommandHelp: (path) => [[...path, '--help']],
};
