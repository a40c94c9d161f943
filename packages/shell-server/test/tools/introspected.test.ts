// SPEC §15 introspection: `ahma-shell --introspect PROGRAM,…` serves the tools read from a program's
// --help without any file in the project, like a tool file's (sandboxed, async, with guidance and
// an availability check), and keeps what it read in the private state: the next start serves it
// without reading the help again, a changed program is read again, and a cache file that is not
// this user's private, valid record of that very program is not trusted. Real programs (grep, a
// small script), the real sandbox, the SDK's real Client: over stdio with the built binary, else
// in this process.
import {
  chmod,
  chown,
  lstat,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  readLog,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type E2E,
  type RunningServer,
  type Scope,
} from '../support/harness.js';

const toolNames = async (server: RunningServer) =>
  (await server.client.listTools()).tools.map((tool) => tool.name);

/** Waits until tools/list shows `name` (a program not cached is read in the background). */
const listed = (server: RunningServer, name: string) =>
  waitFor(async () => (await toolNames(server)).includes(name), `${name} in tools/list`, 20_000);

const cacheDir = (scope: Scope) => join(scope.stateRoot, 'introspect');
const cacheFiles = async (scope: Scope) =>
  (await readdir(cacheDir(scope)).catch(() => [] as string[])).map((name) =>
    join(cacheDir(scope), name),
  );

/** The log's messages so far (the servers of a scope write one file). */
const messages = async (scope: Scope) =>
  (await readLog(scope)).lines.map((line) => String(line['msg']));

/** Waits for a log message matching `pattern` (pino writes the file a moment after the call). */
const logged = (scope: Scope, pattern: RegExp) =>
  waitFor(
    async () => (await messages(scope)).find((message) => pattern.test(message)),
    `a log message matching ${String(pattern)}`,
  );

