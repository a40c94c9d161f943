// Server processes the benchmarks start, and how an HTTP client of ahma-shell authenticates.
//
// `ahma-shell --mode http` requires a bearer token by default (loopback included). Without
// --http-token-file or AHMA_HTTP_TOKEN it makes one in its private state and says where on stderr,
// right after its `listening on` line:
//   ahma-shell: clients must send "Authorization: Bearer <token>"; the token is in /path/http-token
// (or "the token is AHMA_HTTP_TOKEN's value"). startAhmaHttp reads that line and returns the
// headers every Streamable HTTP client must send (StreamableHTTPClientTransport's
// `requestInit: { headers }`); a build without authentication prints no such line, and its
// clients send no header.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const started = [];
// An HTTP server does not end when its parent does: whatever way the script ends, none is left.
process.on('exit', () => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * Starts a server process and waits until its stderr matches `ready`. Resolves with the child, the
 * match and `output()` (its stderr so far, still collected), or with `refused` (its exit code and
 * stderr) if it exits first.
 */
export function startProcess(command, commandArgs, { cwd, env }, ready) {
  const child = spawn(command, commandArgs, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in 30 s: ${stderr}`)), 30_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => {
      if (stderr.length < 65536) stderr += text;
      const match = ready.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        ready = /$^/; // matched once; keep draining stderr
        resolve({ child, match, output: () => stderr });
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ refused: { code, signal, stderr } });
    });
  });
}

/** Ends a server process: SIGTERM, SIGKILL after 5 s. */
export async function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

const TOKEN_LINE =
  /clients must send "Authorization: Bearer <token>"; the token is (?:in (.+)|(AHMA_HTTP_TOKEN)'s value)$/m;
const NO_AUTH_LINE = /WARNING: --http-no-auth/;

/**
 * The headers a client of this server sends: `Authorization: Bearer <token>` when the server
 * named its token after its `listening on` line (both lines are written in the same turn; a build
 * without authentication writes none, so after `waitMs` with neither line: no header).
 */
export async function authHeaders(output, { env = process.env, waitMs = 1000 } = {}) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const text = output();
    const line = TOKEN_LINE.exec(text);
    if (line !== null) {
      const token =
        line[2] !== undefined ? env.AHMA_HTTP_TOKEN.trim() : readFileSync(line[1], 'utf8').trim();
      return { authorization: `Bearer ${token}` };
    }
    if (NO_AUTH_LINE.test(text) || Date.now() >= deadline) return {};
    await sleep(10);
  }
}

/**
 * Starts `node ...nodeArgs` (ahma-shell.js's path, then its options: --mode http, --http-port 0,
 * …) and waits until it listens. Resolves with { child, url, headers } (headers: what every
 * request must carry), or with { refused } if the server exits first (e.g. a build that does not
 * know a flag).
 */
export async function startAhmaHttp(nodeArgs, { cwd, env }) {
  const outcome = await startProcess(
    process.execPath,
    nodeArgs,
    { cwd, env },
    /listening on (http:\/\/\S+\/mcp)/,
  );
  if (outcome.refused !== undefined) return outcome;
  const headers = await authHeaders(outcome.output, { env });
  return { child: outcome.child, url: outcome.match[1], headers };
}
