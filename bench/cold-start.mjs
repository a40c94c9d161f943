#!/usr/bin/env node
// Cold start of this checkout's ahma-shell against another's: spawn → initialize → tools/list over
// stdio, the two builds alternated, and the CPU the server process (all its threads) used by the
// time tools/list was answered, from /proc/<pid>/stat. Extra arguments go to both servers.
// --bare adds the bare SDK server (bench/bare-server.mjs) to the round, the floor issue 31 measures
// a cold start against. --http starts the servers with `--mode http --http-port 0 --http-no-auth`
// instead: spawn → the URL on stderr → initialize, notifications/initialized and tools/list POSTed.
//
//   node bench/cold-start.mjs OTHER_CHECKOUT [--n 12] [--bare | --http] [-- --tools git,file-tools]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from './stats.mjs';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash === -1 ? argv : argv.slice(0, dash);
const extra = dash === -1 ? [] : argv.slice(dash + 1);
const other = own.find((arg) => !arg.startsWith('--'));
if (other === undefined) {
  process.stderr.write('usage: node bench/cold-start.mjs OTHER_CHECKOUT [--n 12] [-- ARGS…]\n');
  process.exit(2);
}
const n = Number(own[own.indexOf('--n') + 1] ?? 12) || 12;
const here = join(fileURLToPath(import.meta.url), '..', '..');
const http = own.includes('--http');
const mode = http ? ['--mode', 'http', '--http-port', '0', '--http-no-auth'] : ['--mode', 'stdio'];
const ahma = (bin) => [bin, ...mode, ...extra];
const builds = {
  other: ahma(join(resolve(other), 'packages', 'shell-server', 'bin', 'ahma-shell.js')),
  this: ahma(join(here, 'packages', 'shell-server', 'bin', 'ahma-shell.js')),
  ...(own.includes('--bare') && !http ? { bare: [join(here, 'bench', 'bare-server.mjs')] } : {}),
};
// A scope of its own, under /var/tmp: Ahma refuses to start when its code lies where commands
// can write, and a checkout under /tmp would.
const scope = mkdtempSync(join('/var/tmp', 'ahma-cold-'));
const ticksMs = 1000 / 100; // USER_HZ on Linux

const messages = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'cold-start', version: '1' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
];

/** Over stdio: the messages written at once, until the tools/list answer is read. */
function listedOverStdio(child) {
  let output = '';
  const listed = new Promise((done) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('"id":2')) done();
    });
  });
  for (const message of messages) child.stdin.write(`${JSON.stringify(message)}\n`);
  return listed;
}

/** Over HTTP: once the URL is on stderr, each message POSTed in turn in the session it opens. */
async function listedOverHttp(child) {
  let stderr = '';
  const url = await new Promise((done) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(stderr);
      if (found !== null) done(found[1]);
    });
  });
  let session;
  for (const message of messages) {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        ...(session === undefined ? {} : { 'mcp-session-id': session }),
      },
      body: JSON.stringify(message),
    });
    session ??= response.headers.get('mcp-session-id') ?? undefined;
    await response.text();
  }
}

/** One start: ms to the tools/list answer, and the server's CPU ms by then. */
async function once(args) {
  const bin = args[0];
  const started = performance.now();
  const tmp = mkdtempSync(join(tmpdir(), 'ahma-cold-tmp-'));
  const child = spawn(process.execPath, args, {
    cwd: scope,
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['pipe', 'pipe', http ? 'pipe' : 'ignore'],
  });
  const exitedEarly = new Promise((_, fail) =>
    child.on('exit', (code) =>
      fail(new Error(`${bin} exited (${String(code)}) before tools/list`)),
    ),
  );
  await Promise.race([http ? listedOverHttp(child) : listedOverStdio(child), exitedEarly]);
  const ms = performance.now() - started;
  const stat = readFileSync(`/proc/${String(child.pid)}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuMs = (Number(fields[11]) + Number(fields[12])) * ticksMs;
  const exited = new Promise((done) => child.on('exit', done));
  if (http) child.kill('SIGTERM');
  else child.stdin.end();
  await exited;
  rmSync(tmp, { recursive: true, force: true });
  return { ms, cpuMs };
}

const results = Object.fromEntries(Object.keys(builds).map((name) => [name, []]));
for (let round = 0; round < n; round += 1) {
  const names = Object.keys(builds);
  for (const name of round % 2 === 0 ? names : names.reverse()) {
    results[name].push(await once(builds[name]));
  }
}
const rows = Object.entries(results).map(([name, runs]) => ({
  name: name === 'other' ? resolve(other) : name === 'bare' ? 'bare SDK server' : 'this',
  ms: summarize(runs.map((run) => run.ms)).p50,
  cpu: summarize(runs.map((run) => run.cpuMs)).p50,
}));
process.stdout.write(
  `# cold start (spawn → initialize → tools/list${http ? ', over HTTP' : ''}), ${String(n)} each, alternated${extra.length > 0 ? `, ${extra.join(' ')}` : ''}\n\n` +
    '| build | p50 ms | server CPU ms (p50) |\n| --- | ---: | ---: |\n' +
    rows.map((row) => `| ${row.name} | ${row.ms.toFixed(0)} | ${row.cpu.toFixed(0)} |`).join('\n') +
    `\n\nthis/other: ${(rows[1].ms / rows[0].ms).toFixed(2)}× wall, ${(rows[1].cpu / rows[0].cpu).toFixed(2)}× CPU\n` +
    (rows[2] === undefined
      ? ''
      : `this/bare: ${(rows[1].ms / rows[2].ms).toFixed(2)}× wall, ${(rows[1].cpu / rows[2].cpu).toFixed(2)}× CPU\n`),
);
rmSync(scope, { recursive: true, force: true });
