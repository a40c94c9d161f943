// git's helps: `git --help` lists the common commands in titled groups (`   clone   Clone a
// repository…`) and spells the global options only in its usage; `git SUB -h` prints a usage
// (with `or:` lines naming sub-subcommands, as `git remote -h` does) and parse-options lines
// `    -m, --message <message>   commit message`.
import type { HelpModel, HelpParser, HelpSubcommand } from '../model.js';
import { helpLines } from './text-help.js';
import { firstSentence, readOptions } from './text-options.js';
import { usageOptions, usagePositionals, usageText, usageTokens } from './text-usage.js';

/** A command of the root help's groups: three spaces, the name, two or more spaces, the text. */
const COMMAND_LINE = /^ {3}([a-z][\w-]*)\s{2,}(\S.*)$/;

/** `or: git remote add […]`: the word after the common path names a sub-subcommand. */
function usageSubcommands(lines: readonly string[]): HelpSubcommand[] {
  const usages = lines
    .map((line) => /^\s*(?:usage|or):\s*(.*)$/i.exec(line)?.[1])
    .filter((usage): usage is string => usage !== undefined);
  if (usages.length < 2) return [];
  const path = leadingWords(usageTokens(usages[0] ?? ''));
  const names = new Set<string>();
  for (const usage of usages.slice(1)) {
    const tokens = usageTokens(usage);
    if (tokens.slice(0, path.length).join(' ') !== path.join(' ')) continue;
    // The first bare word after the path, past option groups (`[-v | --verbose] show`).
    const word = tokens.slice(path.length).find((token) => !token.startsWith('['));
    if (word !== undefined && /^[a-z][\w-]*$/.test(word)) names.add(word);
  }
  return [...names].map((name) => ({ name }));
}

function leadingWords(tokens: readonly string[]): string[] {
  const words: string[] = [];
  for (const token of tokens) {
    if (!/^[a-z][\w-]*$/.test(token)) break;
    words.push(token);
  }
  return words;
}

export const gitParser: HelpParser = {
  style: 'git',

  detect(text, program) {
    if (/^usage: git\b/m.test(text) || /These are common Git commands/.test(text)) return 0.95;
    // Other programs built on git's parse-options (`usage: PROG …` then four-space options).
    if (/^usage: /m.test(text) && /^ {4}-\w, --\w/m.test(text) && program === 'git') return 0.8;
    return 0;
  },

  parse(text) {
    const lines = helpLines(text);
    const reading = readOptions(lines);
    const usage = usageText(text);
    // The root help has no option lines: its usage's bracket groups are its options. A
    // subcommand's usage also names options its list leaves out (`[--allow-empty]`,
    // `[--[no-]status]`): those are added after the listed ones.
    const options = [...reading.options];
    for (const option of usage === undefined ? [] : usageOptions(usage)) {
      const known = options.some(
        (listed) =>
          (option.long !== undefined && listed.long === option.long) ||
          (option.short !== undefined && listed.short === option.short),
      );
      if (!known) options.push(option);
    }
    const subcommands: HelpSubcommand[] = [];
    for (const line of lines) {
      const match = COMMAND_LINE.exec(line);
      if (match === null) continue;
      const description = firstSentence(match[2] ?? '');
      subcommands.push({
        name: match[1] ?? '',
        ...(description === undefined ? {} : { description }),
      });
    }
    if (subcommands.length === 0) subcommands.push(...usageSubcommands(lines));
    return {
      style: 'git',
      subcommands,
      options,
      positionals: usage === undefined ? [] : usagePositionals(usage),
      unparsed: reading.unparsed,
    } satisfies HelpModel;
  },

  subcommandHelp(path) {
    return [[...path, '-h']];
  },
};
