// Per-file checks a schema cannot express (semantic.ts) and the cross-file ones (definition-set.ts):
// naming, reserved names, guidance keys and argument declarations.
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES, RESERVED_TOOL_NAMES } from '../../src/definition/reserved.js';
import { validateToolFiles } from '../../src/definition/validate-files.js';
import {
  checkDocuments,
  diagnosticsFor,
  fixture,
  leavesOf,
  onlyDiagnostic,
  toolWithLeaf,
  validateOne,
} from './helpers.js';

describe('naming', () => {
  it('SPEC §2 compat: a subcommand name containing "_" is one word (gh\'s "pr_create")', () => {
    const document = {
      name: 'gh',
      description: 'd',
      command: 'gh',
      subcommand: [{ name: 'pr_create', description: 'Create a PR.' }],
    };
    expect(diagnosticsFor(document)).toEqual([]);
    const [leaf] = leavesOf(document);
    expect(leaf).toMatchObject({ name: 'gh_pr_create', subcommandPath: ['pr_create'] });
  });

  it('SPEC §2 compat: a "_" name and a nested path producing one tool name are refused, naming both pointers', () => {
    const diagnostics = diagnosticsFor({
      name: 'cargo',
      description: 'd',
      command: 'cargo',
      subcommand: [
        { name: 'nextest_run', description: 'one word' },
        { name: 'nextest', description: 'group', subcommand: [{ name: 'run', description: 'r' }] },
      ],
    });
    expect(diagnostics).toEqual([
      {
        file: 'tool.json',
        pointer: '/subcommand/1/subcommand/0/name',
        message:
          '/subcommand/1/subcommand/0/name produces the tool name "cargo_nextest_run", as /subcommand/0/name does',
        hint: 'tool names join the subcommand path with "_" and drop "default" segments; rename one of them',
        severity: 'error',
      },
    ]);
  });

  it('SPEC §2 naming: two leaves of one file producing one tool name after "default" collapses are refused', async () => {
    const d = await onlyDiagnostic('name-collision-within-file.json');
    expect(d.pointer).toBe('/subcommand/1/subcommand/0/name');
    expect(d.message).toBe(
      '/subcommand/1/subcommand/0/name produces the tool name "pkg_test", as /subcommand/0/name does',
    );
    expect(d.hint).toMatch(/drop "default" segments; rename one of them/);
  });

  it('SPEC §2 naming: two default leaves of a tool collide on the tool name itself', () => {
    const diagnostics = diagnosticsFor({
      name: 'twice',
      description: 'd',
      command: 'x',
      subcommand: [
        { name: 'default', description: 'a' },
        { name: 'group', description: 'b', subcommand: [{ name: 'default', description: 'c' }] },
        { name: 'group2', description: 'b', subcommand: [{ name: 'x', description: 'c' }] },
      ],
    });
    expect(diagnostics).toHaveLength(0);
    const collision = diagnosticsFor({
      name: 'twice',
      description: 'd',
      command: 'x',
      subcommand: [
        { name: 'default', description: 'a' },
        { name: 'default', description: 'b', subcommand: [{ name: 'default', description: 'c' }] },
      ],
    });
    expect(collision.map((d) => [d.pointer, d.message])).toEqual(
      expect.arrayContaining([
        [
          '/subcommand/1/subcommand/0/name',
          '/subcommand/1/subcommand/0/name produces the tool name "twice", as /subcommand/0/name does',
        ],
      ]),
    );
  });

  it('SPEC §2 naming: duplicate sibling subcommands are refused', () => {
    const diagnostics = diagnosticsFor({
      name: 'sib',
      description: 'd',
      command: 'x',
      subcommand: [
        { name: 'a', description: 'a' },
        { name: 'a', description: 'b' },
      ],
    });
    expect(diagnostics.map((d) => [d.pointer, d.message])).toContainEqual([
      '/subcommand/1/name',
      'duplicate subcommand "a"',
    ]);
  });

  it('SPEC §2 naming: a tool name produced by two files is refused in the later file only', async () => {
    const owner = fixture('broken', 'across-files', 'a-owner.json');
    const later = fixture('broken', 'across-files', 'name-collision-across-files.json');
    const report = await validateToolFiles([fixture('broken', 'across-files')]);
    expect(report.files.map((f) => f.file)).toEqual([owner, later]);
    expect(report.files[0]?.diagnostics).toEqual([]);
    expect(report.files[1]?.diagnostics).toEqual([
      {
        file: later,
        pointer: '/subcommand/0/name',
        message: `produces the tool "dup_x", which ${owner} already produces`,
        hint: 'rename the definition or the subcommand',
        severity: 'error',
      },
    ]);
  });

  it('SPEC §2 naming: two files defining the same name are refused in the later one', () => {
    const tool = { name: 'same', description: 'd', command: 'x' };
    const outcome = checkDocuments({ 'a.json': tool, 'b.json': tool });
    expect(outcome.accepted.map((entry) => entry.file)).toEqual(['a.json']);
    expect(outcome.diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: 'b.json',
          pointer: '/name',
          message: '"same" is already defined in a.json',
        }),
      ]),
    );
    expect(outcome.diagnostics.every((d) => d.file === 'b.json')).toBe(true);
  });

  it('SPEC §2 naming: a disabled leaf does not claim its tool name', () => {
    const outcome = checkDocuments({
      'a.json': {
        name: 'a',
        description: 'd',
        command: 'a',
        subcommand: [{ name: 'x', description: 'x', enabled: false }],
      },
      'b.json': { name: 'a_x', description: 'd', command: 'ax' },
    });
    expect(outcome.diagnostics).toEqual([]);
    expect(outcome.accepted).toHaveLength(2);
  });

  it('SPEC §2 naming: a built-in tool name is refused as a definition name', async () => {
    const d = await onlyDiagnostic('reserved-definition-name.json');
    expect(d.pointer).toBe('/name');
    expect(d.message).toBe('"status" is the name of a built-in tool');
    expect(d.hint).toBe('choose another name');
  });

  it.each(['sandboxed_shell', 'status', 'await', 'cancel', 'activate_tools', 'add_command'])(
    'SPEC §2 naming: "%s" is refused as a definition name',
    (name) => {
      expect(diagnosticsFor({ name, description: 'd', command: 'x' })).toEqual([
        {
          file: 'tool.json',
          pointer: '/name',
          message: `"${name}" is the name of a built-in tool`,
          hint: 'choose another name',
          severity: 'error',
        },
      ]);
    },
  );

  it('SPEC §2 naming: a produced tool name equal to a registry tool is refused', async () => {
    const d = await onlyDiagnostic('reserved-produced-tool-name.json');
    expect(d.pointer).toBe('/subcommand/0/name');
    expect(d.message).toBe('produces "add_command", the name of a built-in tool');
    expect(d.hint).toBe('rename it');
  });

  it.each([
    ['sandboxed_shell', 'sandboxed', ['shell']],
    ['sandboxed_shell', 'sandboxed', ['shell', 'default']],
    ['activate_tools', 'activate', ['tools']],
    ['add_command', 'add', ['command']],
    ['list_commands', 'list', ['commands']],
  ])(
    'SPEC §2 naming: producing "%s" from a definition named "%s" is refused',
    (produced, name, path) => {
      const [first, ...rest] = path;
      let leaf: Record<string, unknown> = { name: rest.at(-1) ?? first, description: 'leaf' };
      if (rest.length > 0) leaf = { name: first, description: 'branch', subcommand: [leaf] };
      const diagnostics = diagnosticsFor({
        name,
        description: 'd',
        command: 'x',
        subcommand: [leaf],
      });
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]?.message).toBe(`produces "${produced}", the name of a built-in tool`);
      expect(diagnostics[0]?.pointer).toMatch(/^\/subcommand\/0(\/subcommand\/0)?\/name$/);
    },
  );

  it.each(['status', 'await', 'cancel'])(
    'SPEC §2 naming: "%s" produced through a default leaf is refused once, at the definition name',
    (name) => {
      const diagnostics = diagnosticsFor({
        name,
        description: 'd',
        command: 'x',
        subcommand: [{ name: 'default', description: 'leaf' }],
      });
      expect(diagnostics.map((d) => d.pointer)).toEqual(['/name']);
    },
  );

  it('SPEC §2 naming: the reserved names are the built-in and registry tools', () => {
    for (const name of [...BUILTIN_TOOL_NAMES, 'add_command', 'batch_exec'])
      expect(RESERVED_TOOL_NAMES.has(name)).toBe(true);
    expect(RESERVED_TOOL_NAMES.has('git_status')).toBe(false);
    expect(
      diagnosticsFor({
        name: 'git',
        description: 'd',
        command: 'git',
        subcommand: [{ name: 'status', description: 's' }],
      }),
    ).toEqual([]);
  });

  it('SPEC §2 naming: a produced tool name longer than 64 characters is refused', () => {
    const long = 'a'.repeat(40);
    const diagnostics = diagnosticsFor({
      name: long,
      description: 'd',
      command: 'x',
      subcommand: [{ name: 'b'.repeat(30), description: 'leaf' }],
    });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]?.pointer).toBe('/subcommand/0/name');
    expect(diagnostics[0]?.hint).toMatch(/at most 64/);
  });
});

