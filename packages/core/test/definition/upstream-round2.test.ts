// SPEC §2 compat, round 2 (issue 28): tool files the current Rust ahma loads load in Ahma too, with
// a warning wherever Ahma ignores something; typos below a tool's top level stay errors. Each
// fixture in test/fixtures/upstream-round2 (see its README for where each came from) is checked
// for exactly the warnings it gets, and then for what Ahma makes of the shape it exercises.
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { prepareInvocation } from '../../src/argv/prepare.js';
import type { Diagnostic } from '../../src/definition/diagnostic.js';
import { ArgumentValidator, leafInputSchema } from '../../src/definition/input-schema.js';
import { loadTools } from '../../src/definition/load.js';
import {
  checkDocuments,
  diagnosticsFor,
  fixture,
  leavesOf,
  toolWithLeaf,
  validateOne,
} from './helpers.js';

const DIR = fixture('upstream-round2');
const DECEMBER = fixture('upstream-round2', 'ahma-tools-2025-12');

const TIMEOUT_DECLARED = [
  'warning',
  '"timeout_seconds" is the meta-parameter: it sets this call\'s timeout and is not passed to the program',
] as const;

const DISABLED_STEP_HINT =
  'check "tool" and "subcommand"; the tool is disabled, so the file still loads';

/** Every fixture file, with exactly the diagnostics ahma-validate gives it: severity, pointer, message. */
const EXPECTED: Readonly<Record<string, readonly (readonly [string, string, string])[]>> = {
  'git-timeout-option.json': [
    [TIMEOUT_DECLARED[0], '/subcommand/3/options/0/name', TIMEOUT_DECLARED[1]],
    [TIMEOUT_DECLARED[0], '/subcommand/4/options/0/name', TIMEOUT_DECLARED[1]],
    [TIMEOUT_DECLARED[0], '/subcommand/5/options/0/name', TIMEOUT_DECLARED[1]],
    [
      'warning',
      '/guidance_key',
      'unknown guidance_key "git_operations": the description goes without it',
    ],
  ],
  'cargo-bench.json': [
    ['warning', '/subcommand/0/options/9/format', 'format "path-or-value" has no effect'],
  ],
  'input-schema.json': [['warning', '/input_schema', '"input_schema" is ignored']],
  'decompose.json': [
    [
      'warning',
      '/tool_type',
      'tool_type "decompose" is not a kind of tool Ahma runs: its tools are not offered',
    ],
  ],
  'rust-quality-check.json': [],
  'cargo.json': [],
  'top-level-keys.json': [
    ['warning', '/asynchronous', 'unknown key "asynchronous" is ignored'],
    ['warning', '/monitor_level', 'unknown key "monitor_level" is ignored'],
    ['warning', '/monitor_stream', 'unknown key "monitor_stream" is ignored'],
  ],
  'lanes.json': [],
  'subcommand-asynchronous.json': [
    [
      'warning',
      '/subcommand/0/asynchronous',
      '"asynchronous" is ignored, as the Rust ahma ignores it',
    ],
  ],
  'ahma-tools-2025-12/ls.json': [],
  'ahma-tools-2025-12/ahma_quality_check.json': [
    ['cargo_run', 0],
    ['cargo_run', 1],
    ['cargo_fmt', 2],
    ['cargo_clippy', 3],
    ['cargo_clippy', 4],
    ['cargo_nextest_run', 5],
    ['cargo_build', 6],
  ].map(
    ([tool, step]) =>
      [
        'warning',
        `/sequence/${String(step)}/tool`,
        `step calls "${String(tool)}", which is not a defined, enabled tool`,
      ] as const,
  ),
};

const summary = (diagnostics: readonly Diagnostic[]) =>
  diagnostics.map((d) => [d.severity, d.pointer, d.message]);

