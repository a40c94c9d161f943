// SPEC §15 introspection: the npm reader on recorded helps of npm 11.19.1 (`npm --help`, `npm install -h`,
// `npm run -h`, `npm ls -h`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { npmParser } from '../../../src/parse/parsers/npm.js';

function help(path: string): string {
  return readFileSync(
    new URL(`../../fixtures/help/npm/11.19.1/${path}.txt`, import.meta.url),
    'utf8',
  );
}

function parse(path: string): HelpModel {
  return npmParser.parse(help(path), 'npm');
}

function option(model: HelpModel, long: string): HelpOption | undefined {
  return model.options.find((candidate) => candidate.long === long);
}

describe('SPEC §15 introspection: npm helps', () => {
  it('SPEC §15 introspection: npm --help: every name of `All commands:`', () => {
    expect(npmParser.detect(help('root'), 'npm')).toBeGreaterThan(0.5);
    const model = parse('root');
    const names = model.subcommands.map((command) => command.name);
    expect(names).toHaveLength(72);
    expect(names).toEqual(
      expect.arrayContaining(['access', 'install', 'run', 'whoami', 'install-ci-test']),
    );
    expect(model.options).toEqual([]);
    expect(model.positionals).toEqual([]);
  });

  it('SPEC §15 introspection: npm install -h: bracket groups give the options, rows their descriptions', () => {
    const model = parse('install');
    expect(model.description).toBe('Install a package');
    // `[-S|--save|--no-save|--save-prod|…]`: -S pairs with --save, the rest stand alone.
    expect(option(model, 'save')).toEqual({
      long: 'save',
      short: 'S',
      description: 'Save installed packages to a `package.json` file as dependencies',
    });
    expect(option(model, 'save-dev')).toEqual({ long: 'save-dev' });
    expect(option(model, 'no-save')?.description).toBeUndefined();
    expect(option(model, 'install-strategy')?.value).toEqual({
      name: 'hoisted|nested|shallow|linked',
      type: 'string',
      choices: ['hoisted', 'nested', 'shallow', 'linked'],
    });
    // `[--omit <dev|optional|peer> [--omit <dev|optional|peer> ...]]`: repeatable.
    expect(option(model, 'omit')).toMatchObject({
      repeatable: true,
      value: { choices: ['dev', 'optional', 'peer'] },
    });
    expect(option(model, 'workspace')).toMatchObject({
      short: 'w',
      repeatable: true,
      value: { name: 'workspace-name' },
    });
    expect(option(model, 'min-release-age')?.value?.type).toBe('integer');
    // `--no-audit` is described under `--audit`.
    expect(option(model, 'no-audit')?.description).toMatch(/^When "true" submit audit reports/);
    expect(model.options).toHaveLength(41);
    expect(model.positionals).toEqual([{ name: 'package-spec', required: false, repeated: true }]);
    expect(model.unparsed).toEqual([]);
  });

  it('SPEC §15 introspection: npm ls -h and npm run -h: integer depth, required positionals', () => {
    const ls = parse('ls');
    expect(option(ls, 'depth')?.value?.type).toBe('integer');
    expect(option(ls, 'all')).toMatchObject({ short: 'a' });
    expect(ls.positionals).toEqual([{ name: 'package-spec', required: true, repeated: false }]);
    const run = parse('run');
    expect(run.positionals).toEqual([
      { name: 'command', required: true, repeated: false },
      { name: 'args', required: false, repeated: false },
    ]);
    expect(option(run, 'script-shell')?.value?.type).toBe('string');
  });

  it('SPEC §15 introspection: npm: a subcommand help is `… -h`; other helps are not claimed', () => {
    expect(npmParser.subcommandHelp(['install'])).toEqual([['install', '-h']]);
    expect(
      npmParser.detect(
        readFileSync(new URL('../../fixtures/help/venv/3.11.7/root.txt', import.meta.url), 'utf8'),
        'venv',
      ),
    ).toBe(0);
  });
});
