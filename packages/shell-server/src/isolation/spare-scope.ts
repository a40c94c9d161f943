// How a spare process learns its scope (R8D.3). An isolated session's process can be started
// ahead, before any client has named its root: `ahma-shell --mode stdio … --scope-from-stdin`
// loads its code and waits. The session that takes it writes one line to its stdin, the scope as
// JSON, before any MCP message; the process then starts exactly as with `--sandbox-scope <scope>`
// in that directory. Only the HTTP server that started it holds its stdin.
import type { Readable } from 'node:stream';

/** The word, in place of `--sandbox-scope <scope>`, that makes ahma-shell wait for its scope. */
export const SCOPE_FROM_STDIN = '--scope-from-stdin';

/** The most the scope's line may hold: a path, as JSON. */
const MAX_LINE_BYTES = 64 * 1024;

/** The line (without its newline) that gives a spare its scope. */
export function scopeLine(scope: string): string {
  return JSON.stringify({ scope });
}

/**
 * The scope in the first line of `input`; what follows the line stays in the stream for the MCP
 * transport. Undefined when the input ends first (the server stopped the spare); rejects a line
 * that is not a scope.
 */
export function readScopeLine(input: Readable): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (done: () => void) => {
      input.off('readable', onReadable);
      input.off('end', onEnd);
      input.off('error', onError);
      done();
    };
    const onEnd = () => finish(() => resolve(undefined));
    const onError = (error: Error) => finish(() => reject(error));
    // 'readable' and read(), not 'data': the stream stays paused, so nothing after the line is
    // emitted before the transport listens (it resumes the stream once the listener is gone).
    const onReadable = () => {
      for (let chunk = input.read() as Buffer | null; chunk !== null; chunk = input.read()) {
        const end = chunk.indexOf(10);
        if (end >= 0) {
          const rest = chunk.subarray(end + 1);
          if (rest.length > 0) input.unshift(rest);
          const line = Buffer.concat([...chunks, chunk.subarray(0, end)]).toString('utf8');
          const scope = parsedScope(line);
          finish(() =>
            scope === undefined
              ? reject(new Error(`not a scope line: ${line.slice(0, 200)}`))
              : resolve(scope),
          );
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
        if (size > MAX_LINE_BYTES) {
          finish(() => reject(new Error('the scope line is too long')));
          return;
        }
      }
    };
    input.on('readable', onReadable);
    input.once('end', onEnd);
    input.once('error', onError);
  });
}

function parsedScope(line: string): string | undefined {
  try {
    const parsed = JSON.parse(line) as unknown;
    const scope =
      typeof parsed === 'object' && parsed !== null && 'scope' in parsed ? parsed.scope : undefined;
    return typeof scope === 'string' && scope !== '' ? scope : undefined;
  } catch {
    return undefined;
  }
}
