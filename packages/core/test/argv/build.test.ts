import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArgv, flagOf, type ArgvLeaf } from '../../src/argv/build.js';
import { flattenDefinition } from '../../src/definition/flatten.js';
import { toolDefinitionSchema, type ArgumentDefinition } from '../../src/definition/schema.js';

function leaf(overrides: Partial<ArgvLeaf> = {}): ArgvLeaf {
  return {
    command: ['tool'],
    subcommandPath: [],
    options: [],
    positionals: [],
    positionalsFirst: false,
    ...overrides,
  };
}

const str = (name: string, extra: Partial<ArgumentDefinition> = {}): ArgumentDefinition => ({
  name,
  type: 'string',
  ...extra,
});
const bool = (name: string, extra: Partial<ArgumentDefinition> = {}): ArgumentDefinition => ({
  name,
  type: 'boolean',
  ...extra,
});
const arr = (
  name: string,
  itemType: 'string' | 'integer' | 'number' | 'boolean' = 'string',
  extra: Partial<ArgumentDefinition> = {},
): ArgumentDefinition => ({ name, type: 'array', items: { type: itemType }, ...extra });

const ONE_MIB = 'x'.repeat(1024 * 1024);

const HOSTILE: readonly (readonly [string, string])[] = [
  ['a command separator', '; rm -rf ~'],
  ['command substitution', '$(id)'],
  ['backticks', '`id`'],
  ['a newline', 'a\nb'],
  ['a leading dash', '--upload-pack=evil'],
  ['a short-flag lookalike', '-rf'],
  ['unicode and emoji', 'héllo wörld 日本語 🚀👩‍💻'],
  ['the empty string', ''],
  ['quotes', `"double" 'single' \\"escaped\\"`],
  ['a bare glob', '*'],
  ['a path glob', '**/*.ts'],
  ['a variable', '$HOME ${PATH}'],
  ['pipes and redirects', '| cat /etc/passwd > /tmp/x && echo pwned'],
  ['whitespace', ' a b\tc  '],
  ['a backslash', '\\'],
  ['a carriage return and tab', 'a\r\n\tb'],
];

