// A CONNECT tunnel's relay both ways (R7.17). The upstream's bytes go to the client as they come
// (protocols where the server speaks first work); the client's pass the relay guard first, which
// holds back the start of a line until it knows it asks no proxy for another destination. Each
// side's end is passed on, and when one side closes the other is ended and then destroyed, so no
// socket outlives its tunnel.
import type { Socket } from 'node:net';
import { RelayGuard, type RelayMatch } from './relay-guard.js';

/** How long a closing side may take to flush what it was given before it is destroyed. */
const LINGER_MS = 10_000;

/** Ends `socket` and destroys it once what it was given is flushed (or after LINGER_MS). */
export function endThenDestroy(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableFinished) {
    socket.destroy();
    return;
  }
  socket.once('finish', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
  if (!socket.writableEnded) socket.end();
}

/**
 * Relays between `client` and `upstream`, both connected, `head` being what the client sent after
 * its CONNECT. When the guard finds a relay request, `onRelay` is called (it answers the client
 * and ends it) and the upstream is destroyed without a byte of that request.
 */
export function relayTunnel(
  client: Socket,
  upstream: Socket,
  head: Buffer,
  onRelay: (match: RelayMatch) => void,
): void {
  const guard = new RelayGuard();
  let refused = false;

  const refuse = (match: RelayMatch) => {
    refused = true;
    client.pause();
    upstream.unpipe(client);
    upstream.destroy();
    onRelay(match);
  };
  const fromClient = (chunk: Buffer) => {
    if (refused) return;
    const verdict = guard.feed(chunk);
    if ('relay' in verdict) return refuse(verdict.relay);
    if (verdict.forward.length > 0 && !upstream.write(verdict.forward)) client.pause();
  };

  upstream.on('drain', () => {
    if (!refused) client.resume();
  });
  client.on('data', fromClient);
  client.on('end', () => {
    if (refused) return;
    const verdict = guard.end();
    if ('relay' in verdict) return refuse(verdict.relay);
    upstream.end(verdict.forward);
  });
  upstream.pipe(client);

  client.on('close', (hadError) => (hadError ? upstream.destroy() : endThenDestroy(upstream)));
  upstream.on('close', (hadError) => {
    if (refused) return;
    if (hadError) client.destroy();
    else endThenDestroy(client);
  });

  if (head.length > 0) fromClient(head);
  if (!refused) client.resume();
}
