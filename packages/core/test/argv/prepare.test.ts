import { execFileSync } from 'node:child_process';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { prepareInvocation } from '../../src/argv/prepare.js';
import type { ToolLeaf } from '../../src/definition/flatten.js';
import type { ArgumentDefinition } from '../../src/definition/schema.js';
import { AhmaError, type AhmaErrorCode } from '../../src/errors.js';

// root/scope (the sandbox scope, with sub/ and a link to outside), root/outside, root/tmp (tempRoot).
let root = '';
let scope = '';
let outside = '';
let tempRoot = '';
let script = '';

function makeLeaf(overrides: Partial<ToolLeaf> = {}): ToolLeaf {
  const leaf: ToolLeaf = {
    name: 'tool_run',
    definitionName: 'tool',
    pointer: '/subcommand/0',
    command: ['tool', '--fixed'],
    subcommandPath: ['run'],
    declaredPath: ['run'],
    baseDescription: 'Runs the tool',
    enabled: true,
    synchronous: false,
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
  };
  return { ...leaf, ...overrides };
}

const str = (name: string, extra: Partial<ArgumentDefinition> = {}): ArgumentDefinition => ({
  name,
  type: 'string',
  ...extra,
});
const pathArg = (name: string, extra: Partial<ArgumentDefinition> = {}): ArgumentDefinition => ({
  name,
  type: 'string',
  format: 'path',
  ...extra,
});

