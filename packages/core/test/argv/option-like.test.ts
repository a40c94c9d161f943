// SPEC §2 argv, "a value is data": a value starting with "-" must not reach a program where it
// would read it as an option. A positional's such value is refused before anything runs unless it
// follows "--" (after_double_dash) or the positional declares accepts_options; path and file_arg
// values are substituted first (absolute paths) and so never start with "-"; option values pass,
// except on options declaring accepts_options: false.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArgv, type ArgvLeaf } from '../../src/argv/build.js';
import { prepareInvocation } from '../../src/argv/prepare.js';
import type { ToolLeaf } from '../../src/definition/flatten.js';
import type { ArgumentDefinition } from '../../src/definition/schema.js';
import { AhmaError } from '../../src/errors.js';

const leaf = (overrides: Partial<ArgvLeaf> = {}): ArgvLeaf => ({
  command: ['tool'],
  subcommandPath: ['sub'],
  options: [],
  positionals: [],
  positionalsFirst: false,
  ...overrides,
});

const str = (name: string, extra: Partial<ArgumentDefinition> = {}): ArgumentDefinition => ({
  name,
  type: 'string',
  ...extra,
});
const arr = (name: string, extra: Partial<ArgumentDefinition> = {}): ArgumentDefinition => ({
  name,
  type: 'array',
  items: { type: 'string' },
  ...extra,
});

/** The AhmaError buildArgv throws, or undefined when it builds. */
function refusal(l: ArgvLeaf, args: Record<string, unknown>): AhmaError | undefined {
  try {
    buildArgv(l, args);
    return undefined;
  } catch (error) {
    if (error instanceof AhmaError) return error;
    throw error;
  }
}

describe('buildArgv: positional values that look like options', () => {
  const gitLog = leaf({ positionals: [str('revision'), arr('paths')] });

  it('SPEC §2 argv: a positional value starting with "-" is refused, naming the field and the fix', () => {
    const error = refusal(gitLog, { revision: '--output=/tmp/pwned' });
    expect(error?.code).toBe('ARGV_INVALID');
    expect(error?.message).toBe(
      'argument "revision": "--output=/tmp/pwned" starts with "-", so the program would read it as an option, not as a value; this argument\'s values may not start with "-" (pass flags through the tool\'s own parameters)',
    );
  });

  it('SPEC §2 argv: every item of an array positional is checked, the offending one named', () => {
    const error = refusal(gitLog, { revision: 'main', paths: ['src', '-rf'] });
    expect(error?.code).toBe('ARGV_INVALID');
    expect(error?.message).toContain('argument "paths": "-rf" starts with "-"');
  });

  it('SPEC §2 argv: a lone "-" and a lone "--" are refused too', () => {
    for (const value of ['-', '--']) {
      expect(refusal(gitLog, { revision: value })?.code).toBe('ARGV_INVALID');
    }
  });

  it('R5.3: numbers count by their text: a negative one is refused, others pass', () => {
    const counted = leaf({
      positionals: [
        { name: 'n', type: 'integer' },
        { name: 'ratio', type: 'number' },
      ],
    });
    expect(refusal(counted, { n: -5 })?.message).toContain('argument "n": "-5" starts with "-"');
    expect(refusal(counted, { n: 1, ratio: -0.5 })?.message).toContain('argument "ratio"');
    expect(buildArgv(counted, { n: 0, ratio: 1.5 })).toEqual(['tool', 'sub', '0', '1.5']);
  });

  it('R5.3: a default counts like a given value', () => {
    const defaulted = leaf({ positionals: [str('target', { default: '-x' })] });
    expect(refusal(defaulted, {})?.code).toBe('ARGV_INVALID');
    expect(buildArgv(defaulted, { target: 'y' })).toEqual(['tool', 'sub', 'y']);
  });

  it('SPEC §2 argv: a "-" inside a value, an empty value and other values pass unchanged', () => {
    expect(
      buildArgv(gitLog, { revision: 'HEAD~1..feature-x', paths: ['a-b', '', ' -x', '+1'] }),
    ).toEqual(['tool', 'sub', 'HEAD~1..feature-x', 'a-b', '', ' -x', '+1']);
  });

  it('SPEC §2 argv: positional_args_first changes nothing: still refused', () => {
    const first = leaf({ positionals: [arr('paths')], positionalsFirst: true });
    expect(refusal(first, { paths: ['-delete'] })?.code).toBe('ARGV_INVALID');
  });

  it('SPEC §2 argv: the refusal names the value shortened, so a huge one does not flood it', () => {
    const message = refusal(gitLog, { revision: `-${'x'.repeat(10_000)}` })?.message ?? '';
    expect(message.length).toBeLessThan(400);
    expect(message).toContain('…"');
  });
});