describe.concurrent(
  'SPEC §2 compat: upstream files of round 2 load, with exactly these warnings',
  () => {
    it('SPEC §2 compat: the table covers every fixture file', () => {
      const files = [
        ...readdirSync(DIR).filter((name) => name.endsWith('.json')),
        ...readdirSync(DECEMBER).map((name) => `ahma-tools-2025-12/${name}`),
      ];
      expect(files.sort()).toEqual(Object.keys(EXPECTED).sort());
    });

    for (const [name, expected] of Object.entries(EXPECTED)) {
      it(`SPEC §2 compat: ${name} validates with no error and exactly its warnings`, async () => {
        const diagnostics = await validateOne(fixture('upstream-round2', ...name.split('/')));
        expect(summary(diagnostics)).toEqual(expected);
      });
    }

    it('SPEC §2 compat: the folder loads; the tools of an unknown tool_type are not offered', async () => {
      const { tools, definitions } = await loadTools({ toolsDir: { dir: DIR, origin: 'option' } });
      expect(definitions.map((entry) => entry.definition.name)).toContain('decompose');
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['git_push', 'cargo_bench_bench', 'pwd', 'ls']));
      expect(names.filter((name) => name.startsWith('decompose'))).toEqual([]);
    });
  },
);

describe.concurrent(
  'SPEC §2 compat: a declared timeout_seconds is the meta-parameter (gap 1)',
  () => {
    it("SPEC §2 compat: git push's declared timeout_seconds sets the call's timeout and never reaches git", async () => {
      const push = leavesOf(await readFixture('git-timeout-option.json')).find(
        (leaf) => leaf.name === 'git_push',
      );
      if (push === undefined) throw new Error('no git_push');
      expect(push.options.map((option) => option.name)).toEqual(['set-upstream', 'force', 'all']);
      const schema = leafInputSchema(push) as { properties: Record<string, { type?: string }> };
      expect(schema.properties['timeout_seconds']?.type).toBe('number');
      expect(
        new ArgumentValidator().validate(schema, { timeout_seconds: 30, force: true }),
      ).toEqual([]);
      const prepared = await prepareInvocation(
        push,
        { timeout_seconds: 30, force: true },
        { scope: DIR },
      );
      expect(prepared.argv).toEqual(['git', 'push', '-f']);
      expect(prepared.timeoutSeconds).toBe(30);
    });

    it('SPEC §2 compat: a declared execution_mode is the meta-parameter too (upstream META_PARAMS), positional or option', () => {
      const document = toolWithLeaf({
        positional_args: [{ name: 'execution_mode', type: 'string' }],
        options: [{ name: 'timeout_seconds', type: 'number', required: true }],
      });
      expect(summary(diagnosticsFor(document))).toEqual([
        ['warning', '/subcommand/0/options/0/name', TIMEOUT_DECLARED[1]],
        [
          'warning',
          '/subcommand/0/positional_args/0/name',
          '"execution_mode" is the meta-parameter: it chooses whether this call blocks and is not passed to the program',
        ],
      ]);
      const [leaf] = leavesOf(document);
      expect([...(leaf?.options ?? []), ...(leaf?.positionals ?? [])]).toEqual([]);
    });

    it("R5.3: Ahma's own meta-parameters (max_output_tokens, pty, stdin) are still refused as argument names", () => {
      expect(
        summary(diagnosticsFor(toolWithLeaf({ options: [{ name: 'pty', type: 'boolean' }] }))),
      ).toEqual([
        [
          'error',
          '/subcommand/0/options/0/name',
          '"pty" is a meta-parameter that is never passed to the command',
        ],
      ]);
    });
  },
);

describe.concurrent('SPEC §2 compat: format is free-form (gap 2)', () => {
  it('SPEC §2 compat: "path-or-value" is dropped: the value is passed as given, not resolved', async () => {
    const [bench] = leavesOf(await readFixture('cargo-bench.json'));
    if (bench === undefined) throw new Error('no leaf');
    const config = bench.options.find((option) => option.name === 'config');
    expect(config?.format).toBeUndefined();
    const schema = leafInputSchema(bench) as { properties: Record<string, object> };
    expect(schema.properties['config']).not.toHaveProperty('format');
    const prepared = await prepareInvocation(bench, { config: '../KEY=VALUE' }, { scope: DIR });
    expect(prepared.argv).toEqual(['cargo', 'bench', '--config', '../KEY=VALUE']);
  });

  it('SPEC §2 compat: an unknown format on an array\'s items is dropped with a warning; "path" keeps its effect', () => {
    const document = toolWithLeaf({
      positional_args: [{ name: 'urls', type: 'array', items: { type: 'string', format: 'uri' } }],
    });
    expect(summary(diagnosticsFor(document))).toEqual([
      ['warning', '/subcommand/0/positional_args/0/items/format', 'format "uri" has no effect'],
    ]);
    expect(leavesOf(document)[0]?.positionals[0]?.items).toEqual({ type: 'string' });
  });
});