async function rejection(promise: Promise<unknown>, code: AhmaErrorCode, ...fragments: string[]) {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AhmaError);
  expect((error as AhmaError).code).toBe(code);
  for (const fragment of fragments) expect((error as AhmaError).message).toContain(fragment);
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ahma-prepare-')));
  scope = join(root, 'scope');
  outside = join(root, 'outside');
  await mkdir(join(scope, 'sub', 'deeper'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(scope, 'sub', 'file.txt'), 'x');
  await symlink('../outside', join(scope, 'link-out'));
  await symlink('scope', join(root, 'scope-alias'));
  script = join(root, 'echo.mjs');
  await writeFile(
    script,
    [
      'import { readFileSync } from "node:fs";',
      'const argv = process.argv.slice(2);',
      'const i = argv.indexOf("-F");',
      'const file = i >= 0 ? readFileSync(argv[i + 1], "utf8") : null;',
      'process.stdout.write(JSON.stringify({ argv, cwd: process.cwd(), file }));',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  tempRoot = join(root, 'tmp');
  await mkdir(tempRoot);
});

afterEach(async () => {
  await rm(tempRoot, { recursive: true, force: true });
});

describe('prepareInvocation: argv, cwd and timeout', () => {
  it('SPEC §2 argv: builds the argv from a ToolLeaf and leaves values untouched', async () => {
    const leaf = makeLeaf({
      options: [
        { name: 'all', type: 'boolean', alias: 'a' },
        str('format'),
        { name: 'jobs', type: 'integer' },
      ],
      positionals: [str('query')],
    });
    const prepared = await prepareInvocation(
      leaf,
      { query: '$(id); rm -rf ~', all: true, format: 'a b', jobs: 4 },
      { scope, tempRoot },
    );
    expect(prepared.argv).toEqual([
      'tool',
      '--fixed',
      'run',
      '-a',
      '--format',
      'a b',
      '--jobs',
      '4',
      '$(id); rm -rf ~',
    ]);
    await prepared.cleanup();
  });

  it('R10.1: meta-parameters are consumed, never passed to the command', async () => {
    const leaf = makeLeaf({ options: [str('name')] });
    const prepared = await prepareInvocation(
      leaf,
      {
        name: 'n',
        working_directory: 'sub',
        timeout_seconds: 7,
        execution_mode: 'synchronous',
        stray: 'x',
      },
      { scope, tempRoot },
    );
    expect(prepared.argv).toEqual(['tool', '--fixed', 'run', '--name', 'n']);
    expect(prepared.cwd).toBe(join(scope, 'sub'));
    expect(prepared.timeoutSeconds).toBe(7);
  });

  it('R10.3: cwd defaults to the real path of the scope, even when the scope is given through a symlink', async () => {
    const alias = join(root, 'scope-alias');
    expect((await prepareInvocation(makeLeaf(), {}, { scope, tempRoot })).cwd).toBe(scope);
    expect((await prepareInvocation(makeLeaf(), {}, { scope: alias, tempRoot })).cwd).toBe(scope);
    expect(
      (
        await prepareInvocation(
          makeLeaf(),
          { working_directory: 'sub' },
          { scope: alias, tempRoot },
        )
      ).cwd,
    ).toBe(join(scope, 'sub'));
  });

  it('R10.3: working_directory relative to the scope and absolute inside it', async () => {
    expect(
      (await prepareInvocation(makeLeaf(), { working_directory: 'sub/deeper' }, { scope })).cwd,
    ).toBe(join(scope, 'sub', 'deeper'));
    expect(
      (await prepareInvocation(makeLeaf(), { working_directory: join(scope, 'sub') }, { scope }))
        .cwd,
    ).toBe(join(scope, 'sub'));
  });

  it('R7.1: working_directory cannot widen the scope', async () => {
    await rejection(
      prepareInvocation(makeLeaf(), { working_directory: '..' }, { scope, tempRoot }),
      'PATH_OUTSIDE_SCOPE',
    );
    await rejection(
      prepareInvocation(makeLeaf(), { working_directory: outside }, { scope, tempRoot }),
      'PATH_OUTSIDE_SCOPE',
    );
    await rejection(
      prepareInvocation(makeLeaf(), { working_directory: 'link-out' }, { scope, tempRoot }),
      'PATH_OUTSIDE_SCOPE',
    );
  });

  it('R10.3: a missing working_directory or a file is WORKING_DIRECTORY_INVALID, and nothing is written', async () => {
    const leaf = makeLeaf({ options: [str('message', { file_arg: true, file_flag: '-F' })] });
    await rejection(
      prepareInvocation(leaf, { working_directory: 'nope', message: 'm' }, { scope, tempRoot }),
      'WORKING_DIRECTORY_INVALID',
    );
    await rejection(
      prepareInvocation(
        leaf,
        { working_directory: 'sub/file.txt', message: 'm' },
        { scope, tempRoot },
      ),
      'WORKING_DIRECTORY_INVALID',
    );
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('R10.2: timeout_seconds precedence: per-call meta-parameter over the leaf', async () => {
    const leaf = makeLeaf({ timeoutSeconds: 30 });
    expect((await prepareInvocation(leaf, { timeout_seconds: 5 }, { scope })).timeoutSeconds).toBe(
      5,
    );
    expect(
      (await prepareInvocation(leaf, { timeout_seconds: 120 }, { scope })).timeoutSeconds,
    ).toBe(120);
    expect((await prepareInvocation(leaf, {}, { scope })).timeoutSeconds).toBe(30);
    expect(
      (await prepareInvocation(leaf, { timeout_seconds: null }, { scope })).timeoutSeconds,
    ).toBe(30);
  });

  it('R10.2: without a per-call or leaf timeout, timeoutSeconds is undefined (the server default applies)', async () => {
    expect((await prepareInvocation(makeLeaf(), {}, { scope })).timeoutSeconds).toBeUndefined();
    expect(
      (await prepareInvocation(makeLeaf(), { timeout_seconds: 9 }, { scope })).timeoutSeconds,
    ).toBe(9);
  });
});

describe('prepareInvocation: path arguments', () => {
  it('SPEC §2 format path: path arguments are resolved against working_directory', async () => {
    const leaf = makeLeaf({ options: [pathArg('config')], positionals: [pathArg('target')] });
    const prepared = await prepareInvocation(
      leaf,
      { working_directory: 'sub', config: 'deeper/conf.toml', target: '../top.txt' },
      { scope, tempRoot },
    );
    expect(prepared.argv).toEqual([
      'tool',
      '--fixed',
      'run',
      '--config',
      join(scope, 'sub', 'deeper', 'conf.toml'),
      join(scope, 'top.txt'),
    ]);
  });

  it('SPEC §2 format path: without working_directory paths resolve against the real scope', async () => {
    const leaf = makeLeaf({ positionals: [pathArg('target')] });
    const alias = join(root, 'scope-alias');
    const prepared = await prepareInvocation(
      leaf,
      { target: 'sub/file.txt' },
      { scope: alias, tempRoot },
    );
    expect(prepared.argv.at(-1)).toBe(join(scope, 'sub', 'file.txt'));
  });

  it('SPEC §2 format path: an array of paths resolves every item, one argv element each', async () => {
    const leaf = makeLeaf({
      options: [{ name: 'include', type: 'array', items: { type: 'string', format: 'path' } }],
      positionals: [{ name: 'files', type: 'array', items: { type: 'string', format: 'path' } }],
    });
    const prepared = await prepareInvocation(
      leaf,
      { working_directory: 'sub', include: ['a', 'deeper/b'], files: ['x y.txt', '../z'] },
      { scope, tempRoot },
    );
    expect(prepared.argv).toEqual([
      'tool',
      '--fixed',
      'run',
      '--include',
      join(scope, 'sub', 'a'),
      '--include',
      join(scope, 'sub', 'deeper', 'b'),
      join(scope, 'sub', 'x y.txt'),
      join(scope, 'z'),
    ]);
  });

  it('R7.1: one array item outside the scope refuses the whole call, naming the argument', async () => {
    const leaf = makeLeaf({
      positionals: [{ name: 'files', type: 'array', items: { type: 'string', format: 'path' } }],
    });
    await rejection(
      prepareInvocation(leaf, { files: ['ok.txt', '../../etc/passwd'] }, { scope, tempRoot }),
      'PATH_OUTSIDE_SCOPE',
      'argument "files"',
    );
  });

  it('R7.1: a path through a symlink pointing outside is refused', async () => {
    const leaf = makeLeaf({ positionals: [pathArg('target')] });
    await rejection(
      prepareInvocation(leaf, { target: 'link-out/new.txt' }, { scope, tempRoot }),
      'PATH_OUTSIDE_SCOPE',
      'argument "target"',
    );
  });

  it('SPEC §2 argv: null unsets an argument, even one with a default (a default path is not even checked)', async () => {
    const leaf = makeLeaf({
      options: [
        str('profile', { default: 'release' }),
        pathArg('out', { default: '/etc' }),
        str('message', { file_arg: true, file_flag: '-F', default: 'wip' }),
      ],
      positionals: [str('target', { default: 'all' })],
    });
    const prepared = await prepareInvocation(
      leaf,
      { profile: null, out: null, message: null, target: null },
      { scope, tempRoot },
    );
    expect(prepared.argv).toEqual(['tool', '--fixed', 'run']);
    await prepared.cleanup();
  });

  it('SPEC §2 format path: a path default is resolved like a given value', async () => {
    const leaf = makeLeaf({ options: [pathArg('out', { default: 'build/out' })] });
    const prepared = await prepareInvocation(
      leaf,
      { working_directory: 'sub' },
      { scope, tempRoot },
    );
    expect(prepared.argv).toEqual([
      'tool',
      '--fixed',
      'run',
      '--out',
      join(scope, 'sub', 'build', 'out'),
    ]);
    await rejection(
      prepareInvocation(
        makeLeaf({ options: [pathArg('out', { default: '/etc' })] }),
        {},
        { scope, tempRoot },
      ),
      'PATH_OUTSIDE_SCOPE',
      'argument "out"',
    );
  });

  it('SPEC §2 format path: absent and null path values are left out, not resolved', async () => {
    const leaf = makeLeaf({ options: [pathArg('a'), pathArg('b')] });
    const prepared = await prepareInvocation(leaf, { b: null }, { scope, tempRoot });
    expect(prepared.argv).toEqual(['tool', '--fixed', 'run']);
  });

  it('SPEC §2 format path: an empty path is PATH_INVALID', async () => {
    const leaf = makeLeaf({ positionals: [pathArg('target')] });
    await rejection(
      prepareInvocation(leaf, { target: '' }, { scope, tempRoot }),
      'PATH_INVALID',
      'argument "target"',
    );
  });

  it('SPEC §2 argv: undeclared parameters named like Object.prototype members are not invented', async () => {
    const leaf = makeLeaf({
      options: [
        str('toString', { file_arg: true }),
        pathArg('constructor'),
        str('valueOf', { file_arg: true, format: 'path' }),
      ],
    });
    const prepared = await prepareInvocation(leaf, {}, { scope, tempRoot });
    expect(prepared.argv).toEqual(['tool', '--fixed', 'run']);
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it("SPEC §2 argv: the caller's arguments object is not modified", async () => {
    const leaf = makeLeaf({ options: [str('m', { file_arg: true })], positionals: [pathArg('p')] });
    const args = { m: 'text', p: 'rel' };
    const prepared = await prepareInvocation(leaf, args, { scope, tempRoot });
    expect(args).toEqual({ m: 'text', p: 'rel' });
    await prepared.cleanup();
  });
});

describe('prepareInvocation: file_arg', () => {
  it('SPEC §2 file_arg: the value goes to a 0600 temp file whose path follows file_flag in argv', async () => {
    const value = 'subject line\n\nbody; rm -rf ~ $(id) `id` 🚀\n';
    const leaf = makeLeaf({
      options: [
        str('message', { file_arg: true, file_flag: '-F' }),
        { name: 'amend', type: 'boolean' },
      ],
    });
    const prepared = await prepareInvocation(
      leaf,
      { message: value, amend: true },
      { scope, tempRoot },
    );
    const [, , , flag, file, ...rest] = prepared.argv;
    expect(flag).toBe('-F');
    expect(rest).toEqual(['--amend']);
    expect(file).toBeDefined();
    if (file === undefined) return;
    expect(prepared.argv).not.toContain(value);
    expect(dirname(dirname(file))).toBe(tempRoot);
    expect(await readFile(file, 'utf8')).toBe(value);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await prepared.cleanup();
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(tempRoot)).toEqual([]);
    await prepared.cleanup();
  });

  it('SPEC §2 file_arg: without file_flag the path takes the option flag; positionals pass the path alone', async () => {
    const leaf = makeLeaf({
      options: [str('body', { file_arg: true })],
      positionals: [str('note', { file_arg: true })],
    });
    const prepared = await prepareInvocation(leaf, { body: 'B', note: 'N' }, { scope, tempRoot });
    const [, , , flag, bodyFile, noteFile] = prepared.argv;
    expect(prepared.argv).toHaveLength(6);
    expect(flag).toBe('--body');
    expect(await readFile(bodyFile ?? '', 'utf8')).toBe('B');
    expect(await readFile(noteFile ?? '', 'utf8')).toBe('N');
    expect(bodyFile).not.toBe(noteFile);
    await prepared.cleanup();
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('SPEC §2 file_arg: a default value is written like a given one; absent without default writes nothing', async () => {
    const withDefault = makeLeaf({
      options: [str('message', { file_arg: true, file_flag: '-F', default: 'wip' })],
    });
    const prepared = await prepareInvocation(withDefault, {}, { scope, tempRoot });
    expect(prepared.argv[3]).toBe('-F');
    expect(await readFile(prepared.argv[4] ?? '', 'utf8')).toBe('wip');
    await prepared.cleanup();

    const noDefault = makeLeaf({ options: [str('message', { file_arg: true, file_flag: '-F' })] });
    const none = await prepareInvocation(noDefault, { message: null }, { scope, tempRoot });
    expect(none.argv).toEqual(['tool', '--fixed', 'run']);
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('SPEC §2 file_arg: empty and multi-megabyte values are written byte-identical', async () => {
    const big = 'line\n'.repeat(400_000);
    const leaf = makeLeaf({
      options: [str('a', { file_arg: true }), str('b', { file_arg: true })],
    });
    const prepared = await prepareInvocation(leaf, { a: '', b: big }, { scope, tempRoot });
    expect(await readFile(prepared.argv[4] ?? '', 'utf8')).toBe('');
    expect(await readFile(prepared.argv[6] ?? '', 'utf8')).toBe(big);
    await prepared.cleanup();
  });

  it('SPEC §2 file_arg: when a later path argument is refused, already written temp files are removed', async () => {
    const leaf = makeLeaf({
      options: [
        str('message', { file_arg: true, file_flag: '-F' }),
        str('notes', { file_arg: true }),
      ],
      positionals: [pathArg('target')],
    });
    await rejection(
      prepareInvocation(
        leaf,
        { message: 'm', notes: 'n', target: '../outside/x' },
        { scope, tempRoot },
      ),
      'PATH_OUTSIDE_SCOPE',
      'argument "target"',
    );
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('SPEC §2 file_arg: an unusable tempRoot gives FILE_ARG_FAILED, not a raw fs error', async () => {
    const leaf = makeLeaf({ options: [str('message', { file_arg: true, file_flag: '-F' })] });
    await rejection(
      prepareInvocation(leaf, { message: 'm' }, { scope, tempRoot: join(tempRoot, 'missing') }),
      'FILE_ARG_FAILED',
      'argument "message"',
    );
  });
});

describe('prepareInvocation: executed for real', () => {
  it('SPEC §2 argv: the prepared invocation runs without a shell, in cwd, with the file_arg readable', async () => {
    const message = 'it\'s "quoted"; $(id)\n`id` *';
    const leaf = makeLeaf({
      command: [process.execPath, script],
      subcommandPath: [],
      options: [str('message', { file_arg: true, file_flag: '-F' }), pathArg('out')],
      // accepts_options: this test is about the values arriving intact, "-" ones included.
      positionals: [
        { name: 'rest', type: 'array', items: { type: 'string' }, accepts_options: true },
      ],
    });
    const prepared = await prepareInvocation(
      leaf,
      { message, out: 'o.txt', rest: ['*', '--upload-pack=evil', ''], working_directory: 'sub' },
      { scope, tempRoot },
    );
    try {
      const [file, ...args] = prepared.argv;
      const output = execFileSync(file ?? '', args, { cwd: prepared.cwd, encoding: 'utf8' });
      const result = JSON.parse(output) as { argv: string[]; cwd: string; file: string | null };
      expect(result.argv).toEqual(prepared.argv.slice(2));
      expect(result.argv.slice(2)).toEqual([
        '--out',
        join(scope, 'sub', 'o.txt'),
        '*',
        '--upload-pack=evil',
        '',
      ]);
      expect(result.cwd).toBe(join(scope, 'sub'));
      expect(result.file).toBe(message);
    } finally {
      await prepared.cleanup();
    }
    expect(await readdir(tempRoot)).toEqual([]);
  });
});
