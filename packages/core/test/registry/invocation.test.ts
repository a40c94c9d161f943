// A registered command as a tool: its input schema, and a call's argv, working directory and
// timeout. The argv is also run for real (a script printing one argument per line) to show every
// value reaches the program as one argument, uninterpreted.
import { execFile } from 'node:child_process';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand, type RegisteredCommand } from '../../src/registry/command.js';
import { prepareRegisteredCall, registeredInputSchema } from '../../src/registry/invocation.js';
import { refusal, removeDir, tempDir, writeExecutable } from './helpers.js';

const run = promisify(execFile);

// Layout:
//   root/scope/scripts/args.sh    prints each argument on its own line, then its cwd
//   root/scope/sub/               a working directory
//   root/scope/sub/data.txt
//   root/scope/out-link -> ../outside
//   root/outside/
let root = '';
let scope = '';
let outside = '';

beforeAll(async () => {
  root = await tempDir('invocation');
  scope = join(root, 'scope');
  outside = join(root, 'outside');
  await writeExecutable(join(scope, 'scripts', 'args.sh'), 'printf "[%s]\\n" "$@"; pwd');
  await mkdir(join(scope, 'sub'));
  await writeFile(join(scope, 'sub', 'data.txt'), 'data\n');
  await mkdir(outside);
  await symlink('../outside', join(scope, 'out-link'));
});

afterAll(async () => {
  await removeDir(root);
});

const lookup = () => ({ scope, path: process.env['PATH'] });
const script = () => join(scope, 'scripts', 'args.sh');

function command(raw: Record<string, unknown> = {}): RegisteredCommand {
  return parseCommand({ name: 'cmd', exec: './scripts/args.sh', description: 'test', ...raw });
}

/** The argv after the executable. */
async function argvOf(
  cmd: RegisteredCommand,
  args: Record<string, unknown>,
): Promise<readonly string[]> {
  const invocation = await prepareRegisteredCall(cmd, args, lookup());
  expect(invocation.argv[0]).toBe(script());
  return invocation.argv.slice(1);
}

describe('registeredInputSchema', () => {
  it('FR4.1: the arguments in declared order, then the meta-parameters; required in declared order; nothing else allowed', () => {
    const schema = registeredInputSchema(
      command({
        args: {
          target: { type: 'string', description: 'Where', required: true, format: 'path' },
          count: { type: 'integer' },
          verbose: { type: 'boolean', flag: '-v', description: 'Talk more' },
          source: { type: 'string', required: true },
          ratio: { type: 'number' },
        },
      }),
    );
    expect(Object.keys(schema['properties'] as object)).toEqual([
      'target',
      'count',
      'verbose',
      'source',
      'ratio',
      'working_directory',
      'timeout_seconds',
      'execution_mode',
      'max_output_tokens',
      'pty',
      'stdin',
      'concurrency',
    ]);
    expect(schema).toMatchObject({
      type: 'object',
      required: ['target', 'source'],
      additionalProperties: false,
    });
    const properties = schema['properties'] as Record<string, unknown>;
    expect(properties['target']).toEqual({ type: 'string', description: 'Where', format: 'path' });
    expect(properties['count']).toEqual({ type: 'integer' });
    // The flag is how it is passed, not part of the schema.
    expect(properties['verbose']).toEqual({ type: 'boolean', description: 'Talk more' });
    expect(properties['ratio']).toEqual({ type: 'number' });
    expect(properties['timeout_seconds']).toMatchObject({ type: 'number', maximum: 86_400 });
    expect(properties['execution_mode']).toMatchObject({
      type: 'string',
      enum: ['Synchronous', 'AsyncResultPush'],
    });
    expect(properties['working_directory']).toMatchObject({ type: 'string' });
  });

  it('FR4.1: a command without arguments takes only the meta-parameters, and has no "required"', () => {
    const schema = registeredInputSchema(command());
    expect(schema).toEqual({
      type: 'object',
      properties: expect.any(Object) as unknown,
      additionalProperties: false,
    });
    expect(Object.keys(schema['properties'] as object)).toEqual([
      'working_directory',
      'timeout_seconds',
      'execution_mode',
      'max_output_tokens',
      'pty',
      'stdin',
      'concurrency',
    ]);
    expect('required' in schema).toBe(false);
  });

  it('FR4.1: arguments with nothing required have no "required" list', () => {
    const schema = registeredInputSchema(command({ args: { a: { type: 'string' } } }));
    expect('required' in schema).toBe(false);
  });
});