describe('buildArgv: argv shape', () => {
  it('SPEC §2 argv: command tokens, then the subcommand path, then options, then positionals', () => {
    const argv = buildArgv(
      leaf({
        command: ['python3', '-m', 'pytest'],
        subcommandPath: ['run', 'unit'],
        options: [bool('verbose')],
        positionals: [str('target')],
      }),
      { target: 'tests/', verbose: true },
    );
    expect(argv).toEqual(['python3', '-m', 'pytest', 'run', 'unit', '--verbose', 'tests/']);
  });

  it('SPEC §2 argv: a command with fixed leading args and no subcommands or arguments', () => {
    expect(buildArgv(leaf({ command: ['cargo', '+nightly'] }), {})).toEqual(['cargo', '+nightly']);
  });

  it('SPEC §2 argv: the command array is not mutated and a fresh array is returned', () => {
    const command = ['git'];
    const l = leaf({ command, subcommandPath: ['status'] });
    const first = buildArgv(l, {});
    first.push('--evil');
    expect(command).toEqual(['git']);
    expect(buildArgv(l, {})).toEqual(['git', 'status']);
  });

  it('SPEC §2 argv: options follow declared order, not the order of the call arguments', () => {
    const l = leaf({ options: [str('b'), str('a'), bool('c'), str('d')] });
    const argv = buildArgv(l, { d: '4', c: true, a: '1', b: '2' });
    expect(argv).toEqual(['tool', '--b', '2', '--a', '1', '--c', '--d', '4']);
  });

  it('SPEC §2 argv: positionals follow declared order', () => {
    const l = leaf({ positionals: [str('src'), str('dst')] });
    expect(buildArgv(l, { dst: 'to', src: 'from' })).toEqual(['tool', 'from', 'to']);
  });

  it('SPEC §2 argv: positionals come after options by default', () => {
    const l = leaf({
      subcommandPath: ['cp'],
      options: [bool('recursive'), str('mode')],
      positionals: [str('src'), str('dst')],
    });
    expect(buildArgv(l, { src: 'a', dst: 'b', recursive: true, mode: '644' })).toEqual([
      'tool',
      'cp',
      '--recursive',
      '--mode',
      '644',
      'a',
      'b',
    ]);
  });

  it('SPEC §2 argv: positional_args_first puts positionals before options, after the subcommand path', () => {
    const l = leaf({
      subcommandPath: ['cp'],
      options: [bool('recursive'), str('mode')],
      positionals: [str('src'), str('dst')],
      positionalsFirst: true,
    });
    expect(buildArgv(l, { src: 'a', dst: 'b', recursive: true, mode: '644' })).toEqual([
      'tool',
      'cp',
      'a',
      'b',
      '--recursive',
      '--mode',
      '644',
    ]);
  });

  it('R1.1: a JSON definition flattens to leaves whose argv follows the definition', () => {
    const json = JSON.stringify({
      name: 'git',
      description: 'Git',
      command: 'git -c color.ui=never',
      subcommand: [
        {
          name: 'commit',
          description: 'Record changes',
          options: [
            { name: 'message', type: 'string', alias: 'm' },
            { name: 'amend', type: 'boolean' },
            { name: 'no-verify', type: 'boolean' },
          ],
          positional_args: [{ name: 'paths', type: 'array', items: { type: 'string' } }],
        },
        {
          name: 'remote',
          description: 'Remotes',
          subcommand: [{ name: 'default', description: 'List remotes', options: [] }],
        },
      ],
    });
    const definition = toolDefinitionSchema.parse(JSON.parse(json));
    const leaves = flattenDefinition(definition);
    const commit = leaves.find((l) => l.name === 'git_commit');
    const remote = leaves.find((l) => l.name === 'git_remote');
    expect(commit).toBeDefined();
    expect(remote).toBeDefined();
    if (commit === undefined || remote === undefined) return;
    expect(
      buildArgv(commit, {
        paths: ['a.txt', 'b c.txt'],
        amend: false,
        'no-verify': true,
        message: 'fix: it',
      }),
    ).toEqual([
      'git',
      '-c',
      'color.ui=never',
      'commit',
      '-m',
      'fix: it',
      '--no-verify',
      'a.txt',
      'b c.txt',
    ]);
    // A "default" segment collapses into its parent: it never reaches argv.
    expect(buildArgv(remote, {})).toEqual(['git', '-c', 'color.ui=never', 'remote']);
  });
});

describe('buildArgv: joined', () => {
  it('SPEC §2 argv: a joined option is one word "--name=value", per array element too', () => {
    const log = leaf({
      command: ['git'],
      subcommandPath: ['log'],
      options: [str('format', { joined: true }), arr('author', 'string', { joined: true })],
    });
    expect(buildArgv(log, { format: '%h %s', author: ['a b', 'c'] })).toEqual([
      'git',
      'log',
      '--format=%h %s',
      '--author=a b',
      '--author=c',
    ]);
    expect(buildArgv(log, { format: '' })).toEqual(['git', 'log', '--format=']);
    expect(buildArgv(log, {})).toEqual(['git', 'log']);
  });
});

describe('buildArgv: after_double_dash', () => {
  const cargoTest = leaf({
    command: ['cargo'],
    subcommandPath: ['test'],
    options: [bool('workspace')],
    positionals: [str('testname'), arr('test-args', 'string', { after_double_dash: true })],
  });

  it('SPEC §2 argv: "--" goes before the first after_double_dash positional that has values', () => {
    expect(
      buildArgv(cargoTest, { workspace: true, testname: 'parse', 'test-args': ['--nocapture'] }),
    ).toEqual(['cargo', 'test', '--workspace', 'parse', '--', '--nocapture']);
  });

  it('SPEC §2 argv: no "--" when that positional has no value (absent, null or an empty array)', () => {
    expect(buildArgv(cargoTest, { testname: 'parse' })).toEqual(['cargo', 'test', 'parse']);
    expect(buildArgv(cargoTest, { 'test-args': [] })).toEqual(['cargo', 'test']);
    expect(buildArgv(cargoTest, { 'test-args': null })).toEqual(['cargo', 'test']);
  });

  it('SPEC §2 argv: a value that looks like an option stays a value after "--", and "--" is passed once', () => {
    const two = leaf({
      positionals: [
        str('first', { after_double_dash: true }),
        arr('rest', 'string', { after_double_dash: true }),
      ],
    });
    expect(buildArgv(two, { first: '--force', rest: ['-rf', '--'] })).toEqual([
      'tool',
      '--',
      '--force',
      '-rf',
      '--',
    ]);
  });
});

