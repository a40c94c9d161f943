// SPEC §2 Compatibility: the shapes of the Rust ahma's tool files, each turned into Ahma's one
// model, checked from the file through the inputSchema (compiled with the call validator's ajv)
// down to the argv the command gets.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareInvocation } from '../../src/argv/prepare.js';
import { stepTarget } from '../../src/definition/definition-set.js';
import { describeLeaf } from '../../src/definition/flatten.js';
import { MAX_HINTS_LENGTH } from '../../src/definition/hints.js';
import { ArgumentValidator, leafInputSchema } from '../../src/definition/input-schema.js';
import { checkDocuments, diagnosticsFor, leavesOf, toolWithLeaf } from './helpers.js';

let scope = '';
beforeAll(async () => {
  scope = await mkdtemp('/var/tmp/ahma-compat-');
  await mkdir(join(scope, 'sub'));
});
afterAll(() => rm(scope, { recursive: true, force: true }));

const only = <T>(items: readonly T[]): T => {
  expect(items).toHaveLength(1);
  return items[0] as T;
};

describe('SPEC §2 compat: working_directory declared in the file', () => {
  const declared = {
    name: 'working_directory',
    type: 'string',
    description: 'Working directory for command execution',
    format: 'path',
  };

  it('SPEC §2 compat: a declared working_directory option is the meta-parameter (described, never passed on)', async () => {
    const leaf = only(
      leavesOf(toolWithLeaf({ options: [declared, { name: 'x', type: 'boolean' }] })),
    );
    expect(leaf.options.map((o) => o.name)).toEqual(['x']);
    const schema = leafInputSchema(leaf) as {
      properties: Record<string, { description?: string }>;
      required?: string[];
    };
    expect(schema.properties['working_directory']?.description).toBe(
      'Working directory for command execution',
    );
    expect(schema.required).toBeUndefined();
    const prepared = await prepareInvocation(
      leaf,
      { working_directory: 'sub', x: true },
      { scope },
    );
    expect(prepared.argv).toEqual(['demo', 'run', '--x']);
    expect(prepared.cwd).toBe(join(scope, 'sub'));
    await expect(prepareInvocation(leaf, { working_directory: '/etc' }, { scope })).rejects.toThrow(
      /outside the sandbox scope/,
    );
  });

  it('SPEC §2 compat: a required working_directory positional is required by the schema', () => {
    const leaf = only(
      leavesOf(toolWithLeaf({ positional_args: [{ ...declared, required: true }] })),
    );
    expect(leaf.positionals).toEqual([]);
    const schema = leafInputSchema(leaf);
    expect(schema['required']).toEqual(['working_directory']);
    const validator = new ArgumentValidator();
    expect(validator.validate(schema, {}).map((e) => e.message)).toEqual([
      'missing required argument "working_directory" (Working directory for command execution)',
    ]);
    expect(validator.validate(schema, { working_directory: '.' })).toEqual([]);
  });
});

