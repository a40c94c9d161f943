// Rust's clap helps: clap 4 (`Usage: cargo build [OPTIONS]`, `Commands:`, `Arguments:`,
// `Options:` and custom headings like `Package Selection:`) and clap 2/3 (`USAGE:` on its own
// line, `FLAGS:`, `OPTIONS:`, `ARGS:`, `SUBCOMMANDS:`), short (`-h`) or long (`--help`, the
// description on the lines below the option).
import type { HelpModel, HelpParser, HelpPositional, HelpSubcommand } from '../model.js';
import { helpDescription, helpLines, sections } from './text-help.js';
import { firstSentence, readOptions } from './text-options.js';
import { usagePositionals, usageText } from './text-usage.js';
import { isPathName } from './text-values.js';

/** clap's headings; cargo before 1.70 (clap 3) wrote `Some common cargo commands are (…):`. */
const COMMANDS_HEADING = /^(?:commands|subcommands)$|^some common [\w-]+ commands are\b/i;
const ARGUMENTS_HEADING = /^(?:arguments|args)$/i;
/** `    build, b    Compile…`, `  help  Print this message…`, a name alone (long help). */
const COMMAND_LINE = /^\s{2,}([a-z][\w-]*)((?:, [\w-]+)*)(?:\s{2,}(\S.*))?$/;
/** `  <PATH>...  A file…`, `  [NAME]  …`. */
const ARGUMENT_LINE = /^\s{2,}([<[])([\w-]+)[>\]](\.\.\.)?(?:\s+(\S.*))?$/;

function readCommands(lines: readonly string[]): HelpSubcommand[] {
  const commands: HelpSubcommand[] = [];
  for (const [index, line] of lines.entries()) {
    const match = COMMAND_LINE.exec(line.trimEnd());
    if (match === null) continue;
    const aliases = (match[2] ?? '')
      .split(',')
      .map((alias) => alias.trim())
      .filter((alias) => alias !== '');
    // Long help puts the description on the next, deeper line.
    const below = lines[index + 1] ?? '';
    const text = match[3] ?? (/^\s{6,}\S/.test(below) ? below : '');
    const bracketed = /\[aliases?: ([^\]]+)\]/.exec(text)?.[1];
    if (bracketed !== undefined) aliases.push(...bracketed.split(',').map((alias) => alias.trim()));
    const description = firstSentence(text);
    commands.push({
      name: match[1] ?? '',
      ...(description === undefined ? {} : { description }),
      ...(aliases.length === 0 ? {} : { aliases }),
    });
  }
  return commands;
}

function readArguments(lines: readonly string[], usage: string | undefined): HelpPositional[] {
  const fromUsage = usage === undefined ? [] : usagePositionals(usage);
  const positionals: HelpPositional[] = [];
  for (const [index, line] of lines.entries()) {
    const match = ARGUMENT_LINE.exec(line.trimEnd());
    if (match === null) continue;
    const name = (match[2] ?? '').toLowerCase();
    // clap 2 writes every argument as `<NAME>`: the usage says which are optional.
    const inUsage = fromUsage.find((positional) => positional.name === name);
    const below = lines[index + 1] ?? '';
    const description = firstSentence(match[4] ?? (/^\s{6,}\S/.test(below) ? below : ''));
    positionals.push({
      name,
      required: inUsage?.required ?? match[1] === '<',
      repeated: match[3] !== undefined || inUsage?.repeated === true,
      ...(isPathName(name) ? { path: true } : {}),
      ...(description === undefined ? {} : { description }),
    });
  }
  return positionals.length > 0 ? positionals : fromUsage;
}

export const clapParser: HelpParser = {
  style: 'clap',

  detect(text) {
    // clap's own help line (`Print help`, clap 3's `Print help information`, clap 2's `Prints
    // help information`) or its value list: cobra, commander and docker share the headings and
    // `[OPTIONS]`, not these words.
    const phrase =
      /Prints? help(?: information)?$|Print this message or the help of the given subcommand|\[possible values: /m.test(
        text,
      );
    // clap 2 and 3: `USAGE:` on its own line above `FLAGS:`/`OPTIONS:`/`ARGS:`/`SUBCOMMANDS:`.
    const upperLayout =
      /^USAGE:\s*$/m.test(text) && /^(?:FLAGS|OPTIONS|ARGS|SUBCOMMANDS):\s*$/m.test(text);
    let score = phrase ? 0.6 : 0;
    if (upperLayout) score += 0.6;
    if (/^Usage: \S+.*\[OPTIONS\]/m.test(text)) score += 0.2;
    if (/\[possible values: /.test(text)) score += 0.1;
    return Math.min(1, score);
  },

  parse(text) {
    const lines = helpLines(text);
    const usage = usageText(text);
    const commandLines: string[] = [];
    const argumentLines: string[] = [];
    const optionLines: string[] = [];
    for (const section of sections(lines)) {
      if (COMMANDS_HEADING.test(section.heading)) commandLines.push(...section.lines);
      else if (ARGUMENTS_HEADING.test(section.heading)) argumentLines.push(...section.lines);
      else optionLines.push('', ...section.lines);
    }
    const reading = readOptions(optionLines);
    const subcommands = readCommands(commandLines).filter((command) => command.name !== '...');
    const description = helpDescription(lines);
    return {
      style: 'clap',
      ...(description === undefined ? {} : { description }),
      subcommands,
      options: reading.options,
      positionals: readArguments(argumentLines, usage),
      unparsed: reading.unparsed,
    } satisfies HelpModel;
  },

  subcommandHelp(path) {
    return [
      [...path, '--help'],
      ['help', ...path],
    ];
  },
};
