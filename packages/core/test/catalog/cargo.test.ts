// SPEC §9 (R6): cargo_qualitycheck is a synchronous subcommand-level sequence fmt --check → clippy →
// test → build. This checks the definition, the argv of each step, and (where cargo, clippy and
// rustfmt are installed) runs the sequence itself on a tiny crate with core's sequence runner.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentValidator, DocumentChecker, planSequence, runSequence } from '../../src/index.js';
import { checkDefinitionSet, stepTarget } from '../../src/definition/definition-set.js';
import { mergeGuidance } from '../../src/definition/guidance.js';
import { type ToolDefinition } from '../../src/definition/schema.js';
import {
  argvOf,
  CATALOG_DIR,
  catalog,
  catalogRunner,
  expectSuccess,
  installed,
  type Catalog,
  type CatalogRunner,
} from './helpers.js';

const STEPS = [
  ['cargo_fmt', ['cargo', 'fmt', '--all', '--check']],
  ['cargo_clippy', ['cargo', 'clippy', '--workspace', '--all-targets', '--', '-D', 'warnings']],
  ['cargo_test', ['cargo', 'test', '--workspace']],
  ['cargo_build', ['cargo', 'build', '--workspace']],
] as const;

let loaded: Catalog;
beforeAll(async () => {
  loaded = await catalog(['cargo']);
});

function qualitycheck() {
  return loaded.tool('cargo_qualitycheck').leaf;
}

describe('cargo_qualitycheck', () => {
  it('R6.1: is a subcommand-level sequence of cargo fmt → clippy → test → build', () => {
    const leaf = qualitycheck();
    expect(leaf.sequencePointer).toBe(`${leaf.pointer}/sequence`);
    expect(
      leaf.sequence?.map((step) =>
        stepTarget(
          step,
          loaded.tools.map((tool) => tool.leaf),
        ),
      ),
    ).toEqual(STEPS.map(([tool]) => tool));
    // It declares no parameters of its own: every step's arguments are fixed by the definition.
    expect([...leaf.options, ...leaf.positionals]).toEqual([]);
  });

  it('R6.3: is synchronous: one call returns the whole gate', () => {
    expect(qualitycheck().synchronous).toBe(true);
  });

  it('R6.1: each step runs the exact command line of the gate', async () => {
    const steps = qualitycheck().sequence ?? [];
    const argvs = await Promise.all(
      steps.map((step) =>
        argvOf(
          loaded.tool(
            stepTarget(
              step,
              loaded.tools.map((tool) => tool.leaf),
            ),
          ),
          step.args ?? {},
          CATALOG_DIR,
        ),
      ),
    );
    expect(argvs).toEqual(STEPS.map(([, argv]) => argv));
  });

  it('R6.2: the steps are checked against cargo: a step argument the tool lacks rejects the file', () => {
    const definition = JSON.parse(
      readFileSync(join(CATALOG_DIR, 'cargo.json'), 'utf8'),
    ) as ToolDefinition;
    const check = (document: ToolDefinition) => {
      const result = new DocumentChecker().checkDefinition('cargo.json', JSON.stringify(document));
      if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
      return checkDefinitionSet(
        [{ file: 'cargo.json', definition: result.definition, leaves: result.leaves }],
        mergeGuidance(undefined),
      );
    };
    expect(check(definition).diagnostics).toEqual([]);

    // Without fmt's "check" option, the first step would reformat instead of checking.
    const fmt = definition.subcommand?.find((sub) => sub.name === 'fmt');
    if (fmt === undefined) throw new Error('cargo.json has no fmt subcommand');
    fmt.options = fmt.options?.filter((option) => option.name !== 'check');
    const broken = check(definition);
    expect(broken.accepted).toEqual([]);
    expect(broken.diagnostics.map((d) => [d.pointer, d.message])).toEqual([
      [expect.stringMatching(/\/sequence\/0\/args\/check$/), '"cargo_fmt" has no argument "check"'],
    ]);
  });
});

const cargoReady =
  installed('cargo') &&
  installed('cargo', ['clippy', '--version']) &&
  installed('cargo', ['fmt', '--version']);

describe.skipIf(!cargoReady)(
  'the gate on a real crate (cargo, clippy and rustfmt installed)',
  () => {
    let runner: CatalogRunner;
    beforeAll(async () => {
      runner = await catalogRunner(loaded);
      expectSuccess(await runner.call('cargo_new', { path: 'demo', vcs: 'none', name: 'demo' }));
    }, 120_000);
    afterAll(async () => {
      await runner.dispose();
    });

    /** Runs cargo_qualitycheck as the server does; the exit codes of the steps that ran. */
    async function runGate(): Promise<(number | null)[]> {
      const plans = await planSequence(
        qualitycheck(),
        { working_directory: 'demo' },
        {
          tools: new Map(loaded.tools.map((tool) => [tool.name, tool])),
          validator: new ArgumentValidator(),
          scope: runner.scope,
          defaultTimeoutSeconds: 300,
        },
      );
      const result = await runSequence(plans, {
        executor: runner.fixture.engine.executor,
        delayMs: 0,
        timeoutMs: undefined,
        signal: new AbortController().signal,
        logName: `qualitycheck-${String(Date.now())}`,
      });
      const ran = (result.steps ?? []).filter((step) => step.status !== 'not_run');
      return ran.map((step) => step.exitCode);
    }

    it('R6.2: a clean crate passes every step, in the sandbox', async () => {
      expect(await runGate()).toEqual([0, 0, 0, 0]);
    }, 300_000);

    it('R6.2: badly formatted code stops the gate at the first step', async () => {
      await writeFile(join(runner.scope, 'demo', 'src', 'main.rs'), 'fn main(){println!("hi");}\n');
      expect(await runGate()).toEqual([1]);
    }, 300_000);

    it('R6.2: a Clippy warning fails the clippy step: -D warnings reaches the linter', async () => {
      // needless_return is a warn-level lint: it fails the gate only through "-- -D warnings".
      await writeFile(
        join(runner.scope, 'demo', 'src', 'main.rs'),
        'fn answer() -> i32 {\n    return 42;\n}\n\nfn main() {\n    let a = answer();\n    println!("{a}");\n}\n',
      );
      const codes = await runGate();
      expect(codes).toHaveLength(2);
      expect(codes[0]).toBe(0);
      expect(codes[1]).not.toBe(0);
      const lenient = await runner.call('cargo_clippy', { working_directory: 'demo' });
      expect(expectSuccess(lenient)).toContain('needless_return');
    }, 300_000);
  },
);
