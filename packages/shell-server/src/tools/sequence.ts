// A sequence tool (SPEC §9): one operation that runs the steps one after another; the result is
// their transcript. Every step's arguments are checked before the first one runs, and every step
// that runs gets its own audit line.
import {
  callLane,
  callMaxOutputTokens,
  commandArgv,
  planSequence,
  runSequence,
  type LoadedTool,
  type StepRecord,
} from '@ahma/core';
import { audit } from '../calls/audit.js';
import { LastLine } from '../calls/last-line.js';
import { inLane, laneCall, waitingTwin } from '../calls/lane.js';
import { blocks, runOperation, type CallContext } from '../calls/operation-runner.js';
import { isRefusal, refusing, type ToolContext, type ToolOutcome } from './tool.js';

export async function runSequenceTool(
  context: ToolContext,
  loaded: LoadedTool,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<ToolOutcome> {
  const { engine } = context;
  const plans = await refusing(() =>
    planSequence(loaded.leaf, args, {
      tools: context.definitionTools(),
      validator: context.validator,
      scope: engine.sandbox.scope,
      tempRoot: engine.state.argsDir,
      defaultTimeoutSeconds: context.defaultTimeoutSeconds,
    }),
  );
  if (isRefusal(plans)) return plans;
  // The sequence's own limit: per call > the leaf's (inherited) > --timeout.
  const timeout = args['timeout_seconds'];
  const timeoutSeconds =
    typeof timeout === 'number'
      ? timeout
      : (loaded.leaf.timeoutSeconds ?? context.defaultTimeoutSeconds);
  const auditLog = { logger: context.logger, scope: engine.sandbox.scope };
  // The running step's last line, for the heartbeats of a call kept open.
  const output = new LastLine();
  const blocking = blocks(context.forceSync, loaded.leaf.synchronous, args);
  // One turn at the workspace for the whole sequence: its steps build on each other.
  const chosen = await refusing(() => callLane(loaded.name, loaded.leaf.lane, args));
  if (isRefusal(chosen)) return chosen;
  const lane = laneCall(engine, chosen, engine.sandbox.scope, [call.owner, loaded.name, args]);
  const twin = await waitingTwin(engine, lane, blocking, call.signal);
  if (twin !== undefined) return { kind: 'operation', snapshot: twin };
  const snapshot = await runOperation(
    context,
    loaded.name,
    blocking,
    inLane(engine, lane, (signal, id) =>
      runSequence(plans, {
        executor: engine.executor,
        delayMs: loaded.leaf.stepDelayMs,
        timeoutMs: timeoutSeconds * 1000,
        signal,
        logName: id,
        onOutput: (chunk) => output.push(chunk),
        caller: { tool: loaded.name, owner: call.owner },
        maxOutputTokens: callMaxOutputTokens(args),
        readOnly: lane.lane === 'read_only',
        onStep: (step: StepRecord) =>
          audit(auditLog, {
            operation: id,
            tool: `${loaded.name} › ${step.label}`,
            argv: step.command === undefined ? step.argv : commandArgv(step.command),
            cwd: step.cwd ?? '',
            result: {
              status:
                step.status === 'refused' || step.status === 'not_run' ? 'failed' : step.status,
              exitCode: step.exitCode,
              signal: null,
              durationMs: step.durationMs,
            },
          }),
      }),
    ),
    call,
    () => output.line,
  );
  return { kind: 'operation', snapshot };
}