describe('guidance keys', () => {
  it('R2.4, R5.2: an unknown guidance_key is a warning with a did-you-mean hint; the file loads', async () => {
    const file = fixture('warnings', 'unknown-guidance-key.json');
    const diagnostics = await validateOne(file);
    expect(diagnostics).toEqual([
      {
        file,
        pointer: '/guidance_key',
        message: 'unknown guidance_key "cargo_hint": the description goes without it',
        hint: 'did you mean "cargo_hints"?',
        severity: 'warning',
      },
    ]);
  });

  it('R2.4: a custom key defined in tool_guidance.json is accepted, on a tool and a subcommand', () => {
    const document = toolWithLeaf({ guidance_key: 'team_rules' }, { guidance_key: 'team_rules' });
    expect(diagnosticsFor(document, { team_rules: 'Ask before deleting.' })).toEqual([]);
    expect(diagnosticsFor(document).map((d) => d.pointer)).toEqual([
      '/guidance_key',
      '/subcommand/0/guidance_key',
    ]);
  });

  it('R2.4: the built-in guidance keys are known without a guidance file', () => {
    expect(
      diagnosticsFor(toolWithLeaf({ guidance_key: 'sync_behavior', synchronous: true })),
    ).toEqual([]);
    expect(diagnosticsFor(toolWithLeaf({ guidance_key: 'async_behavior' }))).toEqual([]);
  });

  it('R2.4: an unknown guidance_key with no close match lists the known keys', () => {
    const [d] = diagnosticsFor(toolWithLeaf({}, { guidance_key: 'zzz' }));
    expect(d?.hint).toBe(
      'define it in tool_guidance.json; known keys: async_behavior, sync_behavior',
    );
  });
});