describe('buildArgv: booleans', () => {
  it('SPEC §2 argv: boolean true → --name', () => {
    expect(buildArgv(leaf({ options: [bool('force')] }), { force: true })).toEqual([
      'tool',
      '--force',
    ]);
  });

  it('SPEC §2 argv: boolean true with an alias → -x', () => {
    expect(buildArgv(leaf({ options: [bool('force', { alias: 'f' })] }), { force: true })).toEqual([
      'tool',
      '-f',
    ]);
  });

  it('SPEC §2 argv: boolean false → nothing', () => {
    const l = leaf({ options: [bool('force'), bool('quiet', { alias: 'q' })] });
    expect(buildArgv(l, { force: false, quiet: false })).toEqual(['tool']);
  });

  it('SPEC §2 argv: boolean option names already starting with "-" are used verbatim', () => {
    const l = leaf({ options: [bool('-v'), bool('--all')] });
    expect(buildArgv(l, { '-v': true, '--all': true })).toEqual(['tool', '-v', '--all']);
  });

  it('R5.3: an absent boolean gives nothing', () => {
    expect(buildArgv(leaf({ options: [bool('force')] }), {})).toEqual(['tool']);
  });
});

describe('buildArgv: value options', () => {
  it('SPEC §2 argv: value option → --name value', () => {
    expect(buildArgv(leaf({ options: [str('branch')] }), { branch: 'main' })).toEqual([
      'tool',
      '--branch',
      'main',
    ]);
  });

  it('SPEC §2 argv: value option names starting with "-" or "--" are used verbatim', () => {
    const l = leaf({ options: [str('-o'), str('--target-dir')] });
    expect(buildArgv(l, { '-o': 'out', '--target-dir': 'build' })).toEqual([
      'tool',
      '-o',
      'out',
      '--target-dir',
      'build',
    ]);
  });

  it('SPEC §2 argv: an alias on a value option → -x value', () => {
    const l = leaf({ options: [str('message', { alias: 'm' })] });
    expect(buildArgv(l, { message: 'hello' })).toEqual(['tool', '-m', 'hello']);
  });

  it('SPEC §2 argv: the empty string is passed as a value, not dropped', () => {
    expect(buildArgv(leaf({ options: [str('prefix')] }), { prefix: '' })).toEqual([
      'tool',
      '--prefix',
      '',
    ]);
  });

  it('R5.3: integers and numbers are stringified (0 and negatives included)', () => {
    const l = leaf({
      options: [
        { name: 'jobs', type: 'integer' },
        { name: 'ratio', type: 'number' },
        { name: 'zero', type: 'integer' },
        { name: 'offset', type: 'integer' },
      ],
      positionals: [{ name: 'n', type: 'number' }],
    });
    expect(buildArgv(l, { jobs: 8, ratio: 0.25, zero: 0, offset: -3, n: 1.5 })).toEqual([
      'tool',
      '--jobs',
      '8',
      '--ratio',
      '0.25',
      '--zero',
      '0',
      '--offset',
      '-3',
      '1.5',
    ]);
  });

  it('R5.3: a string that looks like a number stays byte-identical', () => {
    const l = leaf({ options: [str('version')], positionals: [str('rev')] });
    expect(buildArgv(l, { version: '1.10', rev: '007' })).toEqual([
      'tool',
      '--version',
      '1.10',
      '007',
    ]);
  });
});

