// A program's interface, read the way a person would: its help, then each subcommand's help, down
// to `depth` levels, each read by the family the program's own help was recognised as. What could
// not be read (a help that failed, a level past the depth, too many subcommands) is said, not
// guessed.
import { parseHelp, parserFor } from '../parse/index.js';
import type { HelpModel } from '../parse/model.js';
import type { HelpRun } from './sandboxed-help.js';

/** The program's interface at one command path (the program itself: path []). */
export interface Discovered {
  readonly path: readonly string[];
  readonly model: HelpModel;
  /** The arguments that printed this help (after the program). */
  readonly helpArgs: readonly string[];
  readonly children: readonly Discovered[];
}

export interface WalkOptions {
  /** Levels of subcommands to read below the program (default 2: `docker container ls`). */
  readonly depth?: number;
  /** Most subcommand helps read in all (default 300), so a huge CLI ends in bounded time. */
  readonly maxHelps?: number;
  /** Runs `program args…` (confined: SandboxedHelp.run). */
  readonly run: (program: string, args: readonly string[]) => Promise<HelpRun>;
}

/** How the program's own help is asked for, in order. */
const ROOT_HELP: readonly (readonly string[])[] = [['--help'], ['-h'], ['help']];
/**
 * A help that says it is not the whole and names `--help all` for the rest (curl's ends "For all
 * options use the manual or "--help all""): the whole is asked for, and read if it is help.
 */
const WHOLE_HELP = /["'`]--help all["'`]/;
const WHOLE_HELP_ARGS: readonly string[] = ['--help', 'all'];

export class HelpNotFound extends Error {}

export async function walkHelp(program: string, options: WalkOptions): Promise<Discovered> {
  const depth = options.depth ?? 2;
  let budget = options.maxHelps ?? 300;
  const hints = new Set<string>();
  let root = await firstHelp(program, ROOT_HELP, options.run, hints);
  if (root !== undefined && WHOLE_HELP.test(root.text)) {
    root = (await firstHelp(program, [WHOLE_HELP_ARGS], options.run, hints)) ?? root;
  }
  if (root === undefined) {
    // What the sandbox refused is often why (a library or data file where commands read nothing).
    const refused = [...hints].map((hint) => ` (the sandbox: ${hint})`).join('');
    throw new HelpNotFound(
      `${program} printed no help for ${ROOT_HELP.map((args) => args.join(' ')).join(', ')}${refused}`,
    );
  }
  const parser = parserFor(root.text, program);

  const read = async (
    path: readonly string[],
    model: HelpModel,
    helpArgs: readonly string[],
  ): Promise<Discovered> => {
    const children: Discovered[] = [];
    const unread: string[] = [];
    for (const subcommand of model.subcommands) {
      const childPath = [...path, subcommand.name];
      if (path.length >= depth) {
        unread.push(`${childPath.join(' ')}: deeper than --depth ${String(depth)}`);
        continue;
      }
      if (budget <= 0) {
        unread.push(`${childPath.join(' ')}: past the limit of helps read`);
        continue;
      }
      budget -= 1;
      const help = await firstHelp(
        program,
        parser.subcommandHelp(childPath),
        options.run,
        new Set(),
      );
      if (help === undefined) {
        unread.push(`${childPath.join(' ')}: no help printed`);
        continue;
      }
      // A subcommand's help is read by the program's family: its layout is the program's.
      children.push(await read(childPath, parser.parse(help.text, program), help.args));
    }
    return {
      path,
      model: unread.length === 0 ? model : { ...model, unparsed: [...model.unparsed, ...unread] },
      helpArgs,
      children,
    };
  };
  return read([], parseHelp(root.text, program, parser.style), root.args);
}

/**
 * The first of `candidates` whose output looks like help: some text, and not a refusal. What the
 * sandbox said of the runs is added to `hints`.
 */
async function firstHelp(
  program: string,
  candidates: readonly (readonly string[])[],
  run: WalkOptions['run'],
  hints: Set<string>,
): Promise<{ text: string; args: readonly string[] } | undefined> {
  for (const args of candidates) {
    const result = await run(program, args);
    for (const hint of result.sandboxHints) hints.add(hint);
    // `failed` is a non-zero exit (git's `-h` exits 129); a timeout or cancel is no help.
    if (!['completed', 'failed'].includes(result.status) || result.text.trim() === '') continue;
    // Many programs print their help on stderr and exit 1 or 2 for -h: the text decides.
    if (result.exitCode !== 0 && !/usage|options|commands/i.test(result.text)) continue;
    return { text: result.text, args };
  }
  return undefined;
}
