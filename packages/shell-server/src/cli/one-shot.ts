// One-shot CLI (R8.9, R9): `ahma-shell --tool_name TOOL --tool_args JSON [-- WORDS…]` runs one tool
// synchronously in the sandbox, prints its output and exits with the command's exit code. It calls
// the runtime's tools directly: no MCP connection, the same operation runner and audit.
import { createRuntime, type RuntimeSettings } from '../runtime/runtime.js';
import { toCallToolResult } from '../tools/tool.js';

export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Exit codes for outcomes that have no exit code of their own (as timeout(1) and shells do). */
const TIMED_OUT_EXIT = 124;
const CANCELLED_EXIT = 130;
const USAGE_EXIT = 2;

export async function runOneShot(settings: RuntimeSettings, output: Output): Promise<number> {
  const { options } = settings;
  let args: unknown = {};
  if (options.toolArgs !== undefined) {
    try {
      args = JSON.parse(options.toolArgs);
    } catch (error) {
      output.stderr(
        `ahma-shell: --tool_args is not valid JSON: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return USAGE_EXIT;
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      output.stderr('ahma-shell: --tool_args must be a JSON object\n');
      return USAGE_EXIT;
    }
  }
  const runtime = await createRuntime({
    ...settings,
    options: { ...options, sync: true, noShellPool: true, noHotReload: true },
  });
  try {
    // A remote's tools are known once its first connection is made: `--tool_name open_echo` finds
    // a remote that needs no login, however long its first connection takes (within its own
    // connect timeout; tools/list waits only briefly, a one-shot has nothing else to do).
    await runtime.remotesListed({ whole: true });
    const entry = runtime.tools.find((candidate) => candidate.tool.name === options.toolName);
    if (entry === undefined) {
      output.stderr(
        `ahma-shell: no tool "${String(options.toolName)}"; tools: ${runtime.tools.map((t) => t.tool.name).join(', ')}\n`,
      );
      return USAGE_EXIT;
    }
    const outcome = await entry.call(
      { ...entry.fromWords(options.rawArgs), ...(args as Record<string, unknown>) },
      { signal: new AbortController().signal, progress: undefined },
    );
    const result = outcome.kind === 'operation' ? outcome.snapshot.result : undefined;
    if (result === undefined) {
      // Not a command's result: a built-in's answer (status, activate_tools), or a refusal before
      // anything ran (bad arguments, a path outside the scope).
      const answer = toCallToolResult(outcome);
      const text = answer.content.flatMap((part) =>
        part.type === 'text' ? [`${part.text}\n`] : [],
      );
      if (answer.isError !== true) {
        output.stdout(text.join(''));
        return 0;
      }
      for (const line of text) output.stderr(line);
      return USAGE_EXIT;
    }
    output.stdout(result.output);
    if (result.status === 'timed_out') return TIMED_OUT_EXIT;
    if (result.status === 'cancelled') return CANCELLED_EXIT;
    return result.exitCode ?? 1;
  } finally {
    await runtime.close();
  }
}