describe('prepareRegisteredCall: argv', () => {
  it("FR4.1: argv is the resolved executable, then the arguments in declared order, not the call's", async () => {
    const cmd = command({
      args: {
        first: { type: 'string' },
        second: { type: 'string', flag: '--second' },
        third: { type: 'integer' },
      },
    });
    expect(await argvOf(cmd, { third: 3, second: 'two', first: 'one' })).toEqual([
      'one',
      '--second',
      'two',
      '3',
    ]);
  });

  it('FR4.1: arguments not given (or null) are left out', async () => {
    const cmd = command({
      args: { a: { type: 'string' }, b: { type: 'string', flag: '-b' }, c: { type: 'string' } },
    });
    expect(await argvOf(cmd, { c: 'C' })).toEqual(['C']);
    expect(await argvOf(cmd, { a: null, b: null, c: 'C' })).toEqual(['C']);
    expect(await argvOf(cmd, {})).toEqual([]);
  });

  it('FR4.1: call arguments the command does not declare, and prototype words, add nothing', async () => {
    const cmd = command({
      args: { constructor: { type: 'string' }, toString: { type: 'string' } },
    });
    expect(await argvOf(cmd, { other: 'x' })).toEqual([]);
    expect(await argvOf(cmd, { toString: 'ts' })).toEqual(['ts']);
  });

  it('FR4.1: numbers and booleans are passed as text; a positional boolean is "true" or "false"', async () => {
    const cmd = command({
      args: { n: { type: 'number' }, i: { type: 'integer' }, b: { type: 'boolean' } },
    });
    expect(await argvOf(cmd, { n: 1.5, i: 42, b: true })).toEqual(['1.5', '42', 'true']);
    expect(await argvOf(cmd, { b: false })).toEqual(['false']);
  });

  it('FR4.1: a flagged boolean passes its flag alone when true and nothing when false', async () => {
    const cmd = command({
      args: { verbose: { type: 'boolean', flag: '-v' }, x: { type: 'string' } },
    });
    expect(await argvOf(cmd, { verbose: true, x: 'X' })).toEqual(['-v', 'X']);
    expect(await argvOf(cmd, { verbose: false, x: 'X' })).toEqual(['X']);
  });

  it('FR4.1: a flagged value follows its flag as its own element', async () => {
    const cmd = command({
      args: { out: { type: 'string', flag: '--out' }, n: { type: 'integer', flag: '-n' } },
    });
    expect(await argvOf(cmd, { out: 'a b', n: 3 })).toEqual(['--out', 'a b', '-n', '3']);
  });

  it('FR4.1: a positional value starting with "-" is refused (ARGV_INVALID), saying how to allow it', async () => {
    const cmd = command({ args: { revision: { type: 'string' } } });
    const error = await refusal(
      prepareRegisteredCall(cmd, { revision: '--output=/tmp/pwned' }, lookup()),
      'ARGV_INVALID',
    );
    expect(error.message).toBe(
      'argument "revision": "--output=/tmp/pwned" starts with "-", so the program would read it as an option; give the argument a "flag" to pass such values',
    );
    await refusal(prepareRegisteredCall(cmd, { revision: '-' }, lookup()), 'ARGV_INVALID');
  });

  it('FR4.1: a negative number as a positional would read as an option too, and is refused', async () => {
    const cmd = command({ args: { n: { type: 'integer' } } });
    await refusal(prepareRegisteredCall(cmd, { n: -5 }, lookup()), 'ARGV_INVALID', '"-5"');
  });

  it('FR4.1: after its flag a value starting with "-" is the flag\'s, and is passed', async () => {
    const cmd = command({ args: { pattern: { type: 'string', flag: '-e' } } });
    expect(await argvOf(cmd, { pattern: '--not-an-option' })).toEqual(['-e', '--not-an-option']);
  });
});