describe('descriptions', () => {
  const onlyWarning = async (name: string) => {
    const diagnostics = await validateOne(fixture('warnings', name));
    expect(diagnostics).toHaveLength(1);
    return diagnostics[0];
  };

  it('R2.4: a synchronous leaf whose description promises background work is warned about', async () => {
    expect(await onlyWarning('sync-description-promises-background.json')).toMatchObject({
      pointer: '/subcommand/0/description',
      message: "this synchronous tool's description promises background work",
      hint: 'reword it, or remove "synchronous": true',
      severity: 'warning',
    });
  });

  it('R2.4: an asynchronous leaf whose description promises to block is warned about', async () => {
    expect(await onlyWarning('async-description-promises-blocking.json')).toMatchObject({
      pointer: '/subcommand/0/description',
      message: "this asynchronous tool's description promises to block until done",
      hint: 'reword it, or set "synchronous": true',
      severity: 'warning',
    });
  });

  it('R2.4: the description check applies to a tool without subcommands at /description', () => {
    const [d] = diagnosticsFor({
      name: 'x',
      description: 'Runs asynchronously.',
      command: 'x',
      synchronous: true,
    });
    expect(d?.pointer).toBe('/description');
  });

  it('R2.4: matching descriptions pass ("asynchronous" is not "synchronous")', () => {
    expect(diagnosticsFor(toolWithLeaf({ description: 'Runs asynchronously.' }))).toEqual([]);
    expect(
      diagnosticsFor(toolWithLeaf({ description: 'Blocks until done.', synchronous: true })),
    ).toEqual([]);
  });
});

