// R6.1–R6.3 (SPEC §9): sequence definitions, step resolution and step checks.
import { describe, expect, it } from 'vitest';
import { stepTarget } from '../../src/definition/definition-set.js';
import { validateToolFiles } from '../../src/definition/validate-files.js';
import { checkDocuments, diagnosticsFor, fixture, leavesOf, onlyDiagnostic } from './helpers.js';

/** A library of plain tools a sequence can call. */
const cargo = {
  name: 'cargo',
  description: 'Rust build tool.',
  command: 'cargo',
  subcommand: [
    { name: 'build', description: 'Build.', options: [{ name: 'release', type: 'boolean' }] },
    {
      name: 'fmt',
      description: 'Format.',
      subcommand: [
        { name: 'default', description: 'Format everything.' },
        { name: 'check', description: 'Check formatting.' },
      ],
    },
    {
      name: 'nextest',
      description: 'Tests.',
      subcommand: [{ name: 'run', description: 'Run the tests.' }],
    },
  ],
};

function sequenceTool(
  steps: unknown[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name: 'pipeline',
    description: 'Steps.',
    command: 'sequence',
    sequence: steps,
    ...extra,
  };
}

describe('step targets', () => {
  it.each([
    [{ tool: 'cargo', subcommand: 'build' }, 'cargo_build'],
    [{ tool: 'cargo_fmt', subcommand: 'default' }, 'cargo_fmt'],
    [{ tool: 'cargo', subcommand: 'fmt' }, 'cargo_fmt'],
    [{ tool: 'cargo', subcommand: 'fmt_default' }, 'cargo_fmt'],
    [{ tool: 'cargo', subcommand: 'nextest_run' }, 'cargo_nextest_run'],
    [{ tool: 'cargo_nextest_run' }, 'cargo_nextest_run'],
    [{ tool: 'sandboxed_shell' }, 'sandboxed_shell'],
  ])('R6.1: step %j calls %s', (step, target) => {
    expect(stepTarget(step, leavesOf(cargo))).toBe(target);
  });

  it('R6.1: steps resolve both {tool:"cargo",subcommand:"build"} and {tool:"cargo_fmt",subcommand:"default"}', () => {
    const outcome = checkDocuments({
      'cargo.json': cargo,
      'pipeline.json': sequenceTool([
        { tool: 'cargo', subcommand: 'build', args: { release: true } },
        { tool: 'cargo_fmt', subcommand: 'default' },
        { tool: 'cargo', subcommand: 'nextest_run' },
      ]),
    });
    expect(outcome.diagnostics).toEqual([]);
    expect(outcome.accepted.map((entry) => entry.definition.name)).toEqual(['cargo', 'pipeline']);
  });

  it('R6.1: sandboxed_shell is a valid step tool taking "command"', () => {
    expect(
      diagnosticsFor(sequenceTool([{ tool: 'sandboxed_shell', args: { command: 'ls -la' } }])),
    ).toEqual([]);
  });

  it('R6.1: the valid fixtures hold a subcommand-level and a top-level sequence that both resolve', async () => {
    const report = await validateToolFiles([fixture('valid')]);
    expect(report.files.flatMap((f) => f.diagnostics)).toEqual([]);
  });
});

