// The MCP servers the listings are taken from, all real: server-everything (third party), the
// paginating SDK fixture, and ahma-shell; started over stdio by ahma-list-tools itself, or here
// over HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const pagedServer = fileURLToPath(new URL('../fixtures/paged-server.mjs', import.meta.url));
export const ahmaShell = fileURLToPath(
  new URL('../../../shell-server/bin/ahma-shell.js', import.meta.url),
);

/** server-everything's entry point, found through its package.json `bin`. */
export function everythingEntry(): string {
  const manifestPath = createRequire(import.meta.url).resolve(
    '@modelcontextprotocol/server-everything/package.json',
  );
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    bin: Record<string, string>;
  };
  const entry = manifest.bin['mcp-server-everything'];
  if (entry === undefined) throw new Error('server-everything has no mcp-server-everything bin');
  return join(dirname(manifestPath), entry);
}

/** A loopback port nothing listens on (free a moment ago). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a server process and resolves once `ready` matches its output; returns the match. */
export function startServer(
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match !== null) resolve({ child, match, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) =>
      reject(new Error(`server exited (${code}) before ready: ${output}`)),
    );
  });
}

export async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
