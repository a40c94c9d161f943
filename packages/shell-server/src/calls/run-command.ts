// A prepared command as an operation: it runs in the sandbox under the engine's executor, its
// audit line records the argv that really ran, and what it needed (file arguments) is cleaned up.
import {
  commandArgv,
  type callInteractive,
  type Command,
  type Engine,
  type Lane,
  type NetworkMode,
  type OperationSnapshot,
} from '@ahma/core';
import type { Logger } from 'pino';
import { audit } from './audit.js';
import { LastLine } from './last-line.js';
import { askAboutRefusals } from './grants.js';
import { inLane, laneCall, waitingTwin } from './lane.js';
import { runOperation, type CallContext, type RunnerSettings } from './operation-runner.js';

/** A command ready to run: what, where, for how long, and what to clean up afterwards. */
export interface PreparedCommand {
  readonly command: Command;
  readonly cwd: string;
  /** The call's or the tool's limit; undefined: the server's default. */
  readonly timeoutSeconds: number | undefined;
  /** R7.15, R7.16: the tool file's network mode, when it asks for less than the server's. */
  readonly network?: NetworkMode | undefined;
  /** R15.2: the call's `max_output_tokens`; undefined: the server's (--max-output-tokens). */
  readonly maxOutputTokens?: number | undefined;
  /** R15.4: the call talks to the command while it runs (`pty`, `stdin: "open"`). */
  readonly interactive?: ReturnType<typeof callInteractive>;
  /** Its workspace lane (docs/tool-definitions.md, "Workspace lanes"); default `exclusive`. */
  readonly lane?: Lane | undefined;
  cleanup(): Promise<void>;
}

export interface CommandSettings extends RunnerSettings {
  readonly engine: Engine;
  readonly logger: Logger;
  /** --timeout, seconds. */
  readonly defaultTimeoutSeconds: number;
}

export async function runCommand(
  settings: CommandSettings,
  name: string,
  blocking: boolean,
  prepared: PreparedCommand,
  call: CallContext,
): Promise<OperationSnapshot> {
  const { engine } = settings;
  const timeoutSeconds = prepared.timeoutSeconds ?? settings.defaultTimeoutSeconds;
  const output = new LastLine();
  // R15.4: an interactive command waits for its input: the call never blocks on it, answers soon
  // (a quick one, like `tty`, still with its result), and is never kept open for it.
  const interactive = prepared.interactive !== undefined;
  // An interactive command waits for its person or agent: holding the workspace meanwhile would
  // stall every writer, so a writer runs beside them (the service lane); a read_only one stays
  // read_only.
  const declared = prepared.lane ?? 'exclusive';
  const lane = laneCall(
    engine,
    interactive && declared === 'exclusive' ? 'service' : declared,
    prepared.cwd,
    // One connection's copies only: another session's identical call is its own operation.
    [call.owner, name, commandArgv(prepared.command)],
  );
  const twin = await waitingTwin(engine, lane, blocking, call.signal);
  if (twin !== undefined) {
    await prepared.cleanup();
    return twin;
  }
  return runOperation(
    interactive
      ? { ...settings, inlineWaitMs: Math.min(settings.inlineWaitMs, INTERACTIVE_WAIT_MS) }
      : settings,
    name,
    blocking && !interactive,
    inLane(engine, lane, async (signal, id) => {
      try {
        const ran = await engine.executor.run({
          command: prepared.command,
          cwd: prepared.cwd,
          timeoutMs: timeoutSeconds * 1000,
          signal,
          logName: id,
          onOutput: (chunk) => output.push(chunk),
          caller: { tool: name, owner: call.owner },
          network: prepared.network,
          maxOutputTokens: prepared.maxOutputTokens,
          interactive: prepared.interactive,
          readOnly: lane.lane === 'read_only',
        });
        // R7.18: a host the proxy refused may be allowed by the person, if they can be asked.
        const result = await askAboutRefusals(ran, {
          engine,
          logger: settings.logger,
          tool: name,
          operationId: id,
          owner: call.owner,
          asker: call.asker,
        });
        audit(
          { logger: settings.logger, scope: engine.sandbox.scope },
          {
            operation: id,
            tool: name,
            argv: commandArgv(prepared.command),
            cwd: prepared.cwd,
            result,
          },
        );
        return result;
      } finally {
        await prepared.cleanup();
      }
    }),
    interactive ? { ...call, keepOpen: false } : call,
    () => output.line,
  );
}

/** How long an interactive call waits for its command before answering with its id. */
const INTERACTIVE_WAIT_MS = 1000;