describe('step checks', () => {
  it('R6.2: a step naming a tool nobody defines is refused', async () => {
    const d = await onlyDiagnostic('sequence-missing-tool.json');
    expect(d.pointer).toBe('/sequence/0/tool');
    expect(d.message).toBe('step calls "terraform_plan", which is not a defined, enabled tool');
    expect(d.hint).toBe('check "tool" and "subcommand"');
  });

  it('R6.2: a step naming a leaf its tool does not have is refused with a did-you-mean hint', async () => {
    const d = await onlyDiagnostic('sequence-missing-leaf.json');
    expect(d.pointer).toBe('/subcommand/1/sequence/0/tool');
    expect(d.message).toBe('step calls "seqleaf_biuld", which is not a defined, enabled tool');
    expect(d.hint).toBe('did you mean "seqleaf_build"?');
  });

  it('R6.2: a step naming a branch rather than a leaf is refused', () => {
    const outcome = checkDocuments({
      'cargo.json': cargo,
      'p.json': sequenceTool([{ tool: 'cargo', subcommand: 'nextest' }]),
    });
    expect(outcome.diagnostics.map((d) => [d.file, d.pointer])).toEqual([
      ['p.json', '/sequence/0/tool'],
    ]);
  });

  it('R6.2: a step calling a disabled tool is refused', () => {
    const disabled = { ...cargo, enabled: false };
    const outcome = checkDocuments({
      'cargo.json': disabled,
      'p.json': sequenceTool([{ tool: 'cargo', subcommand: 'build' }]),
    });
    expect(outcome.diagnostics.map((d) => d.message)).toEqual([
      'step calls "cargo_build", which is not a defined, enabled tool',
    ]);
  });

  it('R6.2: a sequence whose step calls itself is refused as a cycle', async () => {
    const d = await onlyDiagnostic('sequence-cycle.json');
    expect(d.pointer).toBe('/sequence/0/tool');
    expect(d.message).toBe(
      'step calls "seqloop", which leads back to this sequence (seqloop → seqloop)',
    );
  });

  it('R6.2: a cycle through two sequences is refused on both', () => {
    const diagnostics = diagnosticsFor({
      name: 'loop',
      description: 'd',
      command: 'make',
      subcommand: [
        { name: 'a', description: 'a', sequence: [{ tool: 'loop', subcommand: 'b' }] },
        { name: 'b', description: 'b', sequence: [{ tool: 'loop_a' }] },
      ],
    });
    expect(diagnostics.map((d) => [d.pointer, d.message])).toEqual([
      [
        '/subcommand/0/sequence/0/tool',
        'step calls "loop_b", which leads back to this sequence (loop_a → loop_b → loop_a)',
      ],
      [
        '/subcommand/1/sequence/0/tool',
        'step calls "loop_a", which leads back to this sequence (loop_b → loop_a → loop_b)',
      ],
    ]);
  });

  it('R6.2: a cycle across two files is refused', () => {
    const outcome = checkDocuments({
      'one.json': {
        name: 'one',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'two' }],
      },
      'two.json': {
        name: 'two',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'one' }],
      },
    });
    expect(outcome.accepted).toEqual([]);
    expect(outcome.diagnostics.map((d) => [d.file, d.pointer])).toEqual([
      ['one.json', '/sequence/0/tool'],
      ['two.json', '/sequence/0/tool'],
    ]);
  });

  it('R6.2: a sequence calling another sequence is fine without a cycle', () => {
    const outcome = checkDocuments({
      'cargo.json': cargo,
      'inner.json': {
        name: 'inner',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'cargo_build' }],
      },
      'outer.json': {
        name: 'outer',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'inner' }, { tool: 'inner' }],
      },
    });
    expect(outcome.diagnostics).toEqual([]);
  });

  it('R6.2: a step argument the called tool does not take is refused with a did-you-mean hint', async () => {
    const d = await onlyDiagnostic('sequence-unknown-step-arg.json');
    expect(d.pointer).toBe('/sequence/0/args/comand');
    expect(d.message).toBe('"sandboxed_shell" has no argument "comand"');
    expect(d.hint).toBe('did you mean "command"?');
  });

  it('R6.2: an unknown step argument lists what the tool takes; the pointer escapes "/" and "~"', () => {
    const outcome = checkDocuments({
      'cargo.json': cargo,
      'p.json': sequenceTool([{ tool: 'cargo', subcommand: 'build', args: { 'a/b~c': 1 } }]),
    });
    expect(outcome.diagnostics).toEqual([
      {
        file: 'p.json',
        pointer: '/sequence/0/args/a~1b~0c',
        message: '"cargo_build" has no argument "a/b~c"',
        hint: 'it takes: release',
        severity: 'error',
      },
    ]);
  });

  it("R6.2: a meta-parameter in step args is refused (steps run with the caller's)", () => {
    const [d] = diagnosticsFor(
      sequenceTool([{ tool: 'sandboxed_shell', args: { command: 'ls', working_directory: '/' } }]),
    );
    expect(d).toMatchObject({
      pointer: '/sequence/0/args/working_directory',
      hint: 'remove it from the step',
    });
  });

  it('R6.2: a file whose step calls a rejected file is rejected too', () => {
    const outcome = checkDocuments({
      'broken.json': {
        name: 'broken',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'nothing' }],
      },
      'caller.json': {
        name: 'caller',
        description: 'd',
        command: 'sequence',
        sequence: [{ tool: 'broken' }],
      },
    });
    expect(outcome.accepted).toEqual([]);
    expect(outcome.diagnostics.map((d) => d.file)).toEqual(['broken.json', 'caller.json']);
  });

  it('R6.1: a top-level sequence without "command": "sequence" is refused', async () => {
    const d = await onlyDiagnostic('top-level-sequence-without-sequence-command.json');
    expect(d.pointer).toBe('/sequence');
    expect(d.message).toBe('a top-level sequence needs "command": "sequence"');
    expect(d.hint).toBe('set "command" to "sequence", or move the steps into a subcommand');
  });

  it('R6.1: a sequence tool without steps, or with arguments after "sequence", is refused', () => {
    expect(diagnosticsFor({ name: 'empty', description: 'd', command: 'sequence' })).toEqual([
      {
        file: 'tool.json',
        pointer: '',
        message: 'a sequence tool needs "sequence" steps',
        hint: 'add a "sequence" array of steps',
        severity: 'error',
      },
    ]);
    const withArgs = diagnosticsFor(
      sequenceTool([{ tool: 'sandboxed_shell' }], { command: 'sequence --fast' }),
    );
    expect(withArgs.map((d) => d.pointer)).toContain('/command');
  });

  it('R10.3: a sequence parameter that no step takes is an error (its value would be dropped)', () => {
    const [d, ...rest] = diagnosticsFor(
      sequenceTool([{ tool: 'sandboxed_shell', args: { command: 'true' } }], {
        subcommand: [
          {
            name: 'run',
            description: 'Run the steps.',
            options: [
              { name: 'command', type: 'string' },
              { name: 'mgs', type: 'string' },
            ],
          },
        ],
      }),
    );
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      pointer: '/subcommand/0/options/1/name',
      message: 'no step of this sequence takes "mgs"; the agent\'s value would be dropped',
      severity: 'error',
    });
  });

  it('R6.1: a top-level sequence may be named by one leaf, not by two', () => {
    const leaf = (name: string) => ({
      name,
      description: 'Run the steps.',
      options: [{ name: 'command', type: 'string' }], // the step, sandboxed_shell, takes it
    });
    expect(
      diagnosticsFor(sequenceTool([{ tool: 'sandboxed_shell' }], { subcommand: [leaf('run')] })),
    ).toEqual([]);
    const [d] = diagnosticsFor(
      sequenceTool([{ tool: 'sandboxed_shell' }], { subcommand: [leaf('run'), leaf('go')] }),
    );
    expect(d).toMatchObject({
      pointer: '/subcommand',
      message: 'a top-level sequence can be named by one leaf only',
      severity: 'error',
    });
  });

  it('R6.1: every leaf of a sequence tool without a top-level sequence needs its own steps', () => {
    const [d, ...rest] = diagnosticsFor({
      name: 'multi',
      description: 'd',
      command: 'sequence',
      subcommand: [
        { name: 'a', description: 'a', sequence: [{ tool: 'sandboxed_shell' }] },
        { name: 'b', description: 'b' },
      ],
    });
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      pointer: '/subcommand/1',
      message: 'this leaf of a sequence tool has no steps',
      severity: 'error',
    });
  });

  it('R6.1, R5.2: step_delay_ms without a sequence is a warning (harmless, and in Rust ahma files)', () => {
    const outcome = checkDocuments({
      'tool.json': { name: 'x', description: 'd', command: 'x', step_delay_ms: 10 },
    });
    expect(outcome.diagnostics).toEqual([
      expect.objectContaining({
        pointer: '/step_delay_ms',
        hint: 'remove it',
        severity: 'warning',
      }),
    ]);
    expect(outcome.accepted).toHaveLength(1);
  });
});

