// The python catalog tool run for real in the sandbox: a script with arguments, a module with -m and
// code with -c, each as python3 takes them, with arguments arriving verbatim in sys.argv.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  catalog,
  catalogRunner,
  expectSuccess,
  installed,
  type Catalog,
  type CatalogRunner,
} from './helpers.js';

/** Arguments a shell would split, expand or run. */
const TRICKY = ['two words', '--flag', '$(id)', '`uname`', '; rm -rf ~', "it's", '*'];

const PRINT_ARGV = 'import json, sys\nprint(json.dumps(sys.argv))\n';

let loaded: Catalog;
let runner: CatalogRunner;

function lastJson(output: string): unknown {
  return JSON.parse(output.trim().split('\n').at(-1) ?? 'null');
}

describe.skipIf(!installed('python3'))('python, run for real in the sandbox', () => {
  beforeAll(async () => {
    loaded = await catalog(['python']);
    // This machine's PYTHONUNBUFFERED would hide what the unbuffered option does.
    runner = await catalogRunner(loaded, { ...process.env, PYTHONUNBUFFERED: undefined });
    await mkdir(join(runner.scope, 'app'));
    await writeFile(join(runner.scope, 'app', 'show_argv.py'), PRINT_ARGV);
    await writeFile(join(runner.scope, 'app', 'show_module.py'), PRINT_ARGV);
  });
  afterAll(async () => {
    await runner.dispose();
  });

  it('SPEC §2: script: python3 SCRIPT ARGS… — sys.argv is the script path and the args, verbatim', async () => {
    const result = await runner.call('python', { script: 'app/show_argv.py', args: TRICKY });
    expect(result.argv).toEqual([
      'python3',
      '-u',
      join(runner.scope, 'app', 'show_argv.py'),
      ...TRICKY,
    ]);
    expect(lastJson(expectSuccess(result))).toEqual([
      join(runner.scope, 'app', 'show_argv.py'),
      ...TRICKY,
    ]);
  });

  it('SPEC §2: module: python3 -m MODULE ARGS… — found on the working directory, args after it', async () => {
    const output = expectSuccess(
      await runner.call('python', {
        module: 'show_module',
        args: TRICKY,
        working_directory: 'app',
      }),
    );
    expect(lastJson(output)).toEqual([join(runner.scope, 'app', 'show_module.py'), ...TRICKY]);
  });

  it('R1.1: module: a standard library module runs with its own arguments (json.tool)', async () => {
    await writeFile(join(runner.scope, 'data.json'), '{"b": 1, "a": [1, 2]}');
    const output = expectSuccess(
      await runner.call('python', { module: 'json.tool', args: ['--sort-keys', 'data.json'] }),
    );
    expect(JSON.parse(output)).toEqual({ a: [1, 2], b: 1 });
    expect(output.indexOf('"a"')).toBeLessThan(output.indexOf('"b"'));
  });

  it('SPEC §2: code: python3 -c CODE ARGS… — sys.argv[0] is "-c", then the args', async () => {
    const output = expectSuccess(
      await runner.call('python', { code: PRINT_ARGV, args: ['-x', ...TRICKY] }),
    );
    expect(lastJson(output)).toEqual(['-c', '-x', ...TRICKY]);
  });

  it('R15.1: unbuffered (the default) keeps prints and errors in the order they happened', async () => {
    const code = 'import sys\nprint("out 1")\nprint("err 2", file=sys.stderr)\nprint("out 3")\n';
    expect(expectSuccess(await runner.call('python', { code }))).toBe('out 1\nerr 2\nout 3\n');
    // Buffered, stdout waits for the exit while stderr goes first: the reason for the default.
    const buffered = await runner.call('python', { code, unbuffered: false });
    expect(expectSuccess(buffered)).toBe('err 2\nout 1\nout 3\n');
  });

  it('SPEC §3: an exception is a failed result carrying the traceback', async () => {
    const result = await runner.call('python', { code: 'raise SystemExit("boom")' });
    expect(result.status).toBe('failed');
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain('boom');
  });

  it('R7.1: a script outside the scope is refused before python runs', async () => {
    await expect(runner.call('python', { script: '/etc/hostname' })).rejects.toMatchObject({
      code: 'PATH_OUTSIDE_SCOPE',
    });
  });
});
