// A request body read whole, up to a limit: more is refused (413) as soon as it arrives, so a
// client cannot make the server hold more than the limit. We read it ourselves, before routing,
// because the route depends on it (an initialize opens a session) and because the SDK skips its
// own size check for a body handed to it already parsed. The bytes are returned as they came: they
// become text in exchange.ts, by the same fatal UTF-8 decoding as a stdio line (jsonrpc/incoming.ts).
import type { IncomingMessage } from 'node:http';

/** The largest request body accepted (the SDK transport's own default). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export type Body =
  | { readonly kind: 'read'; readonly bytes: Buffer }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'aborted' };

export function readBody(req: IncomingMessage, limit: number = MAX_BODY_BYTES): Promise<Body> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.resolve({ kind: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (body: Body) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading: the answer closes the connection (the rest of the body is never read).
        req.pause();
        done({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done({ kind: 'read', bytes: Buffer.concat(chunks) });
    const onAbort = () => done({ kind: 'aborted' });
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
