// GNU getopt/argp helps (grep, sed, tar, find, ls) and the programs that copy their layout (curl,
// rsync, jq): `Usage: PROG [OPTION]... ARGS` then option lines `  -x, --long=VALUE  text` under
// free-form headings, no subcommands.
import type { HelpModel, HelpParser } from '../model.js';
import { findGluedOptions, isFindHelp, readFindPrimaries } from './gnu-find.js';
import { helpDescription, helpLines } from './text-help.js';
import { mergeOptions, readOptions } from './text-options.js';
import { usageOptions, usagePositionals, usageText } from './text-usage.js';

/** `[OPTION]...`, `[OPTION...]`, `[options]`, `[options...]` (not clap's and docker's `[OPTIONS]`). */
const GNU_USAGE = /^\s*[Uu]sage:\s*\S+\s+.*\[(?:OPTION|OPTION\.\.\.|options|options\.\.\.)\]/m;
const GNU_SIGNS =
  /display this help (?:text )?and exit|give this help list|Report bugs to|GNU .* home page|General help using GNU software/;
/** Headings other families use for their own layouts (pip's `General Options:` too). */
const OTHER_FAMILY =
  /^(?:Available Commands|Flags|Global Flags|Commands|SUBCOMMANDS|positional arguments|options|(?:[A-Z]\w* )*Options):\s*$/m;

export const gnuParser: HelpParser = {
  style: 'gnu',

  detect(text) {
    let score = 0;
    const usage = GNU_USAGE.exec(text);
    if (usage !== null) score = usage[0].includes('[OPTION') ? 0.8 : 0.6;
    if (GNU_SIGNS.test(text)) score = Math.max(score, 0.6) + 0.15;
    if (OTHER_FAMILY.test(text) || /\[flags\]/.test(text)) score -= 0.4;
    return Math.max(0, Math.min(1, score));
  },

  parse(text) {
    const lines = helpLines(text);
    const reading = readOptions(lines);
    const usage = usageText(text);
    let options = reading.options;
    let unparsed = reading.unparsed;
    if (isFindHelp(text)) {
      // The primary lines the option reader could not take are read by readFindPrimaries.
      unparsed = unparsed.filter((line) => !/^-[a-z]{2}/.test(line));
      const extra = [...readFindPrimaries(lines)];
      if (usage !== undefined) extra.push(...usageOptions(usage), ...findGluedOptions(usage));
      options = mergeOptions([...options, ...extra]);
    }
    const description = helpDescription(lines);
    return {
      style: 'gnu',
      ...(description === undefined ? {} : { description }),
      subcommands: [],
      options,
      positionals: usage === undefined ? [] : usagePositionals(usage),
      unparsed,
    } satisfies HelpModel;
  },

  subcommandHelp(path) {
    return [[...path, '--help']];
  },
};