/** A program whose --help lists `options` (GNU style), and which echoes what it is run with. */
async function scriptProgram(e2e: E2E, options: readonly string[]): Promise<string> {
  const dir = await e2e.outsideDir();
  const program = join(dir, 'tinytool');
  await writeFile(
    program,
    [
      '#!/bin/sh',
      'if [ "$1" = --help ]; then',
      "  cat <<'EOF'",
      'Usage: tinytool [OPTION]... NAME',
      '',
      'Options:',
      ...options,
      'EOF',
      '  exit 0',
      'fi',
      'echo "tinytool ran: $*"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return program;
}

describe.concurrent('--introspect', { timeout: 60_000 }, () => {
  it("SPEC §15 introspection: --introspect serves grep's tools without a file; a call runs grep in the sandbox", async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const outside = await e2e.outsideDir();
    await writeFile(join(scope.dir, 'notes.txt'), 'a Needle here\n');
    await writeFile(join(outside, 'secret.txt'), 'a needle outside\n');
    await symlink(join(outside, 'secret.txt'), join(scope.dir, 'link.txt'));
    const server = await e2e.server(scope, ['--introspect', 'grep', '--deny-read', outside]);
    await listed(server, 'grep');
    expect(await readdir(join(scope.dir, '.ahma', 'tools'))).toEqual([]);

    const grep = (await server.client.listTools()).tools.find((tool) => tool.name === 'grep');
    expect(grep?.inputSchema.properties).toMatchObject({
      patterns: { type: 'string' },
      'ignore-case': { type: 'boolean' },
      'max-count': { type: 'integer' },
      'dereference-recursive': { type: 'boolean' },
    });
    // Async like any tool file's tool: its description starts with the async guidance.
    expect(grep?.description).toMatch(/^Runs in the background/);
    expect(grep?.inputSchema.properties).toHaveProperty('execution_mode');

    // grep -R follows the link to the denied file: the sandbox refuses the read.
    const result = await server.call('grep', {
      patterns: 'needle',
      'ignore-case': true,
      'dereference-recursive': true,
      execution_mode: 'Synchronous',
    });
    const run = structured<CommandResult>(result);
    expect(run.output, textOf(result)).toContain('notes.txt:a Needle here');
    expect(run.output).toMatch(/link\.txt: Permission denied/);
    expect(run.output).not.toContain('needle outside');
    expect(run.exit_code).toBe(2);
  });

  it('SPEC §15 introspection: a second start serves the cached reading without reading the help again', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const first = await e2e.inProcess(scope, ['--introspect', 'grep']);
    await listed(first, 'grep');
    await first.close();
    await logged(scope, /^--introspect grep: found 1 tools in the help of \S+\/grep \(read in /);
    const [file, ...others] = await cacheFiles(scope);
    expect(others).toEqual([]);
    if (file === undefined) throw new Error('no cache file');
    const before = await stat(file, { bigint: true });
    expect(before.mode & 0o777n).toBe(0o600n);
    expect((await stat(cacheDir(scope))).mode & 0o777).toBe(0o700);

    const second = await e2e.inProcess(scope, ['--introspect', 'grep']);
    // Served from the start: no program to wait for.
    expect(await toolNames(second)).toContain('grep');
    await logged(
      scope,
      new RegExp(
        `^--introspect grep: found 1 tools in the help of \\S+/grep \\(from the cache, ${file}\\)`,
      ),
    );
    const after = await stat(file, { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
    expect(
      (await messages(scope)).filter((m) => /^--introspect grep: .*\(read in /.test(m)),
    ).toHaveLength(1);
  });

  it('SPEC §15 introspection: a program whose file changed is read again, and its old reading is dropped', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const program = await scriptProgram(e2e, ['  -v, --verbose     say more']);
    const first = await e2e.inProcess(scope, ['--introspect', program]);
    await listed(first, 'tinytool');
    const ran = structured<CommandResult>(
      await first.call('tinytool', { verbose: true, name: 'x', execution_mode: 'Synchronous' }),
    );
    expect(ran.output).toBe('tinytool ran: -v x\n');
    await first.close();
    const [old] = await cacheFiles(scope);

    // Another option, another size and another mtime: what an upgrade does.
    await writeFile(
      program,
      (await readFile(program, 'utf8')).replace(
        '  -v, --verbose     say more',
        '  -v, --verbose     say more\n  -n, --count=N     at most N',
      ),
    );
    await utimes(program, new Date(2001, 0, 1), new Date(2001, 0, 1));
    const second = await e2e.inProcess(scope, ['--introspect', program]);
    await waitFor(async () => {
      const tool = (await second.client.listTools()).tools.find((t) => t.name === 'tinytool');
      return tool?.inputSchema.properties?.['count'] !== undefined;
    }, 'tinytool with --count');
    const tool = (await second.client.listTools()).tools.find((t) => t.name === 'tinytool');
    expect(tool?.inputSchema.properties?.['count']).toMatchObject({ type: 'integer' });
    const reads = (await messages(scope)).filter((m) =>
      m.startsWith(`--introspect ${program}: found 1 tools in the help of ${program} (read in `),
    );
    expect(reads).toHaveLength(2);
    const now = await cacheFiles(scope);
    expect(now).toHaveLength(1);
    expect(now).not.toContain(old);
  });

  it('SPEC §15 introspection: a program not found is said in the log, and the others are served', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const missing = join(await e2e.outsideDir(), 'gone');
    const server = await e2e.inProcess(scope, [
      '--introspect',
      `ahma-no-such-program,grep,${missing}`,
    ]);
    await listed(server, 'grep');
    await logged(scope, /^--introspect ahma-no-such-program: not served: not found on PATH$/);
    await logged(
      scope,
      new RegExp(`^--introspect ${missing}: not served: cannot be read \\(ENOENT\\)$`),
    );
  });

  it('SPEC §15 introspection: a program whose help gives nothing to serve is said, and remembered', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const program = await scriptProgram(e2e, []);
    await writeFile(program, '#!/bin/sh\necho "nothing to see here"\n', { mode: 0o755 });
    const first = await e2e.inProcess(scope, ['--introspect', `${program},grep`]);
    await listed(first, 'grep');
    await first.close();
    const why = `--introspect ${program}: not served: its help lists no subcommand, option or argument`;
    await logged(scope, new RegExp(`^${why} \\(read in `));
    const second = await e2e.inProcess(scope, ['--introspect', `${program},grep`]);
    expect(await toolNames(second)).not.toContain('tinytool');
    await logged(scope, new RegExp(`^${why} \\(from the cache, `));
  });

  it('SPEC §15 introspection: a relative path is refused at start (a session process would find another file)', async ({
    e2e,
  }) => {
    const refused = await e2e.runInProcess(['--mode', 'stdio', '--introspect', 'grep,bin/tool']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--introspect bin/tool: a program is a name found on PATH or an absolute path',
    );
  });

  it("SPEC §15 introspection, R1.2: a project tool file of the same name wins, and the log says why the program's tools are not served", async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(
      join(scope.dir, '.ahma', 'tools', 'grep.json'),
      JSON.stringify({
        name: 'grep',
        description: 'The project grep.',
        command: 'grep',
        subcommand: [{ name: 'default', description: 'Project grep.', synchronous: true }],
      }),
    );
    const server = await e2e.inProcess(scope, ['--introspect', 'grep']);
    await logged(scope, /^--introspect grep: found 1 tools/);
    await logged(
      scope,
      /^--introspect grep: not served: \S+grep\.json has its name, grep, and is served$/,
    );
    const grep = (await server.client.listTools()).tools.find((tool) => tool.name === 'grep');
    expect(grep?.description).toContain('Project grep.');
  });
});

