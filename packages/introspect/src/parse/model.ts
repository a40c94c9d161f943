// What a program's help text says about its interface, whatever the family of the text: the
// subcommands it lists, its options (with the type of the value they take) and its positionals.
// Each family's parser (parsers/*.ts) reads its own layout into this one shape; the MTDF file is
// written from it (mtdf.ts), never from the text.

/** The help-text families Ahma reads; `unknown` degrades to what a generic reading finds. */
export type HelpStyle =
  'clap' | 'gnu' | 'git' | 'cobra' | 'argparse' | 'npm' | 'commander' | 'unknown';

export type ValueType = 'string' | 'integer' | 'number';

export interface HelpValue {
  /** The placeholder as the help spells it (`FILE`, `<N>`, `num`). */
  readonly name: string;
  readonly type: ValueType;
  /** `--color[=WHEN]`: the option may stand without its value. */
  readonly optional?: boolean;
  /** The values the help lists (`[possible values: a, b]`, `{a,b}`, `WHEN is 'always', …`). */
  readonly choices?: readonly string[];
  /** The value names a file or directory (`FILE`, `DIR`, `PATH`, `<path>`). */
  readonly path?: boolean;
}

export interface HelpOption {
  /** The long name without its dashes (`color` for `--color`); absent for a short-only option. */
  readonly long?: string;
  /** The long name takes one dash, not two: find's `-name`, `-maxdepth`. */
  readonly singleDash?: boolean;
  /** The one-character short name without its dash (`v` for `-v`). */
  readonly short?: string;
  /** Absent for a flag (a boolean). */
  readonly value?: HelpValue;
  readonly description?: string;
  /** The help says it may be given more than once (`...`, "can be repeated"). */
  readonly repeatable?: boolean;
}

export interface HelpPositional {
  /** As the usage line spells it, lower-cased and without brackets (`file` for `[FILE]...`). */
  readonly name: string;
  readonly required: boolean;
  /** `FILE...` / `<file>...`: any number of them (an array). */
  readonly repeated: boolean;
  readonly path?: boolean;
  readonly description?: string;
}

export interface HelpSubcommand {
  readonly name: string;
  readonly description?: string;
  readonly aliases?: readonly string[];
}

export interface HelpModel {
  readonly style: HelpStyle;
  /** The program's one-line description, when the help starts with one. */
  readonly description?: string;
  readonly subcommands: readonly HelpSubcommand[];
  readonly options: readonly HelpOption[];
  readonly positionals: readonly HelpPositional[];
  /** What could not be read (a line or a section, shortened): said in the written file. */
  readonly unparsed: readonly string[];
}

/** One family's reader. */
export interface HelpParser {
  /** The family; `unknown` only for the generic reading (parsers/generic.ts). */
  readonly style: HelpStyle;
  /** How sure this parser is that `text` is its family: 0 (not at all) to 1. */
  detect(text: string, program: string): number;
  parse(text: string, program: string): HelpModel;
  /**
   * The argv (after the program) that prints the help of a subcommand path, in the order to
   * try: e.g. `[['build', '--help'], ['help', 'build']]` for cargo, `[['commit', '-h']]` for git.
   */
  subcommandHelp(path: readonly string[]): readonly (readonly string[])[];
}