describe('SPEC §2 compat: arrays', () => {
  it('SPEC §2 compat: "array" without "items" has string items (schema and argv)', async () => {
    const leaf = only(
      leavesOf(
        toolWithLeaf({
          options: [{ name: 'tag', type: 'array' }],
          positional_args: [{ name: 'rest', type: 'array' }],
        }),
      ),
    );
    const schema = leafInputSchema(leaf) as { properties: Record<string, unknown> };
    expect(schema.properties['tag']).toEqual({ type: 'array', items: { type: 'string' } });
    const validator = new ArgumentValidator();
    expect(validator.validate(schema, { tag: ['a', 'b'], rest: ['c'] })).toEqual([]);
    expect(validator.validate(schema, { tag: [1] })).toHaveLength(1);
    const prepared = await prepareInvocation(leaf, { tag: ['a', 'b'], rest: ['c'] }, { scope });
    expect(prepared.argv).toEqual(['demo', 'run', '--tag', 'a', '--tag', 'b', 'c']);
  });

  it('SPEC §2 compat: format "path" on an array applies to each item; the schema compiles and every item is resolved', async () => {
    const document = toolWithLeaf({
      positional_args: [
        { name: 'pattern', type: 'string', required: true },
        { name: 'files', type: 'array', items: { type: 'string' }, format: 'path' },
      ],
    });
    expect(diagnosticsFor(document)).toEqual([]);
    const leaf = only(leavesOf(document));
    const schema = leafInputSchema(leaf) as { properties: Record<string, unknown> };
    expect(schema.properties['files']).toEqual({
      type: 'array',
      items: { type: 'string', format: 'path' },
    });
    // The validator tools/call uses: this used to throw "strict mode: missing type".
    expect(new ArgumentValidator().validate(schema, { pattern: 'x', files: ['a'] })).toEqual([]);
    const prepared = await prepareInvocation(
      leaf,
      { pattern: 'x', files: ['a', 'sub/b'] },
      { scope },
    );
    expect(prepared.argv).toEqual(['demo', 'run', 'x', join(scope, 'a'), join(scope, 'sub', 'b')]);
    await expect(
      prepareInvocation(leaf, { pattern: 'x', files: ['../../etc/passwd'] }, { scope }),
    ).rejects.toThrow(/outside the sandbox scope/);
  });

  it('SPEC §2 compat: format "path" on an array of integers is still refused', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        options: [{ name: 'n', type: 'array', items: { type: 'integer' }, format: 'path' }],
      }),
    );
    expect(diagnostics.map((d) => [d.pointer, d.severity])).toEqual([
      ['/subcommand/0/options/0/format', 'error'],
    ]);
  });
});

describe('SPEC §2 compat: force_synchronous', () => {
  it('SPEC §2 compat: force_synchronous alone means synchronous, on the tool and on a subcommand', () => {
    expect(only(leavesOf(toolWithLeaf({}, { force_synchronous: true }))).synchronous).toBe(true);
    expect(only(leavesOf(toolWithLeaf({ force_synchronous: true }))).synchronous).toBe(true);
    expect(
      only(leavesOf(toolWithLeaf({ force_synchronous: false }, { synchronous: true }))).synchronous,
    ).toBe(false);
  });

  it('R5.2: force_synchronous equal to synchronous is a warning; different is an error', () => {
    const same = checkDocuments({
      'tool.json': toolWithLeaf({ synchronous: true, force_synchronous: true }),
    });
    expect(same.accepted).toHaveLength(1);
    expect(same.diagnostics.map((d) => [d.pointer, d.severity])).toEqual([
      ['/subcommand/0/force_synchronous', 'warning'],
    ]);
    const different = diagnosticsFor(
      toolWithLeaf({}, { synchronous: true, force_synchronous: false }),
    );
    expect(different.map((d) => [d.pointer, d.severity, d.message])).toEqual([
      ['/force_synchronous', 'error', 'force_synchronous (false) contradicts "synchronous" (true)'],
    ]);
  });
});

describe('SPEC §2 compat: hints, concurrency, skip_subcommand_args', () => {
  it('SPEC §2 compat: hints are appended to every tool description of the file', () => {
    const leaves = leavesOf({
      ...(toolWithLeaf({}) as object),
      hints: {
        build: 'Build with --release for speed.',
        test: null,
        custom: { default: 'Prefer --repo.' },
      },
    });
    const description = describeLeaf(only(leaves), {});
    expect(description).toBe(
      'Run it.\n\nHints:\n- build: Build with --release for speed.\n- default: Prefer --repo.',
    );
  });

  it(`SPEC §2 compat: hints are cut cleanly at ${String(MAX_HINTS_LENGTH)} characters with a marker`, () => {
    const long = Array.from({ length: 200 }, (_, i) => `word${String(i)}`).join(' ');
    const [leaf] = leavesOf({ ...(toolWithLeaf({}) as object), hints: { run: long } });
    if (leaf === undefined) throw new Error('no leaf');
    const hints = describeLeaf(leaf, {}).slice('Run it.\n\n'.length);
    expect(hints.length).toBeLessThanOrEqual(MAX_HINTS_LENGTH);
    expect(hints).toMatch(/^Hints:\n- run: word0 word1 /);
    expect(hints).toMatch(/ word\d+ \[…\]$/);
  });

  it('R5.2: an unknown key inside hints is still an error with a did-you-mean', () => {
    const diagnostics = diagnosticsFor({ ...(toolWithLeaf({}) as object), hints: { buld: 'x' } });
    expect(diagnostics).toEqual([
      expect.objectContaining({
        pointer: '/hints/buld',
        message: 'unknown key "buld"',
        hint: 'did you mean "build"?',
        severity: 'error',
      }),
    ]);
  });

  it('SPEC §2 compat: a subcommand\'s "concurrency" is accepted without a warning and is its lane', () => {
    const outcome = checkDocuments({ 'tool.json': toolWithLeaf({ concurrency: 'read_only' }) });
    expect(outcome.diagnostics).toEqual([]);
    expect(outcome.accepted[0]?.leaves[0]?.lane).toBe('read_only');
  });

  it('SPEC §2 compat: availability_check.skip_subcommand_args is accepted', () => {
    expect(
      diagnosticsFor(
        toolWithLeaf({
          availability_check: { command: 'demo', args: ['--version'], skip_subcommand_args: true },
        }),
      ),
    ).toEqual([]);
  });
});

