// SPEC §15 introspection: ahma-introspect on real programs, their help run in the real sandbox: the written file
// validates and carries what the help says; the help command is confined (no write outside its
// empty scope, no network) and bounded; the CLI's usage, refusals and --out.
import { createServer, type Server } from 'node:net';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validateToolFiles } from '@ahma/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { introspect } from '../../src/introspect.js';
import { runIntrospect } from '../../src/run-cli.js';

type Json = Record<string, unknown>;
const leaf = (definition: Json, ...path: string[]): Json | undefined => {
  let node: Json | undefined = definition;
  for (const name of path) {
    node = (node?.['subcommand'] as Json[] | undefined)?.find((each) => each['name'] === name);
  }
  return node;
};
const option = (node: Json | undefined, name: string): Json | undefined =>
  (node?.['options'] as Json[] | undefined)?.find((each) => each['name'] === name);

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join('/var/tmp', 'ahma-introspect-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('introspecting installed programs', () => {
  it('SPEC §15 introspection: grep: one tool whose options carry their types, aliases and path values', async () => {
    const { definition } = await introspect('grep', { depth: 0 });
    const grep = leaf(definition, 'default');
    expect(definition['name']).toBe('grep');
    expect(option(grep, 'ignore-case')).toMatchObject({ type: 'boolean', alias: 'i' });
    expect(option(grep, 'max-count')).toMatchObject({ type: 'integer', alias: 'm' });
    expect(option(grep, 'file')).toMatchObject({ type: 'string', format: 'path' });
    expect(option(grep, 'help')).toBeUndefined();
  });

  it('SPEC §15 introspection: git: its subcommands, each with its own options (commit -m, --message)', async () => {
    const { definition } = await introspect('git', { depth: 1 });
    const names = ((definition['subcommand'] as Json[]) ?? []).map((each) => each['name']);
    expect(names).toEqual(expect.arrayContaining(['commit', 'status', 'log', 'clone']));
    expect(option(leaf(definition, 'commit'), 'message')).toMatchObject({
      type: 'string',
      alias: 'm',
    });
  });
});

describe.concurrent('reading the whole help', () => {
  it('SPEC §15 introspection: a help that says it is not the whole and names "--help all" is read whole (curl)', async () => {
    const program = join(dir, 'abridged');
    await writeFile(
      program,
      [
        '#!/bin/sh',
        'echo "Usage: abridged [options...] <url>"',
        'echo " -v, --verbose       say more"',
        'if [ "$2" = all ]; then echo "     --retry <num>   retry this often"; exit 0; fi',
        'echo \'For all options use the manual or "--help all".\'',
      ].join('\n'),
    );
    await chmod(program, 0o755);
    const { definition } = await introspect(program, { depth: 0 });
    expect(option(leaf(definition, 'default'), 'retry')).toMatchObject({ type: 'integer' });
    expect(definition['availability_check']).toEqual({ command: program, args: ['--help', 'all'] });
  });
});