describe('sequence tools', () => {
  it('R6.3: a top-level sequence without subcommands is one tool <name> running the steps', () => {
    const [leaf, ...rest] = leavesOf(
      sequenceTool([{ tool: 'sandboxed_shell' }], { step_delay_ms: 250 }),
    );
    expect(rest).toEqual([]);
    expect(leaf).toMatchObject({
      name: 'pipeline',
      command: [],
      synchronous: false,
      sequence: [{ tool: 'sandboxed_shell' }],
      sequencePointer: '/sequence',
      stepDelayMs: 250,
    });
  });

  it('R6.3: a top-level sequence named by a leaf is the tool <name>_<leaf> with its parameters', () => {
    const [leaf] = leavesOf(
      sequenceTool([{ tool: 'sandboxed_shell' }], {
        synchronous: true,
        subcommand: [
          { name: 'run', description: 'Run.', options: [{ name: 'release', type: 'boolean' }] },
        ],
      }),
    );
    expect(leaf).toMatchObject({
      name: 'pipeline_run',
      synchronous: true,
      sequencePointer: '/sequence',
    });
    expect(leaf?.options.map((o) => o.name)).toEqual(['release']);
  });

  it('R6.3: a subcommand-level sequence belongs to its leaf; the other leaves run the command', () => {
    const leaves = leavesOf({
      name: 'make',
      description: 'd',
      command: 'make -s',
      subcommand: [
        { name: 'build', description: 'b' },
        {
          name: 'all',
          description: 'a',
          step_delay_ms: 5,
          sequence: [{ tool: 'make', subcommand: 'build' }],
        },
      ],
    });
    expect(leaves.map((l) => [l.name, l.sequencePointer, l.stepDelayMs])).toEqual([
      ['make_build', undefined, 0],
      ['make_all', '/subcommand/1/sequence', 5],
    ]);
    expect(leaves[1]?.command).toEqual(['make', '-s']);
  });
});