describe('buildArgv: where a leading "-" is allowed', () => {
  it('SPEC §2 argv: after_double_dash values follow "--", so they may start with "-"', () => {
    const cargoTest = leaf({
      positionals: [str('testname'), arr('test-args', { after_double_dash: true })],
    });
    expect(buildArgv(cargoTest, { testname: 'parse', 'test-args': ['--nocapture', '-q'] })).toEqual(
      ['tool', 'sub', 'parse', '--', '--nocapture', '-q'],
    );
    // The positional before "--" is still checked.
    expect(refusal(cargoTest, { testname: '--ignored' })?.message).toContain('argument "testname"');
  });

  it('SPEC §2 argv: a positional after the one that put "--" may start with "-"; without that "--" it may not', () => {
    const config = leaf({ positionals: [str('name', { after_double_dash: true }), str('value')] });
    expect(buildArgv(config, { name: 'core.compression', value: '-1' })).toEqual([
      'tool',
      'sub',
      '--',
      'core.compression',
      '-1',
    ]);
    // No name: no "--" is passed, so the value would be read as an option.
    expect(refusal(config, { value: '-1' })?.message).toContain('argument "value"');
  });

  it('SPEC §2 argv: accepts_options lets a positional take option-like values verbatim', () => {
    const run = leaf({ positionals: [str('script'), arr('args', { accepts_options: true })] });
    expect(buildArgv(run, { script: 'build', args: ['--watch', '-x'] })).toEqual([
      'tool',
      'sub',
      'build',
      '--watch',
      '-x',
    ]);
    // Only where declared: the script name itself is still checked.
    expect(refusal(run, { script: '--filter=x' })?.message).toContain('argument "script"');
  });
});

describe('buildArgv: option values', () => {
  it('SPEC §2 argv: an option value may start with "-": the program takes it as the value', () => {
    const grep = leaf({
      options: [str('pattern', { alias: 'e' }), str('format', { joined: true }), arr('tag')],
    });
    expect(buildArgv(grep, { pattern: '-x', format: '--y', tag: ['-z'] })).toEqual([
      'tool',
      'sub',
      '-e',
      '-x',
      '--format=--y',
      '--tag',
      '-z',
    ]);
  });

  it('SPEC §2 argv: accepts_options: false refuses an option value starting with "-", in every form', () => {
    const refusing = { accepts_options: false } as const;
    const l = leaf({
      options: [
        str('preid', refusing),
        str('message', { ...refusing, alias: 'm' }),
        str('scope', { ...refusing, joined: true }),
        arr('tag', refusing),
        { name: 'depth', type: 'integer', ...refusing },
      ],
    });
    expect(refusal(l, { preid: '--json' })?.message).toContain('argument "preid": "--json"');
    expect(refusal(l, { message: '-g' })?.message).toContain('argument "message"');
    expect(refusal(l, { scope: '--registry=x' })?.message).toContain('argument "scope"');
    expect(refusal(l, { tag: ['a', '-b'] })?.message).toContain('argument "tag": "-b"');
    expect(refusal(l, { depth: -1 })?.message).toContain('argument "depth"');
    expect(
      buildArgv(l, { preid: 'beta', message: 'v%s', scope: '@org', tag: ['a-b'], depth: 1 }),
    ).toEqual([
      'tool',
      'sub',
      '--preid',
      'beta',
      '-m',
      'v%s',
      '--scope=@org',
      '--tag',
      'a-b',
      '--depth',
      '1',
    ]);
  });
});

describe('prepareInvocation: substituted values, and nothing left behind', () => {
  let root = '';
  let scope = '';

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ahma-option-like-')));
    scope = join(root, 'scope');
    await mkdir(join(root, 'tmp'), { recursive: true });
    await mkdir(scope);
    await writeFile(join(scope, '-n'), 'the file named -n\n');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const toolLeaf = (overrides: Partial<ToolLeaf>): ToolLeaf => ({
    name: 'tool',
    definitionName: 'tool',
    pointer: '',
    command: ['tool'],
    subcommandPath: [],
    declaredPath: [],
    baseDescription: 'A tool.',
    enabled: true,
    synchronous: true,
    timeoutSeconds: undefined,
    guidanceKey: undefined,
    options: [],
    positionals: [],
    workingDirectory: undefined,
    hints: undefined,
    positionalsFirst: false,
    sequence: undefined,
    stepDelayMs: 0,
    sequencePointer: undefined,
    ...overrides,
  });

  it('SPEC §2 argv: a path positional named like an option becomes its absolute path, read as a file (real cat)', async () => {
    const cat = toolLeaf({
      command: ['cat'],
      positionals: [arr('paths', { items: { type: 'string', format: 'path' } })],
    });
    const prepared = await prepareInvocation(cat, { paths: ['-n'] }, { scope });
    expect(prepared.argv).toEqual(['cat', join(scope, '-n')]);
    const [file, ...args] = prepared.argv;
    // Read as an option, "-n" would make cat number the lines of its (empty) stdin instead.
    expect(execFileSync(file ?? '', args, { encoding: 'utf8', stdio: 'pipe' })).toBe(
      'the file named -n\n',
    );
    await prepared.cleanup();
  });

  it('SPEC §2 argv: a file_arg positional is passed as its temporary file, whatever its text', async () => {
    const tempRoot = join(root, 'tmp');
    const l = toolLeaf({ positionals: [str('text', { file_arg: true })] });
    const prepared = await prepareInvocation(l, { text: '--output=/x' }, { scope, tempRoot });
    expect(prepared.argv).toHaveLength(2);
    expect(prepared.argv[1]).toMatch(new RegExp(`^${tempRoot}/ahma-args-`));
    await prepared.cleanup();
  });

  it('SPEC §2 argv: a refused value is reported before anything runs, and temp files are removed', async () => {
    const tempRoot = join(root, 'tmp');
    const l = toolLeaf({
      options: [str('message', { file_arg: true, file_flag: '-F' })],
      positionals: [str('revision')],
    });
    const error: unknown = await prepareInvocation(
      l,
      { message: 'kept in a temp file', revision: '--output=x' },
      { scope, tempRoot },
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AhmaError);
    expect((error as AhmaError).code).toBe('ARGV_INVALID');
    expect(await readdir(tempRoot)).toEqual([]);
  });
});