describe('the help runs confined', () => {
  let listener: Server | undefined;
  let port = 0;
  let reached = false;
  beforeAll(async () => {
    listener = createServer((socket) => {
      reached = true;
      socket.destroy();
    });
    await new Promise<void>((done) => listener?.listen(0, '127.0.0.1', done));
    const address = listener.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(() => {
    listener?.close();
  });

  it('SPEC §15 introspection, R7.2, R7.15: a program whose --help writes outside and dials out does neither, and is still read', async () => {
    const outside = join(dir, 'written-by-help');
    const program = join(dir, 'sneaky');
    await writeFile(
      program,
      [
        '#!/bin/bash',
        `echo pwned > ${outside} 2>/dev/null && echo WROTE || echo REFUSED-WRITE`,
        `(echo x > /dev/tcp/127.0.0.1/${String(port)}) 2>/dev/null && echo DIALED || echo REFUSED-NET`,
        'echo "Usage: sneaky [-v] FILE"',
        'echo "  -v, --verbose   say more"',
      ].join('\n'),
    );
    await chmod(program, 0o755);
    const { definition } = await introspect(program, { depth: 0 });
    expect(existsSync(outside)).toBe(false);
    expect(reached).toBe(false);
    expect(option(leaf(definition, 'default'), 'verbose')).toMatchObject({
      type: 'boolean',
      alias: 'v',
    });
  });
});

describe('the CLI', () => {
  const output = () => {
    const seen = { stdout: '', stderr: '' };
    return {
      seen,
      out: {
        stdout: (text: string) => void (seen.stdout += text),
        stderr: (text: string) => void (seen.stderr += text),
      },
    };
  };

  it('SPEC §15 introspection: usage errors exit 2; --help exits 0', async () => {
    const none = output();
    expect(await runIntrospect([], none.out)).toBe(2);
    expect(none.seen.stderr).toMatch(/name one program/);
    const depth = output();
    expect(await runIntrospect(['grep', '--depth', 'x'], depth.out)).toBe(2);
    const help = output();
    expect(await runIntrospect(['--help'], help.out)).toBe(0);
    expect(help.seen.stdout).toMatch(/^Usage: ahma-introspect PROGRAM/);
  });

  it('SPEC §15 introspection: a program that prints no help exits 1 naming it', async () => {
    const silent = join(dir, 'silent');
    await writeFile(silent, '#!/bin/sh\nexit 3\n');
    await chmod(silent, 0o755);
    const run = output();
    expect(await runIntrospect([silent, '--depth', '0'], run.out)).toBe(1);
    expect(run.seen.stderr).toContain(`${silent} printed no help`);
  });

  it('SPEC §15 introspection: --out writes a file ahma-validate accepts, with what was discovered beside it (not *.json)', async () => {
    const target = join(dir, 'sed.json');
    const first = output();
    expect(await runIntrospect(['sed', '--depth', '0', '--out', target], first.out)).toBe(0);
    expect(first.seen.stderr).toContain(`wrote ${target}`);
    const report = await validateToolFiles([dir]);
    expect(report.files.map((file) => file.file)).toEqual([target]);
    expect(report.files[0]?.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(JSON.parse(await readFile(`${target}.discovered`, 'utf8'))).toEqual(
      JSON.parse(await readFile(target, 'utf8')),
    );
  });

  it('SPEC §15 introspection: a file edited between two runs keeps the edits; new options are added and dropped ones reported', async () => {
    const program = join(dir, 'evolving');
    const helpOf = (lines: string[]) =>
      writeFile(
        program,
        [
          '#!/bin/sh',
          'cat <<EOF',
          'Usage: evolving [OPTIONS] FILE',
          '',
          'Options:',
          ...lines,
          'EOF',
          '',
        ].join('\n'),
      );
    await helpOf([
      '  -a, --alpha         the alpha option',
      '  -b, --beta          the beta option',
      '  -g, --gamma=NUM     the gamma option',
    ]);
    await chmod(program, 0o755);
    const target = join(dir, 'evolving.json');
    expect(await runIntrospect([program, '--out', target], output().out)).toBe(0);

    // The person words alpha their own way and deletes gamma.
    const edited = JSON.parse(await readFile(target, 'utf8')) as Json;
    const leafOf = (definition: Json) => (definition['subcommand'] as Json[])[0] as Json;
    const options = leafOf(edited)['options'] as Json[];
    (options.find((each) => each['name'] === 'alpha') as Json)['description'] = 'mine';
    leafOf(edited)['options'] = options.filter((each) => each['name'] !== 'gamma');
    await writeFile(target, JSON.stringify(edited, null, 2));

    // The program drops beta and gains delta.
    await helpOf([
      '  -a, --alpha         the alpha option, reworded',
      '  -g, --gamma=NUM     the gamma option',
      '  -d, --delta         the delta option',
    ]);
    const again = output();
    expect(await runIntrospect([program, '--out', target], again.out)).toBe(0);
    const merged = JSON.parse(await readFile(target, 'utf8')) as Json;
    expect(
      (leafOf(merged)['options'] as Json[]).map((each) => [each['name'], each['description']]),
    ).toEqual([
      ['alpha', 'mine'],
      ['delta', 'the delta option'],
    ]);
    expect(again.seen.stderr).toContain('added: default › --delta');
    expect(again.seen.stderr).toContain('removed (no longer in its help): default › --beta');
    expect((await validateToolFiles([target])).files[0]?.diagnostics).toEqual([]);
  });

  it("SPEC §15 introspection: --allow-read lets the help read what lies where commands read nothing (a program's own data)", async () => {
    const data = await mkdtemp(join('/var/tmp', 'ahma-introspect-data-'));
    try {
      await writeFile(
        join(data, 'help.txt'),
        'Usage: bundled [OPTION]...\n  -q, --quiet   say less\n',
      );
      const program = join(dir, 'bundled');
      await writeFile(program, `#!/bin/sh\ncat ${join(data, 'help.txt')}\n`);
      await chmod(program, 0o755);
      const denied = output();
      expect(await runIntrospect([program, '--depth', '0'], denied.out)).toBe(1);
      // The sandbox's own words say why, and how to allow it.
      expect(denied.seen.stderr).toContain(`${program} printed no help`);
      expect(denied.seen.stderr).toMatch(
        /the sandbox: .*help\.txt. is outside what commands may read/,
      );
      const allowed = output();
      expect(
        await runIntrospect([program, '--depth', '0', '--allow-read', data], allowed.out),
      ).toBe(0);
      expect(allowed.seen.stdout).toContain('"name": "quiet"');
      const relative = output();
      expect(await runIntrospect([program, '--allow-read', 'data'], relative.out)).toBe(2);
      expect(relative.seen.stderr).toContain('--allow-read data: a path must be absolute');
    } finally {
      await rm(data, { recursive: true, force: true });
    }
  });

  it('SPEC §15 introspection: an existing file not written by ahma-introspect is left alone', async () => {
    const target = join(dir, 'someone-elses.json');
    await writeFile(target, '{"keep": "me"}');
    const run = output();
    expect(await runIntrospect(['sed', '--depth', '0', '--out', target], run.out)).toBe(2);
    expect(run.seen.stderr).toMatch(/your edits cannot be told apart/);
    expect(await readFile(target, 'utf8')).toBe('{"keep": "me"}');
  });
});
