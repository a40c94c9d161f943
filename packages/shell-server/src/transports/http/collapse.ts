// R8A for a client that wants one JSON body. The SDK transport chooses JSON or SSE once for all its
// requests (enableJsonResponse), never by Accept, and refuses (406) a POST whose Accept lacks either
// type. So the session's transport always streams, the SDK is always told the client accepts both,
// and when the client wanted JSON its SSE answer is read to the end here and collapsed into the one
// body the SDK's own JSON mode would have sent: the response, or an array of them for a batch.
// Notifications on that stream (progress of the call) are dropped, as in the SDK's JSON mode; the
// pushes that matter (completions, alerts) travel on the GET stream, not this one.
import { RpcCode } from '../../jsonrpc/codes.js';

/**
 * One JSON body in place of an SSE answer; other answers (202, errors) are returned unchanged.
 * `signal` (the client left) stops the reading and releases the stream.
 */
export async function collapseToJson(response: Response, signal: AbortSignal): Promise<Response> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream') || response.body === null) return response;
  const answers = responsesIn(await readAll(response.body, signal));
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json');
  for (const name of ['cache-control', 'connection', 'x-accel-buffering']) headers.delete(name);
  if (answers.length === 0) {
    // The stream ended before its answer: the session was ended (DELETE, shutdown) meanwhile.
    const error = {
      code: RpcCode.SessionNotFound,
      message: 'the session ended before the request was answered',
    };
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error }), {
      status: 404,
      headers,
    });
  }
  const body = answers.length === 1 ? answers[0] : answers;
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

async function readAll(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<string> {
  const reader = body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
  return text + decoder.decode();
}

/** The JSON-RPC responses (results and errors) among the `data:` of an SSE text. */
function responsesIn(text: string): unknown[] {
  const answers: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data.trim() === '') continue; // the priming event, a keep-alive comment
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      continue;
    }
    if (isResponse(message)) answers.push(message);
  }
  return answers;
}

function isResponse(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || 'method' in message) return false;
  return 'id' in message && ('result' in message || 'error' in message);
}
