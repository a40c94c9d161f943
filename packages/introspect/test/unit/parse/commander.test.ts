// SPEC §15 introspection: the commander/yargs reader on recorded helps of sucrase 3.35.1 (commander 4.1.1) and of
// two small programs kept beside their fixtures: commander-demo (commander 4.1.1, subcommands)
// and yargs-demo (yargs 17.7.3).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { commanderParser } from '../../../src/parse/parsers/commander.js';

function help(path: string): string {
  return readFileSync(new URL(`../../fixtures/help/${path}.txt`, import.meta.url), 'utf8');
}

function parse(path: string, program: string): HelpModel {
  return commanderParser.parse(help(path), program);
}

function option(model: HelpModel, long: string): HelpOption | undefined {
  return model.options.find((candidate) => candidate.long === long);
}

describe('SPEC §15 introspection: commander and yargs helps', () => {
  it('SPEC §15 introspection: sucrase: commander options, `<srcDir>` positional', () => {
    expect(commanderParser.detect(help('sucrase/3.35.1/root'), 'sucrase')).toBeGreaterThan(0.5);
    const model = parse('sucrase/3.35.1/root', 'sucrase');
    expect(model.description).toBe('Sucrase: super-fast Babel alternative');
    expect(model.options).toHaveLength(18);
    expect(option(model, 'out-dir')).toMatchObject({
      short: 'd',
      value: { name: 'out', type: 'string' },
    });
    expect(option(model, 'project')?.value).toEqual({ name: 'dir', type: 'string', path: true });
    expect(option(model, 'out-extension')?.description).toBe(
      'File extension to use for all output files',
    );
    expect(option(model, 'quiet')?.value).toBeUndefined();
    expect(model.positionals).toEqual([
      { name: 'srcdir', required: true, repeated: false, path: true },
    ]);
  });

  it('SPEC §15 introspection: commander-demo: commands with aliases, `<n>` integer, `[when]` optional', () => {
    const root = parse('commander-demo/4.1.1/root', 'commander-demo');
    expect(root.subcommands).toEqual([
      { name: 'deploy', description: 'deploy to an environment' },
      { name: 'status', description: 'show the deployment status', aliases: ['st'] },
    ]);
    expect(option(root, 'jobs')).toMatchObject({
      short: 'j',
      value: { name: 'n', type: 'integer' },
    });
    expect(option(root, 'color')?.value).toEqual({ name: 'when', type: 'string', optional: true });
    expect(option(root, 'config')?.value?.path).toBe(true);
    expect(option(root, 'version')).toMatchObject({ short: 'V' });
    expect(root.positionals).toEqual([]);
    const deploy = parse('commander-demo/4.1.1/deploy', 'commander-demo');
    expect(option(deploy, 'timeout')?.value?.type).toBe('integer');
    expect(deploy.positionals).toEqual([
      { name: 'env', required: true, repeated: false },
      { name: 'targets', required: false, repeated: true },
    ]);
  });

  it('SPEC §15 introspection: yargs-demo: type tags, choices, script name dropped from command rows', () => {
    expect(commanderParser.detect(help('yargs-demo/17.7.3/root'), 'yargs-demo')).toBeGreaterThan(
      0.5,
    );
    const root = parse('yargs-demo/17.7.3/root', 'yargs-demo');
    expect(root.subcommands).toEqual([
      { name: 'serve', description: 'start the server' },
      { name: 'build', description: 'bundle the entry files' },
      { name: 'clean', description: 'remove build output' },
    ]);
    expect(option(root, 'verbose')).toEqual({
      long: 'verbose',
      short: 'v',
      description: 'Run with verbose logging',
    });
    expect(option(root, 'jobs')?.value?.type).toBe('number');
    expect(option(root, 'log-level')?.value?.choices).toEqual(['debug', 'info', 'warn', 'error']);
    expect(option(root, 'log-level')?.description).toBe('How much to log');
    expect(option(root, 'define')).toMatchObject({ repeatable: true, value: { type: 'string' } });
    expect(option(root, 'count')).toMatchObject({ repeatable: true });
    expect(option(root, 'count')?.value).toBeUndefined();
    const build = parse('yargs-demo/17.7.3/build', 'yargs-demo');
    expect(build.description).toBe('bundle the entry files');
    expect(build.positionals).toEqual([
      { name: 'entry', required: true, repeated: true, description: 'entry file' },
    ]);
    expect(option(build, 'out-dir')).toMatchObject({
      short: 'd',
      value: { type: 'string', path: true },
    });
    const serve = parse('yargs-demo/17.7.3/serve', 'yargs-demo');
    expect(serve.positionals).toEqual([
      { name: 'port', required: false, repeated: false, description: 'port to bind on' },
    ]);
  });

  it('SPEC §15 introspection: commander: a subcommand help is `… --help`; other helps are not claimed', () => {
    expect(commanderParser.subcommandHelp(['deploy'])).toEqual([['deploy', '--help']]);
    expect(commanderParser.detect(help('docker/28.2.2/root'), 'docker')).toBe(0);
    expect(commanderParser.detect(help('pip/23.2.1/install'), 'pip')).toBe(0);
  });
});
