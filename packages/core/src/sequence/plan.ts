// A sequence tool's call turned into step plans (SPEC §9, R6.2, R10.3–R10.5): each step's tool found
// by name; its arguments are the caller's non-meta arguments that tool takes, overridden by the
// step's own `args`; every step runs in the caller's working directory (resolved per step, never
// passed as a command-line argument). A step that calls another sequence is expanded in place.
import { prepareInvocation } from '../argv/prepare.js';
import { resolveWorkingDirectory } from '../argv/paths.js';
import { resolveStep } from '../definition/definition-set.js';
import type { ToolLeaf } from '../definition/flatten.js';
import { isMetaParameter, type ArgumentValidator } from '../definition/input-schema.js';
import type { LoadedTool } from '../definition/load.js';
import { SHELL_TOOL_NAME } from '../definition/reserved.js';
import { AhmaError } from '../errors.js';
import type { StepPlan } from './run-sequence.js';

export interface PlanContext {
  /** The tools a step may call, by name (the enabled, available ones). */
  readonly tools: ReadonlyMap<string, LoadedTool>;
  readonly validator: ArgumentValidator;
  /** The sandbox scope (a real path). */
  readonly scope: string;
  /** Where file_arg temp files go (the engine's private directory); default the temp dir. */
  readonly tempRoot?: string;
  /** A step's timeout when its tool declares none (the server's --timeout), in seconds. */
  readonly defaultTimeoutSeconds: number;
}

/** Nested sequences deeper than this are refused (cycles are refused when the files are loaded). */
const MAX_DEPTH = 8;

/**
 * The steps of `leaf`'s sequence for a call with `args`, every step checked up front (its
 * arguments against its tool's schema, then prepared once as its turn will prepare it: the working
 * directory, its path arguments against the scope, its argv): a bad step is refused before any step
 * runs. Each step is prepared again when its turn comes (an earlier step may have changed the
 * tree). Throws an AhmaError naming the step.
 */
export async function planSequence(
  leaf: ToolLeaf,
  args: Readonly<Record<string, unknown>>,
  context: PlanContext,
): Promise<StepPlan[]> {
  const workingDirectory =
    typeof args['working_directory'] === 'string' ? args['working_directory'] : undefined;
  // Checked once first, so a bad working directory is reported as the call's, not a step's.
  await resolveWorkingDirectory(workingDirectory, context.scope);
  const callerArgs = Object.fromEntries(
    Object.entries(args).filter(([name]) => !isMetaParameter(name)),
  );
  const steps = expand(leaf, callerArgs, workingDirectory, context, '', 0);
  for (const step of steps) {
    // The real preparation, not a second copy of its rules, so the check cannot drift from it.
    const prepared = await step.plan.prepare().catch((error: unknown) => {
      throw error instanceof AhmaError
        ? new AhmaError(error.code, `${step.where}: ${error.message}`)
        : error;
    });
    await prepared.cleanup();
  }
  return steps.map((step) => step.plan);
}

/** A planned step and how errors name it. */
interface Planned {
  readonly plan: StepPlan;
  readonly where: string;
}

function expand(
  leaf: ToolLeaf,
  callerArgs: Readonly<Record<string, unknown>>,
  workingDirectory: string | undefined,
  context: PlanContext,
  prefix: string,
  depth: number,
): Planned[] {
  if (depth > MAX_DEPTH) {
    throw new AhmaError('SEQUENCE_INVALID', `${leaf.name}: sequences nest too deeply`);
  }
  return (leaf.sequence ?? []).flatMap((step, index) => {
    const resolution = resolveStep(
      step,
      [...context.tools.values()].map((tool) => tool.leaf),
    );
    const target = resolution.name;
    const where = `${leaf.name} step ${String(index + 1)} (${target})`;
    const label = `${prefix}${target}${step.description === undefined ? '' : ` — ${step.description}`}`;
    const stepArgs = step.args ?? {};

    if (target === SHELL_TOOL_NAME) {
      const script = stepArgs['command'] ?? callerArgs['command'];
      if (typeof script !== 'string' || script === '') {
        throw new AhmaError('SEQUENCE_INVALID', `${where}: needs a "command" string`);
      }
      return [
        {
          plan: shellStep(label, script, workingDirectory, context),
          where,
        },
      ];
    }

    if (resolution.kind === 'ambiguous') {
      // Refused when the files load; kept here so a step never picks one of two tools by chance.
      throw new AhmaError(
        'SEQUENCE_INVALID',
        `${where}: the step matches more than one tool (${resolution.names.join(', ')})`,
      );
    }
    const tool = context.tools.get(target);
    if (tool === undefined) {
      throw new AhmaError(
        'SEQUENCE_INVALID',
        `${where}: the tool ${target} is not available (disabled, or its availability check failed)`,
      );
    }
    const accepted = new Set([...tool.leaf.options, ...tool.leaf.positionals].map((p) => p.name));
    const merged: Record<string, unknown> = {
      ...Object.fromEntries(Object.entries(callerArgs).filter(([name]) => accepted.has(name))),
      ...stepArgs,
    };
    // A nested sequence's arguments are checked against its own schema too.
    const errors = context.validator.validate(tool.inputSchema, merged);
    if (errors.length > 0) {
      throw new AhmaError(
        'SEQUENCE_INVALID',
        `${where}: ${errors.map((error) => error.message).join('; ')}`,
      );
    }
    if (tool.leaf.livelog !== undefined) {
      // A monitor never ends on its own; the definition check refuses this, a reload may not have.
      throw new AhmaError(
        'SEQUENCE_INVALID',
        `${where}: ${target} is a livelog tool, which runs until cancelled`,
      );
    }
    if (tool.leaf.sequence !== undefined) {
      return expand(tool.leaf, merged, workingDirectory, context, `${label} › `, depth + 1);
    }
    const withDirectory =
      workingDirectory === undefined ? merged : { ...merged, working_directory: workingDirectory };
    return [
      {
        where,
        plan: {
          label,
          async prepare() {
            const prepared = await prepareInvocation(tool.leaf, withDirectory, {
              scope: context.scope,
              ...(context.tempRoot === undefined ? {} : { tempRoot: context.tempRoot }),
            });
            return {
              command: { kind: 'argv', argv: prepared.argv },
              argv: prepared.argv,
              cwd: prepared.cwd,
              timeoutMs: (prepared.timeoutSeconds ?? context.defaultTimeoutSeconds) * 1000,
              cleanup: () => prepared.cleanup(),
            };
          },
        },
      },
    ];
  });
}

function shellStep(
  label: string,
  script: string,
  workingDirectory: string | undefined,
  context: PlanContext,
): StepPlan {
  return {
    label,
    async prepare() {
      return {
        command: { kind: 'shell', script },
        argv: ['bash', '-c', script],
        cwd: await resolveWorkingDirectory(workingDirectory, context.scope),
        timeoutMs: context.defaultTimeoutSeconds * 1000,
        cleanup: () => Promise.resolve(),
      };
    },
  };
}
