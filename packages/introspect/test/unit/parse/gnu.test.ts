// SPEC §15 introspection: the GNU getopt/argp reader on recorded helps (grep, sed, tar, find, curl, rsync, jq):
// option names, value types, optional values, choices, paths, positionals and descriptions.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption } from '../../../src/parse/model.js';
import { gnuParser } from '../../../src/parse/parsers/gnu.js';

function help(path: string): string {
  return readFileSync(new URL(`../../fixtures/help/${path}.txt`, import.meta.url), 'utf8');
}

function option(model: HelpModel, name: string): HelpOption | undefined {
  return model.options.find(
    (entry) => entry.long === name || (entry.long === undefined && entry.short === name),
  );
}

describe('SPEC §15 introspection: GNU getopt/argp helps', () => {
  const grep = gnuParser.parse(help('grep/3.8/root'), 'grep');

  it('SPEC §15 introspection: grep is claimed by the GNU reader and read as style gnu, with its description', () => {
    expect(gnuParser.detect(help('grep/3.8/root'), 'grep')).toBeGreaterThan(0.5);
    expect(grep.style).toBe('gnu');
    expect(grep.description).toBe('Search for PATTERNS in each FILE');
    expect(grep.subcommands).toEqual([]);
  });

  it('SPEC §15 introspection: grep: flags, short aliases, integer NUM values and FILE paths', () => {
    expect(option(grep, 'ignore-case')).toEqual({
      long: 'ignore-case',
      short: 'i',
      description: 'ignore case distinctions in patterns and data',
    });
    expect(option(grep, 'max-count')?.value).toEqual({ name: 'NUM', type: 'integer' });
    expect(option(grep, 'max-count')?.short).toBe('m');
    expect(option(grep, 'file')?.value).toEqual({ name: 'FILE', type: 'string', path: true });
    expect(option(grep, 'I')).toMatchObject({ short: 'I' });
    expect(option(grep, 'help')).toMatchObject({ long: 'help' });
    expect(option(grep, 'version')).toMatchObject({ short: 'V' });
  });

  it('SPEC §15 introspection: grep: `--color[=WHEN],` over two lines is one option with an optional value and its choices', () => {
    expect(option(grep, 'color')?.value).toEqual({
      name: 'WHEN',
      type: 'string',
      optional: true,
      choices: ['always', 'never', 'auto'],
    });
    expect(option(grep, 'binary-files')?.value?.choices).toEqual([
      'binary',
      'text',
      'without-match',
    ]);
    expect(option(grep, 'directories')?.description).toBe('how to handle directories');
  });

  it('SPEC §15 introspection: grep: positionals from the usage (PATTERNS required, [FILE]... optional and repeated); -NUM is unparsed', () => {
    expect(grep.positionals).toEqual([
      { name: 'patterns', required: true, repeated: false },
      { name: 'file', required: false, repeated: true, path: true },
    ]);
    expect(grep.unparsed).toEqual(['-NUM same as --context=NUM']);
  });

  it('SPEC §15 introspection: sed: specs with their description below, `-i[SUFFIX]`, `-l N`, `-e script`', () => {
    const sed = gnuParser.parse(help('sed/4.9/root'), 'sed');
    expect(option(sed, 'in-place')).toMatchObject({
      short: 'i',
      value: { name: 'SUFFIX', optional: true },
    });
    expect(option(sed, 'line-length')?.value).toEqual({ name: 'N', type: 'integer' });
    expect(option(sed, 'expression')).toMatchObject({
      short: 'e',
      value: { name: 'script', type: 'string' },
    });
    expect(option(sed, 'quiet')).toEqual({
      long: 'quiet',
      short: 'n',
      description: 'suppress automatic printing of pattern space',
    });
    expect(option(sed, 'regexp-extended')?.short).toBe('E');
    expect(sed.positionals.map((positional) => positional.name)).toEqual([
      'script-only-if-no-other-script',
      'input-file',
    ]);
  });

  it('SPEC §15 introspection: tar: argp layout, NUMBER as integer, `--occurrence[=NUMBER]`, a spec filling its column', () => {
    const tar = gnuParser.parse(help('tar/1.34/root'), 'tar');
    expect(option(tar, 'strip-components')?.value?.type).toBe('integer');
    expect(option(tar, 'occurrence')?.value).toMatchObject({ type: 'integer', optional: true });
    expect(option(tar, 'directory')).toMatchObject({
      short: 'C',
      value: { name: 'DIR', path: true },
    });
    expect(option(tar, 'exclude-caches-under')?.description).toBe(
      'exclude everything under directories containing CACHEDIR.TAG',
    );
    expect(option(tar, 'help')?.short).toBe('?');
    expect(tar.options.length).toBeGreaterThan(150);
  });

  it('SPEC §15 introspection: find: single-dash primaries as options (LEVELS, N integer; FILE a path); -O from the usage', () => {
    const find = gnuParser.parse(help('find/4.9.0/root'), 'find');
    expect(option(find, 'maxdepth')?.value?.type).toBe('integer');
    expect(option(find, 'mtime')?.value?.type).toBe('integer');
    expect(option(find, 'newer')?.value?.path).toBe(true);
    expect(option(find, 'files0-from')?.value?.path).toBe(true);
    expect(option(find, 'empty')?.value).toBeUndefined();
    expect(option(find, 'O')?.value?.type).toBe('integer');
    expect(option(find, 'D')?.value?.name).toBe('debugopts');
    expect(find.unparsed).toEqual([]);
    expect(find.positionals).toEqual([
      { name: 'path', required: false, repeated: true, path: true },
      { name: 'expression', required: false, repeated: false },
    ]);
  });

  it('SPEC §15 introspection: curl: one space before the description after `<x>`; fractional seconds as number', () => {
    const curl = gnuParser.parse(help('curl/7.88.1/root'), 'curl');
    expect(option(curl, 'connect-timeout')?.value?.type).toBe('number');
    expect(option(curl, 'max-redirs')?.value?.type).toBe('integer');
    expect(option(curl, 'aws-sigv4')?.description).toBe('Use AWS V4 signature authentication');
    expect(option(curl, 'proxy')?.value?.name).toBe('[protocol://]host[:port]');
    expect(option(curl, 'next')?.short).toBe(':');
    expect(curl.positionals).toEqual([{ name: 'url', required: true, repeated: false }]);
  });

  it('SPEC §15 introspection: rsync: long name first (`--verbose, -v`), `e|a|c` choices, SRC [SRC]... as one repeated positional', () => {
    const rsync = gnuParser.parse(help('rsync/3.5.0/root'), 'rsync');
    expect(option(rsync, 'verbose')?.short).toBe('v');
    expect(option(rsync, 'stderr')?.value?.choices).toEqual(['e', 'a', 'c']);
    expect(option(rsync, 'timeout')?.value?.type).toBe('integer');
    expect(option(rsync, 'help')).toMatchObject({ short: 'h' });
    expect(option(rsync, 'help')?.value).toBeUndefined();
    expect(rsync.description).toBe(
      'rsync is a file transfer program capable of efficient remote update via a fast differencing algorithm',
    );
    expect(rsync.positionals).toEqual([
      { name: 'src', required: true, repeated: true },
      { name: 'dest', required: true, repeated: false },
    ]);
  });

  it('SPEC §15 introspection: jq: short-only flags and `--arg a v` two-word values; its description from the banner line', () => {
    const jq = gnuParser.parse(help('jq/1.6/root'), 'jq');
    expect(jq.description).toBe('commandline JSON processor');
    expect(option(jq, 'c')).toEqual({
      short: 'c',
      description: 'compact instead of pretty-printed output',
    });
    expect(option(jq, 'arg')?.value?.name).toBe('a v');
    expect(jq.positionals[0]).toEqual({ name: 'jq-filter', required: true, repeated: false });
  });

  it('SPEC §15 introspection: a subcommand help is asked with --help', () => {
    expect(gnuParser.subcommandHelp(['x'])).toEqual([['x', '--help']]);
  });
});