describe.concurrent(
  'SPEC §2 compat: input_schema, unknown tool_type, disabled files (gaps 3, 5, 7)',
  () => {
    it("SPEC §2 compat: input_schema is ignored: the tool's inputSchema comes from its options", async () => {
      const [pwd] = leavesOf(await readFixture('input-schema.json'));
      if (pwd === undefined) throw new Error('no leaf');
      const schema = leafInputSchema(pwd) as {
        properties: Record<string, { description?: string }>;
      };
      expect(schema.properties['working_directory']?.description).toBe(
        'Working directory for command execution',
      );
    });

    it('SPEC §2 compat: an unknown tool_type loads as a disabled file: a step calling it is refused', async () => {
      const decompose = await readFixture('decompose.json');
      const outcome = checkDocuments({
        'decompose.json': decompose,
        'ask.json': {
          name: 'ask',
          description: 'Asks the local model.',
          command: 'sequence',
          sequence: [{ tool: 'decompose' }],
        },
      });
      expect(outcome.accepted.map((entry) => entry.definition.name)).toEqual(['decompose']);
      expect(outcome.accepted[0]?.leaves.every((leaf) => !leaf.enabled)).toBe(true);
      expect(summary(outcome.diagnostics).slice(1)).toEqual([
        [
          'error',
          '/sequence/0/tool',
          'step calls "decompose", which is not a defined, enabled tool',
        ],
      ]);
    });

    it('SPEC §2 compat: the same broken step is an error in an enabled file and a warning in a disabled one', () => {
      const file = (enabled: boolean) => ({
        name: 'gate',
        description: 'Checks everything.',
        command: 'sequence',
        enabled,
        sequence: [{ tool: 'cargo', subcommand: 'build' }],
      });
      const enabled = checkDocuments({ 'gate.json': file(true) });
      expect(enabled.accepted).toEqual([]);
      expect(summary(enabled.diagnostics)).toEqual([
        [
          'error',
          '/sequence/0/tool',
          'step calls "cargo_build", which is not a defined, enabled tool',
        ],
      ]);
      const disabled = checkDocuments({ 'gate.json': file(false) });
      expect(disabled.accepted).toHaveLength(1);
      expect(disabled.diagnostics).toEqual([
        expect.objectContaining({ severity: 'warning', hint: DISABLED_STEP_HINT }),
      ]);
    });

    it("SPEC §2 compat: a disabled subcommand's sequence only warns; its enabled siblings load", () => {
      const outcome = checkDocuments({
        'ci.json': toolWithLeaf(
          { enabled: false, sequence: [{ tool: 'missing' }] },
          { command: 'sequence' },
        ),
      });
      expect(outcome.accepted).toHaveLength(1);
      expect(summary(outcome.diagnostics)).toEqual([
        [
          'warning',
          '/subcommand/0/sequence/0/tool',
          'step calls "missing", which is not a defined, enabled tool',
        ],
      ]);
    });
  },
);

describe.concurrent('SPEC §2 compat: the description wording check (gap 6)', () => {
  const warningsFor = (description: string, synchronous: boolean) =>
    summary(diagnosticsFor(toolWithLeaf({ description, synchronous })));

  it.each([
    'This tool runs SYNCHRONOUSLY and provides complete results, unlike tasks which run asynchronously and may not show failures.',
    'Returns the result directly rather than an operation id.',
    'Never runs in the background.',
    "Doesn't run in the background: the call returns the result.",
  ])('SPEC §2 compat: a contrast or negation is no promise (synchronous: %s)', (description) => {
    expect(warningsFor(description, true)).toEqual([]);
  });

  it.each([
    'Does not block until the build finishes.',
    'Unlike make, it never waits for the command to finish.',
  ])('SPEC §2 compat: a contrast or negation is no promise (asynchronous: %s)', (description) => {
    expect(warningsFor(description, false)).toEqual([]);
  });

  it('R2.4: a real promise is still caught, as a warning, also beside a contrast in another sentence', () => {
    expect(
      warningsFor(
        'Unlike make, this is quick. Runs in the background while you keep working.',
        true,
      ),
    ).toEqual([
      [
        'warning',
        '/subcommand/0/description',
        "this synchronous tool's description promises background work",
      ],
    ]);
    expect(warningsFor('Blocks until the build finishes.', false)).toEqual([
      [
        'warning',
        '/subcommand/0/description',
        "this asynchronous tool's description promises to block until done",
      ],
    ]);
  });
});