describe('prepareRegisteredCall: paths and working directory', () => {
  it('FR4.1: a format:path argument is resolved against the working directory, to an absolute path', async () => {
    const cmd = command({ args: { file: { type: 'string', format: 'path' } } });
    expect(await argvOf(cmd, { file: 'sub/data.txt' })).toEqual([join(scope, 'sub', 'data.txt')]);
    expect(await argvOf(cmd, { file: 'data.txt', working_directory: 'sub' })).toEqual([
      join(scope, 'sub', 'data.txt'),
    ]);
    // It need not exist yet (an output file).
    expect(await argvOf(cmd, { file: 'new/out.txt' })).toEqual([join(scope, 'new', 'out.txt')]);
  });

  it('FR4.1: a format:path value starting with "-" becomes an absolute path, so it is passed', async () => {
    const cmd = command({ args: { file: { type: 'string', format: 'path' } } });
    expect(await argvOf(cmd, { file: '-rf' })).toEqual([join(scope, '-rf')]);
  });

  it('FR4.1: a format:path argument outside the scope is refused (PATH_OUTSIDE_SCOPE), through "..", absolute or a symlink', async () => {
    const cmd = command({ args: { file: { type: 'string', format: 'path', flag: '--file' } } });
    for (const file of ['../outside/x', join(outside, 'x'), 'out-link/x', '/etc/passwd']) {
      await refusal(
        prepareRegisteredCall(cmd, { file }, lookup()),
        'PATH_OUTSIDE_SCOPE',
        'argument "file"',
      );
    }
    await refusal(
      prepareRegisteredCall(cmd, { file: '../../outside/x', working_directory: 'sub' }, lookup()),
      'PATH_OUTSIDE_SCOPE',
    );
  });

  it('FR4.1: a string without format:path is passed as it is, never resolved', async () => {
    const cmd = command({ args: { text: { type: 'string' } } });
    expect(await argvOf(cmd, { text: '../outside/x' })).toEqual(['../outside/x']);
  });

  it('FR4.1: working_directory defaults to the scope, else is the given directory inside it', async () => {
    expect((await prepareRegisteredCall(command(), {}, lookup())).cwd).toBe(scope);
    expect((await prepareRegisteredCall(command(), { working_directory: '' }, lookup())).cwd).toBe(
      scope,
    );
    expect(
      (await prepareRegisteredCall(command(), { working_directory: 'sub' }, lookup())).cwd,
    ).toBe(join(scope, 'sub'));
    expect(
      (await prepareRegisteredCall(command(), { working_directory: join(scope, 'sub') }, lookup()))
        .cwd,
    ).toBe(join(scope, 'sub'));
  });

  it('FR4.1: a working_directory outside the scope or missing is refused', async () => {
    await refusal(
      prepareRegisteredCall(command(), { working_directory: outside }, lookup()),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(
      prepareRegisteredCall(command(), { working_directory: 'out-link' }, lookup()),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(
      prepareRegisteredCall(command(), { working_directory: 'nope' }, lookup()),
      'WORKING_DIRECTORY_INVALID',
    );
  });

  it('FR6.2: a relative exec is relative to the scope whatever the working directory', async () => {
    const invocation = await prepareRegisteredCall(
      command(),
      { working_directory: 'sub' },
      lookup(),
    );
    expect(invocation.argv[0]).toBe(script());
  });
});

describe('prepareRegisteredCall: timeout', () => {
  it("FR4.1: the call's timeout_seconds wins over the command's timeout, which is in seconds", async () => {
    const cmd = command({ timeout: '1h30m' });
    expect((await prepareRegisteredCall(cmd, {}, lookup())).timeoutSeconds).toBe(5400);
    expect(
      (await prepareRegisteredCall(cmd, { timeout_seconds: 2.5 }, lookup())).timeoutSeconds,
    ).toBe(2.5);
    expect(
      (await prepareRegisteredCall(command({ timeout: '30s' }), {}, lookup())).timeoutSeconds,
    ).toBe(30);
  });

  it('FR4.1: without either, the timeout is the server default (undefined)', async () => {
    expect((await prepareRegisteredCall(command(), {}, lookup())).timeoutSeconds).toBeUndefined();
    expect(
      (await prepareRegisteredCall(command(), { timeout_seconds: 7 }, lookup())).timeoutSeconds,
    ).toBe(7);
  });
});

describe('prepareRegisteredCall: the executable at call time', () => {
  it('EC3: an executable removed after registration is a clear EXEC_NOT_FOUND at call time', async () => {
    const file = await writeExecutable(join(scope, 'scripts', 'gone.sh'));
    const cmd = command({ exec: './scripts/gone.sh' });
    await expect(prepareRegisteredCall(cmd, {}, lookup())).resolves.toMatchObject({
      argv: [file],
    });
    await rm(file);
    await refusal(
      prepareRegisteredCall(cmd, {}, lookup()),
      'EXEC_NOT_FOUND',
      `exec ./scripts/gone.sh: ${file} does not exist`,
    );
  });

  it('EC3: an executable that lost its x bit is EXEC_NOT_FOUND at call time', async () => {
    const file = await writeExecutable(join(scope, 'scripts', 'noexec.sh'));
    await chmod(file, 0o644);
    await refusal(
      prepareRegisteredCall(command({ exec: './scripts/noexec.sh' }), {}, lookup()),
      'EXEC_NOT_FOUND',
      'is not executable (chmod +x it)',
    );
  });

  it('EC3: a bare name no longer on PATH is EXEC_NOT_FOUND at call time', async () => {
    await refusal(
      prepareRegisteredCall(command({ exec: 'wc' }), {}, { scope, path: join(root, 'outside') }),
      'EXEC_NOT_FOUND',
      'exec wc: no executable of that name on PATH',
    );
  });
});

describe('prepareRegisteredCall: run for real', () => {
  it('FR4.1: each value reaches the program as one argument, with no shell interpreting it', async () => {
    const cmd = command({
      args: {
        text: { type: 'string' },
        flagged: { type: 'string', flag: '--opt' },
        file: { type: 'string', format: 'path' },
        on: { type: 'boolean', flag: '-x' },
      },
    });
    const invocation = await prepareRegisteredCall(
      cmd,
      {
        text: 'a b; echo $(id) `x` * "q"',
        flagged: '-$HOME',
        file: 'data.txt',
        on: true,
        working_directory: 'sub',
      },
      lookup(),
    );
    const [program = '', ...argv] = invocation.argv;
    const { stdout } = await run(program, argv, { cwd: invocation.cwd });
    expect(stdout).toBe(
      [
        '[a b; echo $(id) `x` * "q"]',
        '[--opt]',
        '[-$HOME]',
        `[${join(scope, 'sub', 'data.txt')}]`,
        '[-x]',
        join(scope, 'sub'),
        '',
      ].join('\n'),
    );
  });
});
