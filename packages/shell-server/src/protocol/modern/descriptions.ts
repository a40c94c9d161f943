// Tool descriptions for 2026-07-28 clients. The built-in guidance of asynchronous tools tells the
// agent its result is pushed as a log message; that era has no pushes, so the block says how the
// result comes instead (a task, or the call kept open). A livelog tool's says its alerts are pushed
// as they come: here it says they cannot reach the client, and that the call answers at once (a
// monitor is never kept open). A tools directory's own guidance (tool_guidance.json) is its
// author's word and stays as written.
import { ASYNC_GUIDANCE_KEY, DEFAULT_GUIDANCE } from '@ahma/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { HOW_ALERTS_ARRIVE, NO_ALERTS_WITHOUT_PUSHES } from '../../tools/livelog.js';

const PUSH_GUIDANCE = DEFAULT_GUIDANCE[ASYNC_GUIDANCE_KEY] ?? '';

export const TASK_GUIDANCE =
  "Runs in the background: a command that finishes within the server's inline wait (a few seconds by default) answers with its result (exit code and output) right away; a longer one becomes a task whose result your client fetches when it finishes (a client without task support keeps the call open, with progress, until then). Continue with other work meanwhile; `await` with the operation_id (the task id) blocks until it finishes, `status` checks, `cancel` stops it.";

const described = new WeakMap<Tool, Tool>();

/** `tool` as 2026-07-28 clients see it (the same object when nothing changes). */
export function forModernEra(tool: Tool): Tool {
  const { description } = tool;
  if (description === undefined) return tool;
  const monitor = description.includes(HOW_ALERTS_ARRIVE);
  const pushes = PUSH_GUIDANCE !== '' && description.includes(PUSH_GUIDANCE);
  if (!monitor && !pushes) return tool;
  let modern = described.get(tool);
  if (modern === undefined) {
    modern = {
      ...tool,
      description: monitor
        ? // The monitor's own text says how its call answers here: the general block would not.
          description
            .replace(`${PUSH_GUIDANCE}\n\n`, '')
            .replace(HOW_ALERTS_ARRIVE, NO_ALERTS_WITHOUT_PUSHES)
        : description.replace(PUSH_GUIDANCE, TASK_GUIDANCE),
    };
    described.set(tool, modern);
  }
  return modern;
}