describe("SPEC §2 compat: steps resolve against the called tool's real leaves", () => {
  /** `set` and `set_default` side by side: "default" inside a name is not a path word. */
  const cfg = {
    name: 'cfg',
    description: 'x',
    command: 'echo',
    subcommand: [
      { name: 'set', description: 's' },
      { name: 'set_default', description: 'd' },
    ],
  };
  const targetOf = (documents: Record<string, unknown>, name = 'seq') => {
    const outcome = checkDocuments(documents);
    expect(outcome.diagnostics).toEqual([]);
    const leaves = outcome.accepted.flatMap((entry) => entry.leaves);
    const sequence = leaves.find((leaf) => leaf.name === name)?.sequence ?? [];
    return sequence.map((step) => stepTarget(step, leaves));
  };

  it('SPEC §2 compat: a subcommand named "set_default" is called as written, not as its sibling "set"', () => {
    expect(
      targetOf({
        'cfg.json': cfg,
        'seq.json': {
          name: 'seq',
          description: 'x',
          command: 'sequence',
          sequence: [
            { tool: 'cfg', subcommand: 'set_default' },
            { tool: 'cfg', subcommand: 'set' },
            { tool: 'cfg_set_default' },
          ],
        },
      }),
    ).toEqual(['cfg_set_default', 'cfg_set', 'cfg_set_default']);
  });

  it('SPEC §2 compat: "default" collapses only as a whole declared path word', () => {
    // Without a set_default leaf, "set_default" names nothing: set has no "default" child.
    const outcome = checkDocuments({
      'cfg.json': { ...cfg, subcommand: [{ name: 'set', description: 's' }] },
      'seq.json': {
        name: 'seq',
        description: 'x',
        command: 'sequence',
        sequence: [{ tool: 'cfg', subcommand: 'set_default' }],
      },
    });
    expect(outcome.diagnostics.map((d) => [d.file, d.pointer, d.message])).toEqual([
      [
        'seq.json',
        '/sequence/0/tool',
        'step calls "cfg_set_default", which is not a defined, enabled tool',
      ],
    ]);
    // With a declared set → default leaf, "set_default" and "set" both call it.
    expect(
      targetOf({
        'cfg.json': {
          ...cfg,
          subcommand: [
            { name: 'set', description: 's', subcommand: [{ name: 'default', description: 'd' }] },
          ],
        },
        'seq.json': {
          name: 'seq',
          description: 'x',
          command: 'sequence',
          sequence: [
            { tool: 'cfg', subcommand: 'set_default' },
            { tool: 'cfg', subcommand: 'set' },
            { tool: 'cfg_set', subcommand: 'default' },
          ],
        },
      }),
    ).toEqual(['cfg_set', 'cfg_set', 'cfg_set']);
  });

  it('SPEC §2 compat: a step that matches two tools is refused, naming both', () => {
    // "x_a_a" + "a_a_y" overlaps by one word (x_a_a_a_y) and by two (x_a_a_y).
    const outcome = checkDocuments({
      'x.json': {
        name: 'x',
        description: 'x',
        command: 'echo',
        subcommand: [
          { name: 'a_a_y', description: 'one' },
          { name: 'a_a_a_y', description: 'two' },
        ],
      },
      'seq.json': {
        name: 'seq',
        description: 'x',
        command: 'sequence',
        sequence: [{ tool: 'x_a_a', subcommand: 'a_a_y' }],
      },
    });
    expect(outcome.diagnostics.map((d) => [d.file, d.pointer, d.message])).toEqual([
      [
        'seq.json',
        '/sequence/0/tool',
        'step matches more than one tool: "x_a_a_y" and "x_a_a_a_y"',
      ],
    ]);
  });
});