describe('buildArgv: arrays', () => {
  it('SPEC §2 argv: an array option repeats the flag per item', () => {
    const l = leaf({ options: [arr('include')] });
    expect(buildArgv(l, { include: ['a', 'b', 'c'] })).toEqual([
      'tool',
      '--include',
      'a',
      '--include',
      'b',
      '--include',
      'c',
    ]);
  });

  it('SPEC §2 argv: an array option with an alias repeats -x per item', () => {
    const l = leaf({ options: [arr('include', 'string', { alias: 'I' })] });
    expect(buildArgv(l, { include: ['x', 'y'] })).toEqual(['tool', '-I', 'x', '-I', 'y']);
  });

  it('SPEC §2 argv: an array positional gives one argv element per item', () => {
    const l = leaf({ positionals: [arr('files')] });
    expect(buildArgv(l, { files: ['a b', 'c', ''] })).toEqual(['tool', 'a b', 'c', '']);
  });

  it('R5.3: numeric array items are stringified', () => {
    const l = leaf({ options: [arr('port', 'integer')], positionals: [arr('w', 'number')] });
    expect(buildArgv(l, { port: [80, 443], w: [0.5, 2] })).toEqual([
      'tool',
      '--port',
      '80',
      '--port',
      '443',
      '0.5',
      '2',
    ]);
  });

  it('SPEC §2 argv: empty arrays give nothing, for options and positionals', () => {
    const l = leaf({ options: [arr('include')], positionals: [arr('files')] });
    expect(buildArgv(l, { include: [], files: [] })).toEqual(['tool']);
  });
});

describe('buildArgv: defaults and absent values', () => {
  it('R5.3: a default is applied when the value is absent', () => {
    const l = leaf({
      options: [str('format', { default: 'json' }), bool('color', { default: true })],
      positionals: [str('target', { default: '.' })],
    });
    expect(buildArgv(l, {})).toEqual(['tool', '--format', 'json', '--color', '.']);
  });

  it('R5.3: a given value wins over the default', () => {
    const l = leaf({
      options: [str('format', { default: 'json' }), bool('color', { default: true })],
      positionals: [str('target', { default: '.' })],
    });
    expect(buildArgv(l, { format: 'text', color: false, target: 'src' })).toEqual([
      'tool',
      '--format',
      'text',
      'src',
    ]);
  });

  it('R5.3: null unsets an argument: nothing is passed, not even its default', () => {
    const l = leaf({
      options: [str('format', { default: 'json' }), str('name'), arr('tag')],
      positionals: [str('target', { default: '.' }), str('extra')],
    });
    expect(
      buildArgv(l, { format: null, name: null, tag: null, target: null, extra: null }),
    ).toEqual(['tool']);
  });

  it('R5.3: an explicit undefined is treated as absent', () => {
    const l = leaf({ options: [str('format', { default: 'json' }), str('name')] });
    expect(buildArgv(l, { format: undefined, name: undefined })).toEqual([
      'tool',
      '--format',
      'json',
    ]);
  });

  it('R5.3: array defaults are expanded like given arrays', () => {
    const l = leaf({
      options: [arr('feature', 'string', { default: ['a', 'b'] })],
      positionals: [arr('files', 'string', { default: ['x'] })],
    });
    expect(buildArgv(l, {})).toEqual(['tool', '--feature', 'a', '--feature', 'b', 'x']);
  });

  it('R5.3: an absent value with no default gives nothing, even for required parameters', () => {
    const l = leaf({
      options: [str('name', { required: true })],
      positionals: [str('target', { required: true })],
    });
    expect(buildArgv(l, {})).toEqual(['tool']);
  });

  it('R5.3: inherited Object.prototype keys are not taken as argument values', () => {
    const l = leaf({
      options: [str('constructor'), str('toString')],
      positionals: [str('valueOf')],
    });
    expect(buildArgv(l, {})).toEqual(['tool']);
  });
});