describe('arguments', () => {
  it('R5.3: a required positional after an optional one is refused', async () => {
    const d = await onlyDiagnostic('required-positional-after-optional.json');
    expect(d.pointer).toBe('/subcommand/0/positional_args/1');
    expect(d.message).toBe(
      'required positional "destination" follows optional positional at index 0',
    );
    expect(d.hint).toMatch(/put required positionals first/);
  });

  it('R5.3: an array positional must be the last positional', () => {
    const [d, ...rest] = diagnosticsFor(
      toolWithLeaf({
        positional_args: [
          { name: 'files', type: 'array', items: { type: 'string' } },
          { name: 'dest', type: 'string' },
        ],
      }),
    );
    expect(rest).toEqual([]);
    expect(d?.pointer).toBe('/subcommand/0/positional_args/0');
    expect(d?.hint).toMatch(/move it last/);
  });

  it('R5.3: format "path" on an integer is refused', async () => {
    const d = await onlyDiagnostic('format-path-on-integer.json');
    expect(d.pointer).toBe('/subcommand/0/options/0/format');
    expect(d.message).toBe('format "path" applies to string values, not "integer"');
    expect(d.hint).toBe('use it on a "string" argument or an array of strings');
  });

  it('R5.3: format "path" on a boolean or on an array of integers is refused', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        options: [
          { name: 'flag', type: 'boolean', format: 'path' },
          { name: 'ports', type: 'array', items: { type: 'integer', format: 'path' } },
          { name: 'counts', type: 'array', format: 'path', items: { type: 'integer' } },
        ],
      }),
    );
    expect(diagnostics.map((d) => [d.pointer, d.message])).toEqual([
      ['/subcommand/0/options/0/format', 'format "path" applies to string values, not "boolean"'],
      [
        '/subcommand/0/options/1/items/format',
        'format "path" applies to string values, not "array of integer"',
      ],
      [
        '/subcommand/0/options/2/format',
        'format "path" applies to string values, not "array of integer"',
      ],
    ]);
  });

  it('R5.3: format "path" on a string and on an array of strings is accepted', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        options: [
          { name: 'config', type: 'string', format: 'path' },
          { name: 'include', type: 'array', items: { type: 'string', format: 'path' } },
          { name: 'exclude', type: 'array', format: 'path', items: { type: 'string' } },
        ],
        positional_args: [{ name: 'file', type: 'string', format: 'path' }],
      }),
    );
    expect(diagnostics).toEqual([]);
  });

  it('R5.3: two options with one name are refused', async () => {
    const d = await onlyDiagnostic('duplicate-option-name.json');
    expect(d.pointer).toBe('/subcommand/0/options/1/name');
    expect(d.message).toBe('duplicate argument name "count" (first at /subcommand/0/options/0)');
  });

  it('R5.3: an option and a positional with one name are refused', async () => {
    const d = await onlyDiagnostic('duplicate-option-positional-name.json');
    expect(d.pointer).toBe('/subcommand/0/positional_args/0/name');
    expect(d.message).toBe('duplicate argument name "pattern" (first at /subcommand/0/options/0)');
  });

  it('R5.3: two options with one alias are refused', () => {
    const [d] = diagnosticsFor(
      toolWithLeaf({
        options: [
          { name: 'verbose', type: 'boolean', alias: 'v' },
          { name: 'version', type: 'boolean', alias: 'v' },
        ],
      }),
    );
    expect(d).toMatchObject({
      pointer: '/subcommand/0/options/1/alias',
      message: 'alias "v" is already used at /subcommand/0/options/0',
      severity: 'error',
    });
  });

  it('SPEC §2 argv: joined applies to value options without alias or file_flag', () => {
    const joinedOn = (argument: Record<string, unknown>, list = 'options') =>
      diagnosticsFor(
        toolWithLeaf({ [list]: [{ name: 'x', type: 'string', joined: true, ...argument }] }),
      );
    expect(joinedOn({})).toEqual([]);
    expect(joinedOn({}, 'positional_args')).toMatchObject([
      {
        pointer: '/subcommand/0/positional_args/0/joined',
        message: 'a positional argument has no flag to join',
        severity: 'error',
      },
    ]);
    expect(joinedOn({ type: 'boolean' })).toMatchObject([
      {
        pointer: '/subcommand/0/options/0/joined',
        message: 'a boolean option has no value to join',
        severity: 'error',
      },
    ]);
    expect(joinedOn({ alias: 'x' })).toMatchObject([
      { message: 'a joined value goes with the long flag ("--name=value"), not an alias' },
    ]);
    expect(joinedOn({ file_arg: true, file_flag: '-F' })).toMatchObject([
      { message: 'a joined value cannot follow file_flag' },
    ]);
  });

  it('SPEC §2 argv: after_double_dash belongs on positionals, and not with positional_args_first', async () => {
    const onOption = await onlyDiagnostic('after-double-dash-on-option.json');
    expect(onOption).toMatchObject({
      pointer: '/subcommand/0/options/0/after_double_dash',
      message: 'after_double_dash applies to positional arguments',
      severity: 'error',
    });
    const dashed = {
      name: 'rest',
      type: 'array',
      items: { type: 'string' },
      after_double_dash: true,
    };
    expect(diagnosticsFor(toolWithLeaf({ positional_args: [dashed] }))).toEqual([]);
    const [first, ...rest] = diagnosticsFor(
      toolWithLeaf({ positional_args_first: true, positional_args: [dashed] }),
    );
    expect(rest).toEqual([]);
    expect(first).toMatchObject({
      pointer: '/subcommand/0/positional_args/0/after_double_dash',
      message:
        'after_double_dash with positional_args_first would end the options before the options',
      severity: 'error',
    });
  });

  it('SPEC §2 argv: accepts_options is taken on positionals and value options, not on booleans, and a typo gets a did-you-mean', () => {
    const withKey = (argument: Record<string, unknown>, list = 'options') =>
      diagnosticsFor(toolWithLeaf({ [list]: [{ name: 'x', type: 'string', ...argument }] }));
    expect(withKey({ accepts_options: true }, 'positional_args')).toEqual([]);
    expect(withKey({ accepts_options: false })).toEqual([]);
    expect(withKey({ type: 'boolean', accepts_options: false })).toMatchObject([
      {
        pointer: '/subcommand/0/options/0/accepts_options',
        message: 'a boolean option has no value',
        hint: 'drop "accepts_options"',
        severity: 'error',
      },
    ]);
    expect(withKey({ accept_options: true }, 'positional_args')).toMatchObject([
      {
        pointer: '/subcommand/0/positional_args/0/accept_options',
        message: 'unknown key "accept_options"',
        hint: 'did you mean "accepts_options"?',
        severity: 'error',
      },
    ]);
  });

  // timeout_seconds and execution_mode, which the Rust ahma's files declare, are the
  // meta-parameter with a warning (upstream-round2.test.ts).
  it.each(['max_output_tokens', 'pty', 'stdin'])(
    'R5.3: an argument named like the meta-parameter %s is refused',
    (name) => {
      const [d] = diagnosticsFor(toolWithLeaf({ options: [{ name, type: 'string' }] }));
      expect(d).toMatchObject({
        pointer: '/subcommand/0/options/0/name',
        hint: 'rename the argument',
        severity: 'error',
      });
    },
  );

  it('SPEC §2 compat: a declared working_directory option or positional is accepted', () => {
    for (const list of ['options', 'positional_args'] as const) {
      const document = toolWithLeaf({
        [list]: [
          {
            name: 'working_directory',
            type: 'string',
            description: 'Where to run',
            format: 'path',
            required: true,
          },
        ],
      });
      expect(diagnosticsFor(document)).toEqual([]);
    }
  });

  it('SPEC §2 compat: a working_directory that is not a string, or that would be passed on, is refused', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        options: [{ name: 'working_directory', type: 'integer', alias: 'C' }],
      }),
    );
    expect(diagnostics.map((d) => [d.pointer, d.severity])).toEqual([
      ['/subcommand/0/options/0/type', 'error'],
      ['/subcommand/0/options/0/alias', 'error'],
    ]);
    expect(diagnostics[1]?.message).toMatch(/never passed to the command/);
  });

  it('R5.3: items on a non-array argument are refused', () => {
    const [d] = diagnosticsFor(
      toolWithLeaf({ options: [{ name: 'x', type: 'string', items: { type: 'string' } }] }),
    );
    expect(d).toMatchObject({ pointer: '/subcommand/0/options/0/items' });
  });

  it('R5.3: a default that does not match the type is refused', async () => {
    const d = await onlyDiagnostic('default-type-mismatch.json');
    expect(d.pointer).toBe('/subcommand/0/options/0/default');
    expect(d.message).toBe('the default "ten" is not of type integer');
  });

  it('R5.3: a default outside the enum is refused', async () => {
    const d = await onlyDiagnostic('default-not-in-enum.json');
    expect(d.pointer).toBe('/subcommand/0/options/0/default');
    expect(d.message).toBe('the default "full" is not one of the enum values');
  });

  it.each([
    [{ type: 'number', default: 'x' }, 'the default "x" is not of type number'],
    [{ type: 'integer', default: 1.5 }, 'the default 1.5 is not of type integer'],
    [{ type: 'boolean', default: 'true' }, 'the default "true" is not of type boolean'],
    [{ type: 'array', items: { type: 'string' }, default: 'a' }, 'the default must be an array'],
    [
      { type: 'array', items: { type: 'string' }, default: ['a', 1] },
      'the default ["a",1] is not of type array',
    ],
    [
      { type: 'array', items: { type: 'string', enum: ['a'] }, default: ['b'] },
      'the default "b" is not one of the enum values',
    ],
  ])('R5.3: default %j is refused', (argument, message) => {
    const diagnostics = diagnosticsFor(toolWithLeaf({ options: [{ name: 'x', ...argument }] }));
    expect(diagnostics.map((d) => [d.pointer, d.message])).toEqual([
      ['/subcommand/0/options/0/default', message],
    ]);
  });

  it('R5.3: enum values must match the argument type', () => {
    const [d] = diagnosticsFor(
      toolWithLeaf({ options: [{ name: 'level', type: 'integer', enum: [1, 'two'] }] }),
    );
    expect(d?.pointer).toBe('/subcommand/0/options/0/enum/1');
    expect(d?.message).toMatch(/^"two" is not an? integer$/);
  });

  it('R5.3: file_flag without file_arg is refused', async () => {
    const d = await onlyDiagnostic('file-flag-without-file-arg.json');
    expect(d.pointer).toBe('/subcommand/0/options/0/file_flag');
    expect(d.message).toBe('file_flag only applies with "file_arg": true');
  });

  it('R5.3: file_arg on a non-string argument and a boolean positional are refused', () => {
    const diagnostics = diagnosticsFor(
      toolWithLeaf({
        options: [{ name: 'n', type: 'integer', file_arg: true }],
        positional_args: [{ name: 'on', type: 'boolean' }],
      }),
    );
    expect(diagnostics.map((d) => d.pointer)).toEqual([
      '/subcommand/0/options/0/file_arg',
      '/subcommand/0/positional_args/0/type',
    ]);
  });

  it('R5.3: options on a branch subcommand are refused (they would be ignored)', async () => {
    const d = await onlyDiagnostic('options-on-branch-subcommand.json');
    expect(d.pointer).toBe('/subcommand/0/options');
    expect(d.message).toBe('"options" on a subcommand that has nested subcommands is never used');
    expect(d.hint).toBe('move it to the leaf subcommands');
  });
});
