// One-shot CLI (R8.9, R9): `ahma-shell --tool_name TOOL --tool_args JSON [-- WORDS…]` runs one tool
// synchronously in the sandbox, prints its output and exits with the command's exit code.
import type { Logger } from 'pino';
import type { ServerOptions } from './options.js';
import { createServer } from './server.js';

export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Exit codes for outcomes that have no exit code of their own (as timeout(1) and shells do). */
const TIMED_OUT_EXIT = 124;
const CANCELLED_EXIT = 130;
const USAGE_EXIT = 2;

export async function runOneShot(
  options: ServerOptions,
  logger: Logger,
  output: Output,
): Promise<number> {
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
  const ahma = await createServer(
    { ...options, sync: true, noShellPool: true, noHotReload: true },
    logger,
  );
  try {
    const entry = ahma.tools.find((candidate) => candidate.tool.name === options.toolName);
    if (entry === undefined) {
      output.stderr(
        `ahma-shell: no tool "${String(options.toolName)}"; tools: ${ahma.tools.map((t) => t.tool.name).join(', ')}\n`,
      );
      return USAGE_EXIT;
    }
    const result = await entry.call(
      { ...entry.fromWords(options.rawArgs), ...(args as Record<string, unknown>) },
      { signal: new AbortController().signal, progress: undefined },
    );
    const structured = result.structuredContent as
      { output?: string; exit_code?: number | null; status?: string } | undefined;
    if (structured?.output === undefined) {
      // Not a command's result: a built-in's answer (status, activate_tools), or a refusal before
      // anything ran (bad arguments, a path outside the scope).
      const text = result.content.flatMap((part) =>
        part.type === 'text' ? [`${part.text}\n`] : [],
      );
      if (result.isError !== true) {
        output.stdout(text.join(''));
        return 0;
      }
      for (const line of text) output.stderr(line);
      return USAGE_EXIT;
    }
    output.stdout(structured.output);
    if (structured.status === 'timed_out') return TIMED_OUT_EXIT;
    if (structured.status === 'cancelled') return CANCELLED_EXIT;
    return structured.exit_code ?? 1;
  } finally {
    await ahma.close();
  }
}