describe('SPEC §2 compat: a bare shell as command', () => {
  it.each(['sh', '/bin/sh', 'bash', '/bin/bash', 'zsh', '/usr/bin/zsh'])(
    'SPEC §2 compat: with "command": "%s" each leaf runs its subcommand word as the program, with argv',
    async (shell) => {
      const leaf = only(
        leavesOf({
          name: 'files',
          description: 'File tools.',
          command: shell,
          subcommand: [
            {
              name: 'grep',
              description: 'Search.',
              options: [{ name: 'count', alias: 'c', type: 'boolean' }],
              positional_args: [
                { name: 'pattern', type: 'string', required: true },
                { name: 'files', type: 'array', format: 'path' },
              ],
            },
          ],
        }),
      );
      const prepared = await prepareInvocation(
        leaf,
        { pattern: 'x; touch PWNED', count: true, files: ['a'] },
        { scope },
      );
      expect(prepared.argv).toEqual(['grep', '-c', 'x; touch PWNED', join(scope, 'a')]);
    },
  );

  it('SPEC §2 compat: a shell with -c keeps its command', () => {
    expect(
      only(
        leavesOf({
          name: 'script',
          description: 'd',
          command: 'bash -c',
          subcommand: [{ name: 'x', description: 'x' }],
        }),
      ).command,
    ).toEqual(['bash', '-c']);
  });

  const problems = (document: unknown) =>
    diagnosticsFor(document).map((d) => [d.pointer, d.severity, d.message]);

  it('SPEC §2 compat: a bare-shell "default" leaf (no program word) is refused; an option "-c" would reach the shell', () => {
    expect(
      problems({
        name: 'sh',
        description: 'x',
        command: 'sh',
        subcommand: [
          { name: 'default', description: 'd', options: [{ name: '-c', type: 'string' }] },
        ],
      }),
    ).toEqual([
      [
        '/subcommand/0/name',
        'error',
        'this leaf of a bare-shell tool has no program to run: its subcommand path is empty',
      ],
    ]);
  });

  it('SPEC §2 compat: a bare-shell tool without subcommands is refused', () => {
    expect(
      problems({
        name: 'runner',
        description: 'd',
        command: 'sh',
      }).concat(problems({ name: 'runner', description: 'd', command: '/usr/bin/env bash' })),
    ).toEqual([
      ['/command', 'error', 'a bare shell ("sh") without subcommands has no program to run'],
      [
        '/command',
        'error',
        'a bare shell ("/usr/bin/env bash") without subcommands has no program to run',
      ],
    ]);
  });

  it.each(['bash', 'zsh', 'env'])(
    'SPEC §2 compat: a bare-shell leaf whose program word is "%s" is refused',
    (program) => {
      expect(
        problems({
          name: 'files',
          description: 'x',
          command: 'sh',
          subcommand: [
            { name: 'ls', description: 'List.' },
            {
              name: 'default',
              description: 'd',
              subcommand: [
                {
                  name: program,
                  description: 'd',
                  positional_args: [{ name: 'args', type: 'array', accepts_options: true }],
                },
              ],
            },
          ],
        }),
      ).toEqual([
        [
          '/subcommand/1/subcommand/0/name',
          'error',
          `this leaf of a bare-shell tool runs "${program}", which is a shell or env, as its program`,
        ],
      ]);
    },
  );
});