describe('buildArgv: file_arg', () => {
  it('SPEC §2 argv: file_arg with file_flag → file_flag, then the (already substituted) path', () => {
    const l = leaf({
      subcommandPath: ['commit'],
      options: [str('message', { file_arg: true, file_flag: '-F' })],
    });
    expect(buildArgv(l, { message: '/tmp/ahma-args-x/0-message' })).toEqual([
      'tool',
      'commit',
      '-F',
      '/tmp/ahma-args-x/0-message',
    ]);
  });

  it('SPEC §2 argv: file_flag wins over the alias and the name', () => {
    const l = leaf({
      options: [str('message', { alias: 'm', file_arg: true, file_flag: '--file' })],
    });
    expect(buildArgv(l, { message: '/t/p' })).toEqual(['tool', '--file', '/t/p']);
  });

  it('SPEC §2 argv: file_arg without file_flag passes the path with the normal flag', () => {
    const l = leaf({ options: [str('body', { file_arg: true })] });
    expect(buildArgv(l, { body: '/t/p' })).toEqual(['tool', '--body', '/t/p']);
  });

  it('SPEC §2 argv: an absent file_arg option gives nothing (the file_flag is not emitted alone)', () => {
    const l = leaf({ options: [str('message', { file_arg: true, file_flag: '-F' })] });
    expect(buildArgv(l, {})).toEqual(['tool']);
    expect(buildArgv(l, { message: null })).toEqual(['tool']);
  });
});

describe('buildArgv: meta-parameters and undeclared keys', () => {
  it('R10.1: meta-parameters never reach argv', () => {
    const l = leaf({ options: [str('name')], positionals: [str('target')] });
    const argv = buildArgv(l, {
      working_directory: '/somewhere',
      timeout_seconds: 30,
      execution_mode: 'synchronous',
      name: 'n',
      target: 't',
    });
    expect(argv).toEqual(['tool', '--name', 'n', 't']);
    const joined = argv.join('\0');
    for (const needle of [
      'working_directory',
      '/somewhere',
      'timeout_seconds',
      '30',
      'execution_mode',
      'synchronous',
    ]) {
      expect(joined).not.toContain(needle);
    }
  });

  it('R10.2: timeout_seconds and execution_mode alone produce only the command', () => {
    expect(
      buildArgv(leaf({ subcommandPath: ['x'] }), { timeout_seconds: 1, execution_mode: 'async' }),
    ).toEqual(['tool', 'x']);
  });

  it('SPEC §2 argv: undeclared keys are never passed', () => {
    const l = leaf({ options: [bool('force')] });
    expect(buildArgv(l, { force: true, '--exec': 'evil', extra: ['a'], '': 'x' })).toEqual([
      'tool',
      '--force',
    ]);
  });
});

describe('flagOf', () => {
  it('SPEC §2 argv: --name, verbatim "-"-names, and -alias', () => {
    expect(flagOf(str('name'))).toBe('--name');
    expect(flagOf(str('-n'))).toBe('-n');
    expect(flagOf(str('--name'))).toBe('--name');
    expect(flagOf(str('name', { alias: 'n' }))).toBe('-n');
    expect(flagOf(str('--long', { alias: 'L' }))).toBe('-L');
  });
});

// These positionals declare accepts_options: what is tested here is that a value stays one
// element, byte-identical; when a leading "-" is refused is option-like.test.ts's subject.
const takesAll = { accepts_options: true } as const;

