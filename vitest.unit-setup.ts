// The `unit` project's rule, enforced: a unit test starts no process and opens no server, so the
// edit loop (`pnpm test:unit`) stays fast and needs no build. A file that breaks the rule fails
// with a message saying where it belongs instead of silently slowing the loop down.
// (Which files are unit is declared in each package's vitest.config.ts; see vitest.shared.ts.)
import type * as ChildProcessModule from 'node:child_process';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type * as NetModule from 'node:net';
import { afterAll } from 'vitest';

// The modules' CommonJS exports objects, which (unlike their ESM namespaces) can be changed.
const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as typeof ChildProcessModule;
const net = require('node:net') as typeof NetModule;

/** What this file tried and was refused, even where the code caught the error. */
const refused: string[] = [];

function refuse(what: string): never {
  refused.push(what);
  throw new Error(`a unit test may not ${what}: ${MOVE_IT}`);
}

const MOVE_IT =
  "list this file under `system` or `e2e` in its package's vitest.config.ts, not `unit`";

// spawn, exec, execFile and fork all start their child through ChildProcess#spawn (not in Node's
// typings); the *Sync functions do not, so each is replaced on its own.
Object.assign(childProcess.ChildProcess.prototype, { spawn: () => refuse('start a process') });
for (const name of ['spawnSync', 'execSync', 'execFileSync'] as const) {
  Object.assign(childProcess, { [name]: () => refuse(`start a process (${name})`) });
}
// http, https and net servers all listen through net.Server#listen.
net.Server.prototype.listen = () => refuse('open a server');
// Named imports of node:child_process (`import { spawn } from …`) see the replacements too.
syncBuiltinESMExports();

// A refusal the code caught (a "is npm installed?" probe that turns into a skip) still fails the
// file.
afterAll(() => {
  if (refused.length > 0) {
    throw new Error(`this file tried to ${refused.join(', ')}: ${MOVE_IT}`);
  }
});