describe.concurrent('SPEC §2 compat: keys at the top level and below (gap 8)', () => {
  it('SPEC §2 compat: an unknown top-level key is ignored with a warning, a close one with a did-you-mean', () => {
    const diagnostics = diagnosticsFor({
      ...(toolWithLeaf({}) as object),
      timeout_secnds: 30,
      x_team: 'infra',
    });
    expect(diagnostics.map((d) => [d.severity, d.pointer, d.hint])).toEqual([
      ['warning', '/timeout_secnds', 'did you mean "timeout_seconds"?'],
      [
        'warning',
        '/x_team',
        'Ahma does not use it; the Rust ahma accepts any key at the top level of a tool',
      ],
    ]);
  });

  it('R5.2: an unknown key below the top level stays an error with a did-you-mean', () => {
    expect(
      diagnosticsFor(toolWithLeaf({ synchronus: false })).map((d) => [
        d.severity,
        d.pointer,
        d.message,
        d.hint,
      ]),
    ).toEqual([
      [
        'error',
        '/subcommand/0/synchronus',
        'unknown key "synchronus"',
        'did you mean "synchronous"?',
      ],
    ]);
  });

  it('R5.2: a file refused by the schema also lists the top-level keys it ignores', () => {
    expect(
      summary(diagnosticsFor({ ...(toolWithLeaf({}) as object), timeout_seconds: 0, owner: 'me' })),
    ).toEqual([
      ['error', '/timeout_seconds', '0 is out of range'],
      ['warning', '/owner', 'unknown key "owner" is ignored'],
    ]);
  });
});

describe.concurrent('SPEC §2 compat: concurrency and mutates, the workspace lanes', () => {
  it('SPEC §2 compat: each leaf carries its lane (concurrency, nearest declaration wins) and mutates', async () => {
    const leaves = leavesOf(await readFixture('lanes.json'));
    expect(leaves.map((leaf) => [leaf.name, leaf.lane, leaf.mutates])).toEqual([
      ['vcs_status', 'read_only', false],
      // upstream: mutates never chooses the lane; with no concurrency the server chooses.
      ['vcs_log', undefined, false],
      ['vcs_commit', undefined, true],
      ['vcs_daemon', 'service', true],
      ['vcs_stash_push', 'exclusive', true],
      ['vcs_stash_list', 'read_only', true],
    ]);
  });

  it('SPEC §2 compat: a tool without subcommands takes its own concurrency and mutates', () => {
    const [leaf] = leavesOf({
      name: 'serve',
      description: 'Dev server.',
      command: 'vite',
      concurrency: 'service',
      mutates: false,
    });
    expect([leaf?.lane, leaf?.mutates]).toEqual(['service', false]);
  });

  it('R5.2: an unknown concurrency value is an error listing the accepted ones, on the tool and on a subcommand', () => {
    const expected = (pointer: string) => ({
      severity: 'error',
      pointer,
      message: 'must be one of "exclusive", "read_only", "service"',
    });
    expect(diagnosticsFor(toolWithLeaf({}, { concurrency: 'parallel' }))).toEqual([
      expect.objectContaining(expected('/concurrency')),
    ]);
    expect(diagnosticsFor(toolWithLeaf({ concurrency: 'readonly' }))).toEqual([
      expect.objectContaining(expected('/subcommand/0/concurrency')),
    ]);
    expect(diagnosticsFor(toolWithLeaf({ mutates: 'no' }))).toEqual([
      expect.objectContaining({ pointer: '/subcommand/0/mutates', message: 'must be a boolean' }),
    ]);
  });

  it("SPEC §2 compat: upstream's own files declare lanes with no warning", async () => {
    const git = await validateOne(fixture('upstream-ahma', 'git.json'));
    expect(git).toEqual([]);
    const [status] = leavesOf(await readJson(fixture('upstream-ahma', 'git.json')));
    expect(status?.lane).toBe('read_only');
  });
});

async function readFixture(name: string): Promise<unknown> {
  return readJson(fixture('upstream-round2', name));
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8')) as unknown;
}