/** Ways a cache file can be tampered with, and what the log then says of it. */
const TAMPERED: readonly {
  readonly how: string;
  readonly tamper: (file: string) => Promise<void>;
  readonly why: RegExp;
  readonly rootOnly?: boolean;
}[] = [
  {
    how: 'readable by others',
    tamper: (file) => chmod(file, 0o644),
    why: /can be read or written by others \(mode 644\)/,
  },
  {
    how: "another user's",
    tamper: (file) => chown(file, 65534, 65534),
    why: /belongs to another user \(uid 65534\)/,
    rootOnly: true,
  },
  {
    how: 'a symbolic link',
    tamper: async (file) => {
      const copy = `${file}.copy`;
      await writeFile(copy, await readFile(file), { mode: 0o600 });
      await symlinkOver(copy, file);
    },
    why: /it is a symbolic link/,
  },
  {
    how: 'not JSON',
    tamper: (file) => writeFile(file, '{ nope'),
    why: /it is not JSON/,
  },
  {
    how: 'a valid definition that runs another program',
    tamper: async (file) => {
      const record = JSON.parse(await readFile(file, 'utf8')) as {
        outcome: { definition: { command: string; availability_check: { command: string } } };
      };
      record.outcome.definition.command = '/usr/bin/touch';
      record.outcome.definition.availability_check.command = '/usr/bin/touch';
      await writeFile(file, JSON.stringify(record));
    },
    why: /its definition does not run \S+\/grep as grep/,
  },
  {
    how: 'a definition that does not validate',
    tamper: async (file) => {
      const record = JSON.parse(await readFile(file, 'utf8')) as {
        outcome: { definition: { subcommand: unknown } };
      };
      record.outcome.definition.subcommand = 'everything';
      await writeFile(file, JSON.stringify(record));
    },
    why: /its definition does not validate/,
  },
];

async function symlinkOver(target: string, path: string): Promise<void> {
  await rm(path);
  await symlink(target, path);
}

describe.concurrent(
  '--introspect: a tampered cache file is not trusted',
  { timeout: 60_000 },
  () => {
    const asRoot = process.getuid?.() === 0;
    it.for(TAMPERED.filter((entry) => asRoot || entry.rootOnly !== true))(
      'SPEC §15 introspection: a cache file that is $how is ignored, said, and replaced by a new reading',
      async (entry, { e2e }) => {
        const scope = await e2e.scope({ noTools: true });
        const first = await e2e.inProcess(scope, ['--introspect', 'grep']);
        await listed(first, 'grep');
        await first.close();
        const [file] = await cacheFiles(scope);
        if (file === undefined) throw new Error('no cache file');
        await entry.tamper(file);

        const second = await e2e.inProcess(scope, ['--introspect', 'grep']);
        const why = await logged(scope, /^--introspect grep: its cached reading .* is not trusted/);
        expect(why).toContain(file);
        expect(why).toMatch(entry.why);
        await listed(second, 'grep');
        await logged(scope, /^--introspect grep: found 1 tools in the help of \S+ \(read in /);
        // The help was read again and kept anew: a regular file of this user, 0600, that runs grep.
        await waitFor(async () => {
          const info = await lstat(file);
          return info.isFile() && (info.mode & 0o777) === 0o600 && info.uid === process.getuid?.();
        }, 'the cache file rewritten');
        const record = JSON.parse(await readFile(file, 'utf8')) as {
          outcome: { definition: { command: string } };
        };
        expect(record.outcome.definition.command).toMatch(/\/grep$/);
        await writeFile(join(scope.dir, 'a.txt'), 'needle\n');
        const result = await second.call('grep', {
          patterns: 'needle',
          recursive: true,
          execution_mode: 'Synchronous',
        });
        expect(structured<CommandResult>(result).output, textOf(result)).toBe('a.txt:needle\n');
      },
    );
  },
);
