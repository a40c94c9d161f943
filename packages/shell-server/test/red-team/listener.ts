// A unix-socket listener OUTSIDE the sandbox, standing for a tmux server, an ssh-agent or the Docker
// daemon: it greets and counts every connection, so a test can tell that none got through.
import { randomBytes } from 'node:crypto';
import { chmod } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

export interface Listener {
  /** A pathname ("/…") or abstract ("@…") address, as the unix-connect exploit takes it. */
  readonly address: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

async function listen(address: string, onListening: () => Promise<void>): Promise<Listener> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.on('error', () => undefined); // the sandboxed peer may vanish first
    socket.end('hello-from-outside\n');
  });
  const path = address.startsWith('@') ? `\0${address.slice(1)}` : address;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  await onListening();
  return {
    address,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Listens on a pathname socket that anyone may connect to (so only the sandbox stops them). */
export function pathListener(path: string): Promise<Listener> {
  return listen(path, () => chmod(path, 0o666));
}

/** Listens on a fresh abstract socket (Linux). */
export function abstractListener(): Promise<Listener> {
  return listen(`@ahma-redteam-${randomBytes(6).toString('hex')}`, () => Promise.resolve());
}
