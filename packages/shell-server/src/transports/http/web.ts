// Between node:http and the web Request/Response the SDK's Streamable HTTP transport speaks: about
// what @hono/node-server does for the SDK's Node wrapper, without the dependency, and with two
// things that wrapper hides: our own Accept for the SDK (R8A) and the moment an answer's stream is
// handed back (before it is written), which the session needs to know when a GET stream is open.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A web Request for `req` (its body already read by us); `headers` replace the client's. `signal`
 * (clientGone in exchange.ts: the connection closed before the answer ended) becomes the Request's
 * own, which the 2026-07-28 handler takes as the request's cancellation; the 2025 transports are
 * given none, as their clients cancel with notifications/cancelled and a dropped stream is resumable.
 */
export function toWebRequest(
  req: IncomingMessage,
  url: URL,
  headers: Readonly<Record<string, string>> = {},
  signal?: AbortSignal,
): Request {
  const copied = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    copied.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  for (const [name, value] of Object.entries(headers)) copied.set(name, value);
  return new Request(url, {
    method: req.method ?? 'GET',
    headers: copied,
    ...(signal === undefined ? {} : { signal }),
  });
}

/**
 * Writes `response` to `res`, streaming its body as it comes (SSE); resolves when it is written or
 * the client went away, in which case the body is cancelled (the SDK then drops the stream).
 */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  // Headers at once: an SSE client waits for them before it counts the stream as open.
  res.flushHeaders();
  const reader = response.body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once('close', gone);
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        break;
      }
      if (res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
      }
    }
  } catch {
    // The body failed or was cancelled because the client left: nothing more to write.
  } finally {
    res.off('close', gone);
    if (!finished) gone(); // the client left (perhaps before we started): release the stream
    if (!res.destroyed) res.end();
  }
}
