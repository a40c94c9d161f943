// SPEC §15 introspection: the git reader on git 2.39.5's recorded helps: the root's command groups and usage-only
// options, parse-options lines of `git SUB -h`, `or:` lines naming sub-subcommands.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { gitParser } from '../../../src/parse/parsers/git.js';

function help(name: string): string {
  return readFileSync(
    new URL(`../../fixtures/help/git/2.39.5/${name}.txt`, import.meta.url),
    'utf8',
  );
}

function option(model: HelpModel, name: string): HelpOption | undefined {
  return model.options.find(
    (entry) => entry.long === name || (entry.long === undefined && entry.short === name),
  );
}

describe('SPEC §15 introspection: git helps', () => {
  it('SPEC §15 introspection: git --help and git SUB -h are claimed by the git reader', () => {
    for (const name of ['root', 'commit', 'remote', 'clone']) {
      expect(gitParser.detect(help(name), 'git')).toBeGreaterThan(0.9);
    }
    expect(gitParser.detect('Usage: grep [OPTION]... PATTERNS [FILE]...\n', 'grep')).toBe(0);
  });

  it('SPEC §15 introspection: git --help: the grouped common commands with descriptions', () => {
    const root = gitParser.parse(help('root'), 'git');
    expect(root.style).toBe('git');
    expect(root.subcommands).toHaveLength(22);
    expect(root.subcommands[0]).toEqual({
      name: 'clone',
      description: 'Clone a repository into a new directory',
    });
    expect(root.subcommands.map((command) => command.name)).toContain('commit');
    expect(root.positionals).toEqual([]);
  });

  it('SPEC §15 introspection: git --help: global options from the usage (`[-v | --version]` paired, `-C <path>` a path)', () => {
    const root = gitParser.parse(help('root'), 'git');
    expect(option(root, 'version')).toEqual({ long: 'version', short: 'v' });
    expect(option(root, 'C')?.value).toEqual({ name: 'path', type: 'string', path: true });
    expect(option(root, 'exec-path')?.value).toMatchObject({ optional: true, path: true });
    expect(option(root, 'paginate')?.short).toBe('p');
    expect(option(root, 'P')).toEqual({ short: 'P' });
    expect(option(root, 'no-pager')).toEqual({ long: 'no-pager' });
    expect(option(root, 'config-env')?.value?.name).toBe('<name>=<envvar>');
  });

  it('SPEC §15 introspection: git commit -h: option lines, values below long specs, optional values, usage-only options', () => {
    const commit = gitParser.parse(help('commit'), 'git');
    expect(option(commit, 'message')).toEqual({
      long: 'message',
      short: 'm',
      value: { name: 'message', type: 'string' },
      description: 'commit message',
    });
    expect(option(commit, 'file')?.value).toEqual({ name: 'file', type: 'string', path: true });
    expect(option(commit, 'gpg-sign')?.value).toMatchObject({ name: 'key-id', optional: true });
    expect(option(commit, 'fixup')?.value).toMatchObject({ name: '[(amend|reword):]commit' });
    expect(option(commit, 'fixup')?.value?.optional).toBeUndefined();
    expect(option(commit, 'allow-empty')).toBeDefined();
    expect(option(commit, 'no-status')).toBeDefined();
    expect(commit.positionals).toEqual([{ name: 'pathspec', required: false, repeated: true }]);
    expect(commit.unparsed).toEqual([]);
  });

  it('SPEC §15 introspection: git clone -h: <n> as integer, required and optional positionals', () => {
    const clone = gitParser.parse(help('clone'), 'git');
    expect(option(clone, 'jobs')?.value?.type).toBe('integer');
    expect(option(clone, 'depth')?.value?.type).toBe('integer');
    expect(option(clone, 'recurse-submodules')?.value?.optional).toBe(true);
    expect(clone.positionals).toEqual([
      { name: 'repo', required: true, repeated: false },
      { name: 'dir', required: false, repeated: false, path: true },
    ]);
  });

  it('SPEC §15 introspection: git remote -h: `or:` usages name its subcommands; git remote add -h its choices', () => {
    const remote = gitParser.parse(help('remote'), 'git');
    expect(remote.subcommands.map((command) => command.name)).toEqual([
      'add',
      'rename',
      'remove',
      'set-head',
      'show',
      'prune',
      'update',
      'set-branches',
      'get-url',
      'set-url',
    ]);
    const add = gitParser.parse(help('remote-add'), 'git');
    expect(add.subcommands).toEqual([]);
    expect(option(add, 'mirror')?.value).toMatchObject({
      optional: true,
      choices: ['push', 'fetch'],
    });
    expect(add.positionals.map((positional) => positional.name)).toEqual(['name', 'url']);
  });

  it('SPEC §15 introspection: git log -h: `or: git show` is another command, not a subcommand', () => {
    const log = gitParser.parse(help('log'), 'git');
    expect(log.subcommands).toEqual([]);
    expect(option(log, 'L')?.value?.name).toBe('range:file');
  });

  it('SPEC §15 introspection: a subcommand help is asked with -h after the path', () => {
    expect(gitParser.subcommandHelp(['remote', 'add'])).toEqual([['remote', 'add', '-h']]);
  });
});
