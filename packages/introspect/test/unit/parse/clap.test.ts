// SPEC §15 introspection: the clap reader on cargo 1.95 (clap 4: `Commands:`, custom headings, `[possible
// values: …]`, `[<SPEC>]`, `-v...`) and ripgrep 13 (clap 2 long help: `USAGE:`, `ARGS:`,
// descriptions on the lines below).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { clapParser } from '../../../src/parse/parsers/clap.js';

function help(path: string): string {
  return readFileSync(new URL(`../../fixtures/help/${path}.txt`, import.meta.url), 'utf8');
}

function option(model: HelpModel, name: string): HelpOption | undefined {
  return model.options.find(
    (entry) => entry.long === name || (entry.long === undefined && entry.short === name),
  );
}

describe('SPEC §15 introspection: clap helps', () => {
  it('SPEC §15 introspection: cargo and rg are claimed by the clap reader; a GNU help is not', () => {
    expect(clapParser.detect(help('cargo/1.95.0/root'), 'cargo')).toBeGreaterThan(0.5);
    expect(clapParser.detect(help('cargo/1.95.0/build'), 'cargo')).toBeGreaterThan(0.5);
    expect(clapParser.detect(help('rg/13.0.0/root'), 'rg')).toBeGreaterThan(0.5);
    expect(clapParser.detect(help('grep/3.8/root'), 'grep')).toBe(0);
  });

  it("SPEC §15 introspection: cargo 1.65 (Debian 12's, clap 3): its `Some common cargo commands are` list is its commands", () => {
    const cargo = clapParser.parse(help('cargo/1.65.0/root'), 'cargo');
    expect(clapParser.detect(help('cargo/1.65.0/root'), 'cargo')).toBeGreaterThan(0.5);
    expect(cargo.subcommands[0]).toEqual({
      name: 'build',
      description: 'Compile the current package',
      aliases: ['b'],
    });
    expect(cargo.subcommands.map((command) => command.name)).toEqual([
      'build',
      'check',
      'clean',
      'doc',
      'new',
      'init',
      'add',
      'run',
      'test',
      'bench',
      'update',
      'search',
      'publish',
      'install',
      'uninstall',
    ]);
    expect(option(cargo, 'explain')?.value).toMatchObject({ name: 'CODE', type: 'string' });
  });

  it('SPEC §15 introspection: cargo --help: description, commands with their aliases, `...` left out', () => {
    const cargo = clapParser.parse(help('cargo/1.95.0/root'), 'cargo');
    expect(cargo.style).toBe('clap');
    expect(cargo.description).toBe("Rust's package manager");
    expect(cargo.subcommands[0]).toEqual({
      name: 'build',
      description: 'Compile the current package',
      aliases: ['b'],
    });
    expect(cargo.subcommands.map((command) => command.name)).toHaveLength(16);
    expect(cargo.subcommands.map((command) => command.name)).not.toContain('...');
    expect(option(cargo, 'C')?.value).toEqual({ name: 'DIRECTORY', type: 'string', path: true });
    expect(option(cargo, 'verbose')).toMatchObject({ short: 'v', repeatable: true });
    expect(option(cargo, 'verbose')?.value).toBeUndefined();
  });

  it('SPEC §15 introspection: cargo build --help: custom headings, possible values, `[<NAME>]` optional values, <N> integer', () => {
    const build = clapParser.parse(help('cargo/1.95.0/build'), 'cargo');
    expect(option(build, 'color')?.value).toEqual({
      name: 'WHEN',
      type: 'string',
      choices: ['auto', 'always', 'never'],
    });
    expect(option(build, 'color')?.description).toBe('Coloring');
    expect(option(build, 'message-format')?.value?.choices).toHaveLength(6);
    expect(option(build, 'package')).toMatchObject({
      short: 'p',
      value: { name: 'SPEC', optional: true },
    });
    expect(option(build, 'jobs')?.value?.type).toBe('integer');
    expect(option(build, 'manifest-path')?.value?.path).toBe(true);
    expect(option(build, 'release')).toEqual({
      long: 'release',
      short: 'r',
      description: 'Build artifacts in release mode, with optimizations',
    });
    expect(build.subcommands).toEqual([]);
    expect(build.positionals).toEqual([]);
  });

  it('SPEC §15 introspection: cargo new --help: an `Arguments:` positional (`<PATH>`, no text); possible values of --vcs', () => {
    const created = clapParser.parse(help('cargo/1.95.0/new'), 'cargo');
    expect(created.positionals).toEqual([
      { name: 'path', required: true, repeated: false, path: true },
    ]);
    expect(option(created, 'vcs')?.value?.choices).toEqual([
      'git',
      'hg',
      'pijul',
      'fossil',
      'none',
    ]);
  });

  it('SPEC §15 introspection: rg --help (clap 2 long help): descriptions from the line below, ARGS required by the usage', () => {
    const rg = clapParser.parse(help('rg/13.0.0/root'), 'rg');
    expect(rg.description).toBe(
      'ripgrep (rg) recursively searches the current directory for a regex pattern',
    );
    expect(option(rg, 'after-context')).toEqual({
      long: 'after-context',
      short: 'A',
      value: { name: 'NUM', type: 'integer' },
      description: 'Show NUM lines after each match',
    });
    expect(option(rg, 'glob')).toMatchObject({ short: 'g', repeatable: true });
    expect(option(rg, 'hidden')?.short).toBe('.');
    expect(rg.positionals).toEqual([
      {
        name: 'pattern',
        required: true,
        repeated: false,
        description: 'A regular expression used for searching',
      },
      {
        name: 'path',
        required: false,
        repeated: true,
        path: true,
        description: 'A file or directory to search',
      },
    ]);
    expect(rg.unparsed).toEqual([]);
  });

  it('SPEC §15 introspection: a subcommand help is asked with --help, then with help SUB', () => {
    expect(clapParser.subcommandHelp(['build'])).toEqual([
      ['build', '--help'],
      ['help', 'build'],
    ]);
  });
});
