// SPEC §15 introspection: the cobra/pflag reader on recorded helps of docker 28.2.2, kubectl 1.32.4 and gh 2.23.0
// (test/fixtures/help/*/SOURCE.md says how each was recorded).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { cobraParser } from '../../../src/parse/parsers/cobra.js';

function help(path: string): string {
  return readFileSync(new URL(`../../fixtures/help/${path}.txt`, import.meta.url), 'utf8');
}

function parse(path: string, program: string): HelpModel {
  return cobraParser.parse(help(path), program);
}

function option(model: HelpModel, long: string): HelpOption | undefined {
  return model.options.find((candidate) => candidate.long === long);
}

describe('SPEC §15 introspection: cobra/pflag helps', () => {
  it('SPEC §15 introspection: docker: every command group is read, global options with their types', () => {
    const model = parse('docker/28.2.2/root', 'docker');
    expect(cobraParser.detect(help('docker/28.2.2/root'), 'docker')).toBeGreaterThan(0.5);
    expect(model.description).toBe('A self-sufficient runtime for containers');
    const names = model.subcommands.map((command) => command.name);
    // Common, Management, Swarm and plain Commands groups.
    expect(names).toEqual(expect.arrayContaining(['run', 'container', 'swarm', 'wait']));
    expect(names).toHaveLength(57);
    expect(model.subcommands.find((command) => command.name === 'run')?.description).toBe(
      'Create and run a new container from an image',
    );
    expect(option(model, 'log-level')).toMatchObject({
      short: 'l',
      value: { type: 'string', choices: ['debug', 'info', 'warn', 'error', 'fatal'] },
    });
    expect(option(model, 'host')).toMatchObject({ short: 'H', repeatable: true });
    expect(option(model, 'debug')?.value).toBeUndefined();
    expect(option(model, 'version')).toMatchObject({
      short: 'v',
      description: 'Print version information and quit',
    });
    // The text after the options ("Run 'docker COMMAND --help' …") is no option's description.
    expect(model.unparsed).toEqual([]);
  });

  it('SPEC §15 introspection: docker run: pflag type words give the type, usage gives the positionals', () => {
    const model = parse('docker/28.2.2/run', 'docker');
    expect(option(model, 'cpus')?.value?.type).toBe('number'); // decimal
    expect(option(model, 'blkio-weight')?.value?.type).toBe('integer'); // uint16
    expect(option(model, 'cpu-shares')).toMatchObject({ short: 'c', value: { type: 'integer' } });
    expect(option(model, 'health-interval')?.value?.type).toBe('string'); // duration
    expect(option(model, 'env')).toMatchObject({
      short: 'e',
      repeatable: true,
      value: { type: 'string' },
    });
    expect(option(model, 'cidfile')?.value?.path).toBe(true);
    expect(option(model, 'detach')).toMatchObject({ short: 'd' });
    expect(option(model, 'detach')?.value).toBeUndefined();
    expect(option(model, 'pull')?.value?.choices).toEqual(['always', 'missing', 'never']);
    expect(option(model, 'add-host')?.description).toBe(
      'Add a custom host-to-IP mapping (host:ip)',
    );
    expect(model.positionals).toEqual([
      { name: 'image', required: true, repeated: false },
      { name: 'command', required: false, repeated: false },
      { name: 'arg', required: false, repeated: true },
    ]);
  });

  it('SPEC §15 introspection: docker container and image ls: nested commands, REPOSITORY[:TAG] positional', () => {
    const container = parse('docker/28.2.2/container', 'docker');
    expect(container.subcommands.map((command) => command.name)).toContain('prune');
    expect(container.subcommands).toHaveLength(25);
    expect(container.positionals).toEqual([]);
    const images = parse('docker/28.2.2/image-ls', 'docker');
    expect(images.positionals).toEqual([{ name: 'repository', required: false, repeated: false }]);
    expect(option(images, 'filter')).toMatchObject({ short: 'f', value: { type: 'string' } });
  });

  it('SPEC §15 introspection: kubectl: `--flag=default:` rows take their type from the default', () => {
    const model = parse('kubectl/1.32.4/get', 'kubectl');
    expect(option(model, 'all-namespaces')).toMatchObject({ short: 'A' });
    expect(option(model, 'all-namespaces')?.value).toBeUndefined();
    expect(option(model, 'chunk-size')?.value?.type).toBe('integer');
    expect(option(model, 'filename')).toMatchObject({
      short: 'f',
      repeatable: true,
      value: { path: true },
    });
    expect(option(model, 'output')?.value?.choices).toContain('jsonpath');
    expect(option(model, 'output')?.description).toBe('Output format');
    // The usage's `(TYPE[.VERSION][.GROUP] [NAME | -l label] | …)` is said, not guessed.
    expect(model.positionals).toEqual([]);
    expect(model.unparsed[0]).toMatch(/^usage: kubectl get/);
    const logs = parse('kubectl/1.32.4/logs', 'kubectl');
    expect(option(logs, 'tail')?.value?.type).toBe('integer'); // =-1
    expect(option(logs, 'since')?.value?.type).toBe('string'); // =0s
  });

  it('SPEC §15 introspection: kubectl root and config: grouped and Available Commands', () => {
    const root = parse('kubectl/1.32.4/root', 'kubectl');
    expect(root.description).toBe('kubectl controls the Kubernetes cluster manager');
    const names = root.subcommands.map((command) => command.name);
    expect(names).toEqual(
      expect.arrayContaining(['create', 'get', 'rollout', 'api-resources', 'version']),
    );
    expect(names).toHaveLength(42);
    const config = parse('kubectl/1.32.4/config', 'kubectl');
    expect(config.subcommands).toHaveLength(15);
    expect(config.subcommands[0]).toEqual({
      name: 'current-context',
      description: 'Display the current-context',
    });
  });

  it('SPEC §15 introspection: gh: upper-case sections, `name:` rows, help topics left out', () => {
    const root = parse('gh/2.23.0/root', 'gh');
    expect(cobraParser.detect(help('gh/2.23.0/root'), 'gh')).toBeGreaterThan(0.5);
    const names = root.subcommands.map((command) => command.name);
    expect(names).toHaveLength(21);
    expect(names).toContain('pr');
    expect(names).not.toContain('environment');
    expect(root.options.map((candidate) => candidate.long)).toEqual(['help', 'version']);
    const create = parse('gh/2.23.0/pr-create', 'gh');
    expect(option(create, 'body-file')).toMatchObject({
      short: 'F',
      value: { name: 'file', path: true },
    });
    expect(option(create, 'repo')).toMatchObject({ short: 'R', value: { type: 'string' } });
    expect(option(create, 'head')?.description).toBe(
      'The branch that contains commits for your pull request',
    );
    const clone = parse('gh/2.23.0/repo-clone', 'gh');
    expect(clone.positionals).toEqual([
      { name: 'repository', required: true, repeated: false },
      { name: 'directory', required: false, repeated: false, path: true },
      { name: 'gitflags', required: false, repeated: true },
    ]);
  });

  it('SPEC §15 introspection: cobra: a subcommand help is `… --help`; other families are not claimed', () => {
    expect(cobraParser.subcommandHelp(['container', 'ls'])).toEqual([
      ['container', 'ls', '--help'],
    ]);
    expect(cobraParser.detect(help('venv/3.11.7/root'), 'venv')).toBe(0);
    expect(cobraParser.detect(help('npm/11.19.1/install'), 'npm')).toBe(0);
    expect(cobraParser.detect(help('sucrase/3.35.1/root'), 'sucrase')).toBe(0);
  });
});