describe('SPEC §2 compat: shells with flags or through env are bare shells too', () => {
  const files = (command: string) => ({
    name: 'files',
    description: 'File tools.',
    command,
    subcommand: [
      {
        name: 'ls',
        description: 'List.',
        positional_args: [{ name: 'path', type: 'string', format: 'path' }],
      },
    ],
  });

  it.each(['/usr/bin/env bash', 'env sh', 'sh -e', 'bash --norc', 'bash --norc --noprofile -x'])(
    'SPEC §2 compat: "command": "%s" runs each leaf\'s subcommand word as the program, with argv',
    async (command) => {
      const prepared = await prepareInvocation(
        only(leavesOf(files(command))),
        { path: 'a' },
        {
          scope,
        },
      );
      expect(prepared.argv).toEqual(['ls', join(scope, 'a')]);
    },
  );

  it.each([
    ['bash -o errexit', '"-o" takes a value'],
    ['bash --rcfile rc', '"--rcfile" takes a value'],
    ['sh --', '"--" makes the next word a script file'],
    ['env -i bash', '"env" has its own arguments before the shell'],
  ])('SPEC §2 compat: "command": "%s" is refused: %s', (command, reason) => {
    expect(diagnosticsFor(files(command)).map((d) => [d.pointer, d.severity, d.message])).toEqual([
      [
        '/command',
        'error',
        `"${command}" starts a shell that would run its first argument as a script file (${reason})`,
      ],
    ]);
  });

  it.each(['bash -ec', 'sh -c', '/usr/bin/env bash -c', 'bash note.sh'])(
    'SPEC §2 compat: "command": "%s" gives the shell a script and keeps its command',
    (command) => {
      expect(only(leavesOf(files(command))).command).toEqual(command.split(' '));
    },
  );
});

describe('SPEC §9 compat: sequence steps with "_" in names', () => {
  const tools = [
    ...leavesOf({
      name: 'cargo',
      description: 'd',
      command: 'cargo',
      subcommand: [
        { name: 'nextest', description: 'd', subcommand: [{ name: 'run', description: 'd' }] },
        { name: 'clippy', description: 'd' },
        { name: 'fmt', description: 'd' },
      ],
    }),
    ...leavesOf({
      name: 'gh',
      description: 'd',
      command: 'gh',
      subcommand: [
        { name: 'pr', description: 'd', subcommand: [{ name: 'create', description: 'd' }] },
      ],
    }),
  ];
  it.each([
    [{ tool: 'cargo', subcommand: 'nextest_run' }, 'cargo_nextest_run'],
    [{ tool: 'cargo_nextest', subcommand: 'nextest_run' }, 'cargo_nextest_run'],
    [{ tool: 'cargo_clippy', subcommand: 'clippy' }, 'cargo_clippy'],
    [{ tool: 'cargo_fmt', subcommand: 'default' }, 'cargo_fmt'],
    [{ tool: 'gh', subcommand: 'pr_create' }, 'gh_pr_create'],
  ])('SPEC §9: step %j calls %s', (step, target) => {
    expect(stepTarget(step, tools)).toBe(target);
  });

  it('SPEC §9: a step naming a one-word "nextest_run" subcommand runs it as one argv word', () => {
    const outcome = checkDocuments({
      'cargo.json': {
        name: 'cargo',
        description: 'd',
        command: 'cargo',
        subcommand: [
          { name: 'nextest_run', description: 'Run tests.' },
          {
            name: 'gate',
            description: 'Runs the tests.',
            sequence: [{ tool: 'cargo', subcommand: 'nextest_run' }],
          },
        ],
      },
    });
    expect(outcome.diagnostics).toEqual([]);
    const leaf = outcome.accepted[0]?.leaves.find((l) => l.name === 'cargo_nextest_run');
    expect(leaf?.subcommandPath).toEqual(['nextest_run']);
  });
});
