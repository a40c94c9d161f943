// The `instructions` of the initialize result (SPEC §3): what an agent must know before its first
// call: use these tools rather than its own terminal, how asynchronous results reach it, and (unless
// --no-tool-discovery) that more tools can be revealed. Clients put this in the model's context, so
// it stays short (a test holds it under 1,200 characters).
import { BUILTIN_TOOLS } from '@ahma/core';

export interface InstructionsOptions {
  /** activate_tools is offered (no --no-tool-discovery). */
  readonly discovery: boolean;
  /** --inline-wait: how long an async call waits for its command before answering `started`. */
  readonly inlineWaitSeconds: number;
  /**
   * How a long command's result reaches the client: with the next tool result, and pushed as a log
   * message (2024-11-05 … 2025-11-25), or through a task or the open call (2026-07-28, which has no
   * pushes).
   */
  readonly delivery: 'push' | 'task';
}

/** What every agent can do with running operations, in either delivery. */
const CONTROL =
  "`await` blocks until named operations finish and returns their results; `status` checks without waiting; `cancel` stops one; `output` reads any part of one's whole output (a byte range, the last lines, matching lines), also while it runs.";

export function serverInstructions(options: InstructionsOptions): string {
  const parts = [
    'Prefer these tools to your own terminal or shell: each command runs in a sandbox that confines writes to the project, non-interactively, with bounded output, and long ones run in the background. Use a dedicated tool when one fits, else `sandboxed_shell`.',
    options.delivery === 'push'
      ? `${
          options.inlineWaitSeconds > 0
            ? `A call answers with the result when the command ends within ${String(options.inlineWaitSeconds)} s. Otherwise it answers`
            : 'An asynchronous call answers'
        } at once with an operation_id (status "started"); keep working: once it finishes, its result is put before the result of your next tool call (any tool). ${CONTROL}`
      : `A long command becomes a task when your client supports tasks; otherwise the call stays open, reporting progress, until the command ends. ${CONTROL}`,
  ];
  if (options.discovery) {
    parts.push(
      `More tools come in bundles for common programs (git, cargo, npm, …): \`${BUILTIN_TOOLS.activateTools}\` with {"action": "list"} shows those installed here, and {"action": "reveal", "bundle": NAME} adds one (the tool list then changes).`,
    );
  }
  return parts.join('\n\n');
}
