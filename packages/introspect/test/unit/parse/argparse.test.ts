// SPEC §15 introspection: the argparse reader on recorded helps of Python 3.11.7's venv, http.server and json.tool
// modules and of pip 23.2.1 (optparse, read as the same family), plus one subparser help.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { argparseParser } from '../../../src/parse/parsers/argparse.js';

function help(path: string): string {
  return readFileSync(new URL(`../../fixtures/help/${path}.txt`, import.meta.url), 'utf8');
}

function parse(path: string, program: string): HelpModel {
  return argparseParser.parse(help(path), program);
}

function option(model: HelpModel, long: string): HelpOption | undefined {
  return model.options.find((candidate) => candidate.long === long);
}

describe('SPEC §15 introspection: argparse helps', () => {
  it('SPEC §15 introspection: venv: flags, a valued option, a required repeated directory positional', () => {
    expect(argparseParser.detect(help('venv/3.11.7/root'), 'venv')).toBeGreaterThan(0.5);
    const model = parse('venv/3.11.7/root', 'venv');
    expect(model.description).toBe(
      'Creates virtual Python environments in one or more target directories',
    );
    expect(model.options.map((candidate) => candidate.long)).toEqual([
      'help',
      'system-site-packages',
      'symlinks',
      'copies',
      'clear',
      'upgrade',
      'without-pip',
      'prompt',
      'upgrade-deps',
    ]);
    expect(option(model, 'help')).toMatchObject({
      short: 'h',
      description: 'show this help message and exit',
    });
    // The long option on its own line, its description on the next.
    expect(option(model, 'system-site-packages')?.description).toBe(
      'Give the virtual environment access to the system site-packages dir',
    );
    expect(option(model, 'prompt')?.value).toEqual({ name: 'PROMPT', type: 'string' });
    expect(model.positionals).toEqual([
      {
        name: 'env_dir',
        required: true,
        repeated: true,
        path: true,
        description: 'A directory to create the environment in',
      },
    ]);
  });

  it('SPEC §15 introspection: http.server and json.tool: `-b ADDRESS, --bind ADDRESS`, optional positionals', () => {
    const server = parse('http.server/3.11.7/root', 'python3');
    expect(option(server, 'bind')).toMatchObject({
      short: 'b',
      value: { name: 'ADDRESS', type: 'string' },
    });
    expect(option(server, 'directory')).toMatchObject({ short: 'd', value: { path: true } });
    expect(option(server, 'bind')?.description).toBe('bind to this address');
    expect(server.positionals).toEqual([
      { name: 'port', required: false, repeated: false, description: 'bind to this port' },
    ]);
    const json = parse('json.tool/3.11.7/root', 'python3');
    expect(option(json, 'indent')?.value?.type).toBe('integer');
    expect(
      json.positionals.map((positional) => [positional.name, positional.required, positional.path]),
    ).toEqual([
      ['infile', false, true],
      ['outfile', false, true],
    ]);
  });

  it('SPEC §15 introspection: pip: Commands and General Options, `<placeholder>` values, repeatable options', () => {
    expect(argparseParser.detect(help('pip/23.2.1/root'), 'pip')).toBeGreaterThan(0.5);
    const root = parse('pip/23.2.1/root', 'pip');
    expect(root.subcommands.map((command) => command.name)).toHaveLength(17);
    expect(root.subcommands[0]).toEqual({ name: 'install', description: 'Install packages' });
    expect(option(root, 'retries')?.value?.type).toBe('integer');
    // `<sec>` with `(default 180.0 seconds)`: a fraction.
    expect(option(root, 'timeout')?.value?.type).toBe('number');
    expect(option(root, 'keyring-provider')?.value?.choices).toEqual([
      'disabled',
      'import',
      'subprocess',
    ]);
    expect(option(root, 'verbose')).toMatchObject({ short: 'v', repeatable: true });
    const install = parse('pip/23.2.1/install', 'pip');
    expect(option(install, 'requirement')).toMatchObject({
      short: 'r',
      repeatable: true,
      value: { name: 'file', path: true },
    });
    expect(option(install, 'target')?.value?.path).toBe(true);
    expect(option(install, 'progress-bar')?.value?.choices).toEqual(['on', 'off']);
    expect(option(install, 'implementation')?.description).toBe(
      "Only use wheels compatible with Python implementation <implementation>, e.g. 'pp', 'jy', 'cp', or 'ip'",
    );
    expect(install.positionals).toEqual([
      { name: 'requirement-specifier', required: true, repeated: true },
    ]);
    // The Description section's `- PyPI …` list is prose, not options.
    expect(install.unparsed).toEqual([]);
  });

  it('SPEC §15 introspection: argparse subparsers: `{a,b}` with one row per command', () => {
    // Written as argparse 3.11 prints `add_subparsers(dest="cmd")` with two parsers.
    const text = [
      'usage: tool [-h] [-n N] {build,clean} ...',
      '',
      'positional arguments:',
      '  {build,clean}',
      '    build      build the project',
      '    clean      remove outputs',
      '',
      'options:',
      '  -h, --help   show this help message and exit',
      '  -n N         number of jobs',
      '  --mode {fast,slow}',
      '               how to run',
      '  --tag TAG [TAG ...]',
      '               tags to apply',
      '',
    ].join('\n');
    const model = argparseParser.parse(text, 'tool');
    expect(model.subcommands).toEqual([
      { name: 'build', description: 'build the project' },
      { name: 'clean', description: 'remove outputs' },
    ]);
    expect(model.options.find((candidate) => candidate.short === 'n')?.value?.type).toBe('integer');
    expect(option(model, 'mode')?.value?.choices).toEqual(['fast', 'slow']);
    expect(option(model, 'tag')).toMatchObject({ repeatable: true, value: { name: 'TAG' } });
    expect(model.positionals).toEqual([]);
  });

  it('SPEC §15 introspection: argparse: a subcommand help is `… --help`; `usage:` alone is not claimed', () => {
    expect(argparseParser.subcommandHelp(['install'])).toEqual([['install', '--help']]);
    expect(
      argparseParser.detect('usage: git [--version] <command> [<args>]\n', 'git'),
    ).toBeLessThan(0.5);
    expect(argparseParser.detect(help('docker/28.2.2/run'), 'docker')).toBe(0);
  });
});
