// A stdio server that cannot start (no sandbox here, a scope it refuses, code inside the scope, a
// state directory it cannot use) must not just exit: the client would show only "Failed to
// connect". So it stays long enough to answer the client's requests — `initialize` first — with a
// JSON-RPC error whose message is the cause and the fix on one line, then exits. The whole message
// was printed on stderr before (the client's log has it too).
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { RpcCode } from '../../jsonrpc/codes.js';
import type { Refusal } from '../../jsonrpc/refusal.js';

/** How long the server waits for a request to answer before it gives up and exits. */
const ANSWER_WITHIN_MS = 30_000;

/** The message as one line (the client shows it in a dialog), bounded. */
export function oneLine(message: string): string {
  const flat = message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
  return flat.length <= 1000 ? flat : `${flat.slice(0, 999)}…`;
}

/**
 * Answers every request read from `input` with the refused start (its rpcCode, else
 * RpcCode.Refused; its Ahma code in `data`, else START_FAILED) until `input` ends, the first
 * answer has been followed by a quiet second, or nothing came within ANSWER_WITHIN_MS. Resolves
 * then.
 */
export function answerWithRefusal(
  refused: Refusal,
  input: Readable = process.stdin,
  output: Writable = process.stdout,
): Promise<void> {
  const { message } = refused;
  const error = {
    code: refused.rpcCode ?? RpcCode.Refused,
    message: `ahma-shell cannot start: ${oneLine(message)}`,
    data: { code: refused.code ?? 'START_FAILED', details: message },
  };
  return new Promise((resolve) => {
    const lines = createInterface({ input, crlfDelay: Infinity });
    let timer = setTimeout(finish, ANSWER_WITHIN_MS);
    function finish() {
      clearTimeout(timer);
      lines.close();
      resolve();
    }
    lines.on('line', (line) => {
      let request: unknown;
      try {
        request = JSON.parse(line);
      } catch {
        return;
      }
      const id = (request as { id?: unknown } | null)?.id;
      // Notifications (no id) get no answer; a request does, whatever it asks.
      if (typeof id !== 'string' && typeof id !== 'number') return;
      output.write(`${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`);
      clearTimeout(timer);
      timer = setTimeout(finish, 1000);
    });
    lines.once('close', finish);
  });
}
