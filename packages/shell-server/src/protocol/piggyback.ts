// R2.7: results the model cannot lose. A completion pushed as notifications/message reaches the
// client, but today's clients route it to a log or the person, not into the model's context; only
// a tool result does. So every operation of a connection whose call was answered `started`, once
// finished and not yet handed to the model (by `await`, `status`, or the result of the call that
// ran it), is prepended — once — to the next result of any tool on that connection: a header
// with how it ended, the last lines of its output (bounded), and how to read the rest. The push
// stays for the clients that do show it.
import type { OperationSnapshot } from '@ahma/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { commandResult } from '../calls/results.js';

/** The most of an operation's output a piggybacked result carries (its last characters). */
export const PIGGYBACK_TAIL_CHARS = 1500;
/** Results carried by one tool result at most; the others wait for the next one. */
const MAX_CARRIED = 5;

export class Piggyback {
  /** Finished, answered `started`, not yet handed to the model: in the order they finished. */
  readonly #waiting = new Map<string, OperationSnapshot>();

  /** An operation answered `started` finished: its result waits for the next tool result. */
  finished(snapshot: OperationSnapshot): void {
    this.#waiting.set(snapshot.id, snapshot);
  }

  /** How many results wait. */
  get size(): number {
    return this.#waiting.size;
  }

  /**
   * `result` with the waiting results before it, each handed over once; the operations whose
   * finished result `result` itself carries (a command's, `await`'s, `status`'s) count as handed
   * over and are not repeated.
   */
  carry(result: CallToolResult): CallToolResult {
    for (const id of finishedIn(result)) this.#waiting.delete(id);
    if (this.#waiting.size === 0) return result;
    const carried = [...this.#waiting.values()].slice(0, MAX_CARRIED);
    for (const snapshot of carried) this.#waiting.delete(snapshot.id);
    const more =
      this.#waiting.size === 0
        ? ''
        : `\n(${String(this.#waiting.size)} more finished; they come with your next call, or call \`await\`.)`;
    const text = `[ahma] Finished since your last call:\n\n${carried.map(describe).join('\n\n')}${more}\n\n[ahma] The result of this call follows.`;
    return { ...result, content: [{ type: 'text', text }, ...result.content] };
  }

  /** The connection ended. */
  clear(): void {
    this.#waiting.clear();
  }
}

/** One finished operation as the model reads it: how it ended, its last lines, where the rest is. */
function describe(snapshot: OperationSnapshot): string {
  const result = commandResult(snapshot);
  if (result.status === 'running' || result.status === 'queued') {
    return `${snapshot.id} (${snapshot.tool}) is ${result.status}`;
  }
  const how =
    result.status === 'completed' || result.status === 'failed'
      ? `exit code ${String(result.exit_code)}`
      : result.status === 'timed_out'
        ? 'timed out'
        : 'cancelled';
  const seconds = (result.duration_ms / 1000).toFixed(1);
  const header = `${result.operation_id} (${result.tool}) ${result.status}, ${how}, ${seconds} s.`;
  const output = result.output.trimEnd();
  if (output === '') return `${header} No output.`;
  const cut = output.length > PIGGYBACK_TAIL_CHARS;
  const tail = cut ? output.slice(output.length - PIGGYBACK_TAIL_CHARS) : output;
  const lines = cut ? tail.slice(tail.indexOf('\n') + 1) : tail;
  return cut
    ? `${header} Its last lines (the whole output: \`output\` with id "${result.operation_id}"; the whole result: \`await\` with ids ["${result.operation_id}"]):\n${lines}`
    : `${header} Output:\n${lines}`;
}

const FINISHED: ReadonlySet<string> = new Set(['completed', 'failed', 'timed_out', 'cancelled']);

/** The operations whose finished result a tool result carries (structuredContent). */
function finishedIn(result: CallToolResult): string[] {
  const content = result.structuredContent;
  if (content === undefined) return [];
  const entries = Array.isArray(content['operations'])
    ? (content['operations'] as unknown[])
    : [content];
  return entries.flatMap((entry) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { operation_id: id, status } = entry as { operation_id?: unknown; status?: unknown };
    return typeof id === 'string' && typeof status === 'string' && FINISHED.has(status) ? [id] : [];
  });
}
