// The reading of a help no family claims: option-looking lines wherever they stand, the first
// usage line's positionals, the lines under a heading that names commands. What looks like an
// option or a command but cannot be read is kept in `unparsed`, so the written file says so.
import type { HelpModel, HelpParser, HelpSubcommand } from '../model.js';
import { helpDescription, helpLines, sections } from './text-help.js';
import { shorten } from './cli-common.js';
import { firstSentence, readOptions } from './text-options.js';
import { usagePositionals, usageText } from './text-usage.js';

/** Options may stand deeper than in the families' layouts (nested lists, man-like text). */
const GENERIC_OPTION_INDENT = 12;
const COMMAND_LINE = /^\s{1,8}([a-z][\w:-]*)(?:,\s*[a-z][\w-]*)*\s{2,}(\S.*)$/;

const genericReading = {
  style: 'unknown',

  /** Never claims a text: it is what is used when no family does. */
  detect(): number {
    return 0;
  },

  parse(text: string): HelpModel {
    const lines = helpLines(text);
    const reading = readOptions(lines, GENERIC_OPTION_INDENT);
    const usage = usageText(text);
    const subcommands: HelpSubcommand[] = [];
    const unparsed = [...reading.unparsed];
    for (const section of sections(lines)) {
      if (!/commands?\b/i.test(section.heading)) continue;
      for (const line of section.lines) {
        if (line.trim() === '') continue;
        const match = COMMAND_LINE.exec(line);
        if (match === null) {
          // A deeper line is the previous command's wrapped description; others are unknown.
          if (!/^\s{9,}/.test(line)) unparsed.push(shorten(line));
          continue;
        }
        const description = firstSentence(match[2] ?? '');
        subcommands.push({
          name: match[1] ?? '',
          ...(description === undefined ? {} : { description }),
        });
      }
    }
    const description = helpDescription(lines);
    return {
      style: 'unknown',
      ...(description === undefined ? {} : { description }),
      subcommands,
      options: reading.options,
      positionals: usage === undefined ? [] : usagePositionals(usage),
      unparsed,
    };
  },

  subcommandHelp(path: readonly string[]): readonly (readonly string[])[] {
    return [
      [...path, '--help'],
      ['help', ...path],
    ];
  },
} as const;

export const genericParser: HelpParser = genericReading;