describe('buildArgv: hostile values stay exactly one argv element', () => {
  const l = leaf({
    options: [str('msg'), arr('tag')],
    positionals: [str('target', takesAll), arr('rest', 'string', takesAll)],
  });

  for (const [label, value] of HOSTILE) {
    it(`SPEC §2 argv: ${label} (${JSON.stringify(value)}) is one element as option value, positional and array item`, () => {
      const argv = buildArgv(l, { msg: value, tag: [value, value], target: value, rest: [value] });
      expect(argv).toEqual(['tool', '--msg', value, '--tag', value, '--tag', value, value, value]);
      expect(argv).toHaveLength(9);
      for (const element of [argv[2], argv[4], argv[6], argv[7], argv[8]]) {
        expect(element).toBe(value);
        expect(Buffer.from(element ?? 'missing', 'utf8').equals(Buffer.from(value, 'utf8'))).toBe(
          true,
        );
      }
    });
  }

  it('SPEC §2 argv: a 1 MiB value is one element, byte-identical', () => {
    const argv = buildArgv(l, { msg: ONE_MIB, target: ONE_MIB, rest: [ONE_MIB] });
    expect(argv).toHaveLength(5);
    expect(argv[2]).toBe(ONE_MIB);
    expect(argv[3]).toBe(ONE_MIB);
    expect(argv[4]).toBe(ONE_MIB);
    expect(argv[2]?.length).toBe(1024 * 1024);
  });

  it('SPEC §2 argv: a value containing a NUL byte stays one element in argv', () => {
    // exec refuses NUL bytes; buildArgv itself must still not split or alter the value.
    const argv = buildArgv(l, { msg: 'a\0b' });
    expect(argv).toEqual(['tool', '--msg', 'a\0b']);
  });
});

describe('buildArgv: hostile values, executed for real without a shell', () => {
  let dir = '';
  let script = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ahma-argv-exec-'));
    script = join(dir, 'echo-argv.mjs');
    await writeFile(script, 'process.stdout.write(JSON.stringify(process.argv.slice(2)));\n');
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function run(argv: readonly string[]): unknown {
    const [file, ...rest] = argv;
    if (file === undefined) throw new Error('empty argv');
    const out = execFileSync(file, rest, {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return JSON.parse(out);
  }

  it('SPEC §2 argv: every hostile value arrives at the process exactly as one argument', () => {
    const values = HOSTILE.map(([, value]) => value);
    const l = leaf({
      command: [process.execPath, script],
      subcommandPath: ['sub'],
      options: [str('msg'), arr('tag')],
      positionals: [arr('rest', 'string', takesAll)],
    });
    const argv = buildArgv(l, { msg: values[0], tag: values, rest: values });
    const received = run(argv);
    expect(received).toEqual(argv.slice(2));
    expect(received).toEqual([
      'sub',
      '--msg',
      values[0],
      ...values.flatMap((v) => ['--tag', v]),
      ...values,
    ]);
  });

  it('SPEC §2 argv: each hostile value alone, as an option value and a positional, round-trips', () => {
    const l = leaf({
      command: [process.execPath, script],
      options: [str('msg')],
      positionals: [str('target', takesAll)],
    });
    for (const [, value] of HOSTILE) {
      expect(run(buildArgv(l, { msg: value, target: value }))).toEqual(['--msg', value, value]);
    }
  });

  it('SPEC §2 argv: a large value (the largest single argument Linux accepts) round-trips byte-identical', () => {
    // The kernel caps one argv string at MAX_ARG_STRLEN (128 KiB incl. the NUL), so 1 MiB cannot
    // be exec'd as a single argument at all; the largest accepted one proves the same property.
    const big = 'é'.repeat(32 * 1024) + 'x'.repeat(128 * 1024 - 1 - 64 * 1024);
    expect(Buffer.byteLength(big, 'utf8')).toBe(128 * 1024 - 1);
    const l = leaf({ command: [process.execPath, script], positionals: [str('big')] });
    const received = run(buildArgv(l, { big }));
    expect(received).toEqual([big]);
  });

  it('SPEC §2 argv: a glob and a leading dash are not expanded or interpreted', () => {
    // dir contains echo-argv.mjs: a shell would expand "*" to it.
    const l = leaf({
      command: [process.execPath, script],
      positionals: [arr('rest', 'string', takesAll)],
    });
    expect(run(buildArgv(l, { rest: ['*', '*.mjs', '--upload-pack=evil', '~'] }))).toEqual([
      '*',
      '*.mjs',
      '--upload-pack=evil',
      '~',
    ]);
  });
});
