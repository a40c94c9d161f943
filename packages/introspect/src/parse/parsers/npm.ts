// npm's helps: `npm --help` names every command in an `All commands:` paragraph (comma
// separated, no descriptions); `npm <cmd> -h` gives a `Usage:` block, an `Options:` block of
// bracket groups (`[-S|--save|--no-save|…]`, `[--omit <dev|optional|peer> [--omit … ...]]`)
// followed by one described row per option (`  -S|--save` / `    Save installed …`).
import type { HelpModel, HelpOption, HelpParser, HelpValue } from '../model.js';
import {
  firstSentence,
  readRows,
  shorten,
  splitOutside,
  splitSections,
  usagePositionals,
  type Section,
} from './cli-common.js';
import { bare, isPathWord, placeholderChoices, value, wordType } from './cli-values.js';

interface Alternative {
  readonly name: string;
  readonly dashes: '-' | '--';
  readonly placeholder?: string;
}

const ALTERNATIVE = /^(--?)([\w][\w.-]*)(?:\s+(<[^>]+>))?$/;

/** `--install-strategy <hoisted|nested>` → name, dashes, placeholder; undefined if not one. */
function alternative(text: string): Alternative | undefined {
  const match = ALTERNATIVE.exec(text.trim());
  if (match === null) return undefined;
  const [, dashes, name = '', placeholder] = match;
  return {
    name,
    dashes: dashes === '--' ? '--' : '-',
    ...(placeholder === undefined ? {} : { placeholder }),
  };
}

function valueOf(placeholder: string): HelpValue {
  const name = bare(placeholder);
  const choices = placeholderChoices(placeholder);
  return value(name, wordType(name), { choices, path: isPathWord(name) });
}

/**
 * One bracket group: its alternatives become options; `-S|--save` pairs a short with the long
 * that follows it; `[--omit <x> [--omit <x> ...]]` says the option repeats.
 */
function groupOptions(group: string, unparsed: string[]): HelpOption[] {
  const inner = group.slice(1, -1).trim();
  const nested = inner.indexOf(' [');
  const head = nested >= 0 ? inner.slice(0, nested) : inner;
  const repeatable = nested >= 0 && inner.endsWith('...]');
  const parts = splitOutside(head, /\|/).map(alternative);
  if (parts.some((part) => part === undefined)) {
    unparsed.push(shorten(group));
    return [];
  }
  const alternatives = parts.filter((part): part is Alternative => part !== undefined);
  const out: HelpOption[] = [];
  for (let index = 0; index < alternatives.length; index += 1) {
    const part = alternatives[index];
    if (part === undefined) continue;
    const next = alternatives[index + 1];
    let short: string | undefined;
    let long: Alternative | undefined;
    if (part.dashes === '-' && part.name.length === 1 && next?.dashes === '--') {
      short = part.name;
      long = next;
      index += 1;
    } else if (part.dashes === '--') long = part;
    else short = part.name;
    const placeholder = long?.placeholder ?? part.placeholder;
    out.push({
      ...(long === undefined ? {} : { long: long.name }),
      ...(short === undefined ? {} : { short }),
      ...(placeholder === undefined ? {} : { value: valueOf(placeholder) }),
      ...(repeatable ? { repeatable: true } : {}),
    });
  }
  return out;
}

/** The bracket groups of the `Options:` block (they may wrap over several lines). */
function readGroups(section: Section, unparsed: string[]): HelpOption[] {
  const block: string[] = [];
  for (const line of section.lines) {
    if (line.startsWith('[')) block.push(line);
    else if (block.length > 0) break;
  }
  const options: HelpOption[] = [];
  for (const group of splitOutside(block.join(' '), /\s/)) {
    if (!group.startsWith('[') || !group.endsWith(']')) {
      unparsed.push(shorten(group));
      continue;
    }
    for (const option of groupOptions(group, unparsed)) {
      if (!options.some((known) => known.long === option.long && known.short === option.short))
        options.push(option);
    }
  }
  return options;
}

/** The described rows under the groups: `  -S|--save` then the description, by every name. */
function readDescriptions(section: Section): Map<string, string> {
  const descriptions = new Map<string, string>();
  for (const row of readRows(section.lines, (line) => line.startsWith('-'))) {
    const text = firstSentence(row.description);
    if (text === '') continue;
    for (const name of row.spec.split('|')) descriptions.set(name.replace(/^-+/, ''), text);
  }
  return descriptions;
}

function describe(
  option: HelpOption,
  descriptions: Map<string, string>,
  longs: ReadonlySet<string>,
): HelpOption {
  // `--no-audit` is described under `--audit`, the config it negates (which defaults to true);
  // `--no-save` beside `--save` is its own choice and keeps no borrowed text.
  const key = option.long ?? option.short ?? '';
  const negated = key.replace(/^no-/, '');
  const text =
    descriptions.get(key) ?? (longs.has(negated) ? undefined : descriptions.get(negated));
  return text === undefined ? option : { ...option, description: text };
}

/** `All commands:` and the comma-separated names below it. */
function readAllCommands(section: Section): string[] {
  const names: string[] = [];
  for (const line of section.lines) {
    if (line.trim() === '') {
      if (names.length > 0) break;
      continue;
    }
    for (const name of line.split(','))
      if (/^[\w][\w-]*$/.test(name.trim())) names.push(name.trim());
  }
  return names;
}

function parse(text: string): HelpModel {
  const sections = splitSections(text);
  const unparsed: string[] = [];
  const all = sections.find((section) => /^all commands$/i.test(section.title));
  const subcommands = all === undefined ? [] : readAllCommands(all).map((name) => ({ name }));
  const optionsSection = sections.find((section) => /^options$/i.test(section.title));
  let options: HelpOption[] = [];
  if (optionsSection !== undefined) {
    const descriptions = readDescriptions(optionsSection);
    const read = readGroups(optionsSection, unparsed);
    const longs = new Set(
      read.flatMap((option) => (option.long === undefined ? [] : [option.long])),
    );
    options = read.map((option) => describe(option, descriptions, longs));
  }
  // A command's help starts with its one-line description; `npm --help` with `npm <command>`.
  const lead = sections[0]?.lines.find((line) => line.trim() !== '')?.trim();
  const description =
    lead === undefined || lead.startsWith('npm ') ? undefined : firstSentence(lead);
  const usageSection = sections.find((section) => /^usage$/i.test(section.title));
  const usage = usageSection?.lines.find((line) => /^npm \S/.test(line));
  return {
    style: 'npm',
    ...(description === undefined ? {} : { description }),
    subcommands,
    options,
    positionals:
      usage === undefined || subcommands.length > 0 ? [] : usagePositionals(usage, false),
    unparsed,
  };
}

export const npmParser: HelpParser = {
  style: 'npm',
  detect(text, program) {
    if (/^npm <command>$/m.test(text) && /^All commands:$/m.test(text)) return 0.95;
    if (/^Run "npm help [\w-]+" for more info$/m.test(text)) return 0.95;
    if (program === 'npm' && /^Usage:\nnpm /m.test(text)) return 0.9;
    return 0;
  },
  parse: (text) => parse(text),
  subcommandHelp: (path) => [[...path, '-h']],
};
