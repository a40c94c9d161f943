// Red team, Ahma's own HTTP endpoint (R8.11, R8D.15, docs/security.md "The HTTP control plane"):
// the server listens on a loopback port that every local process can reach — a sandboxed command
// included, and other users. It must not hand out what the sandbox refuses. Run through the BUILT
// binary, as root and as an ordinary user:
// - finding 1: a command of an isolated session opens a session rooted outside its scope (another
//   directory, /etc) and tries to write there: without the token (401), through the server's token
//   file (unreadable: private state, R7.10), with a leaked token, with a token given in the
//   server's environment;
// - finding 2: another local user connecting without the token gets 401;
// - finding 4: a root of file:///proc/self (the server's own /proc entry) is refused, and the
//   server's oom_score_adj is untouched;
// - finding 5: a command's flood of initialize requests does not end a session that made a
//   request a moment ago (with the token required, the flood gets 401s; without, 503s);
// - finding 6: with isolation a flood gets at most 16 session processes, then 503s;
// - finding 8: one containment check: a directory named `..x` in the scope is inside it;
// - the spare session process (isolation/spare.ts): its stdin, files, cwd and root cannot be
//   reached through /proc, nor can it be stopped, from a session's command.
import { execFile } from 'node:child_process';
import { copyFile, chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  asIdentity,
  blockedWith,
  eachIdentity,
  EXPLOITS_DIR,
  NOBODY,
  quote,
  redTeamFile,
  Seat,
  structured,
  treeState,
  type CommandResult,
  type HttpServerProcess,
  type Identity,
  verdictLine,
  verdicts,
} from './harness.js';
import { cwdOf, descendantsOf, waitFor } from '../support/harness.js';
import { SCOPE_FROM_STDIN } from '../../src/isolation/spare-scope.js';
import { INITIALIZE } from '../support/http.js';

const run = promisify(execFile);
const file = redTeamFile(['proc-fd', 'signal']);

/** The attacker's MCP client, copied where every identity can read it. */
async function attackScript(): Promise<string> {
  const path = join(file.runDir().dir, 'bin', 'open-session.mjs');
  await copyFile(join(EXPLOITS_DIR, 'open-session.mjs'), path);
  await chmod(path, 0o644);
  return path;
}

/** A legitimate client: an SDK Client whose first root is the seat's scope, with the token. */
async function connect(server: HttpServerProcess, root: string): Promise<Client> {
  const client = new Client(
    { name: 'ahma-red-team', version: '1.0.0' },
    { capabilities: { roots: {} } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(root).href }],
  }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${server.token ?? ''}` } },
    }),
  );
  return client;
}

eachIdentity('as $name', (identity) => {
  let seat: Seat | undefined;
  let server: HttpServerProcess | undefined;
  let client: Client | undefined;
  let script = '';
  let nodePath = '';

  beforeAll(async () => {
    if (identity.skip !== undefined) return;
    seat = await Seat.create(identity, file.runDir());
    script = await attackScript();
    nodePath = (await seat.runtime()).node;
    server = await seat.httpServer(['--session-isolation', '--sync']);
    client = await connect(server, seat.scope);
  }, 60_000);
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await server?.close();
    await seat?.dispose();
  }, 60_000);

  /** Runs a script in the legitimate session (its sandboxed_shell, confined to the scope). */
  const sh = async (command: string): Promise<CommandResult> =>
    structured<CommandResult>(
      (await client?.callTool(
        { name: 'sandboxed_shell', arguments: { command, timeout_seconds: 60 } },
        undefined,
        { timeout: 90_000 },
      )) as CallToolResult,
    );

  /** The server's token, leaked into the scope (commands cannot read the server's file). */
  const leakToken = async (): Promise<string> =>
    (seat as Seat).write(
      join((seat as Seat).scope, 'leaked-token'),
      `${server?.token ?? ''}\n`,
      0o600,
    );

  /** The attack, from inside the sandbox: open a session rooted at `root` and write there. */
  const attack = async (token: string, root: string, write: string) =>
    (await sh([nodePath, script, server?.url ?? '', token, root, write].map(quote).join(' ')))
      .output;

  it.skipIf(identity.skip !== undefined)(
    'R8D.3, R7.6: the spare session process waits for a scope on its stdin: a command cannot write there (or to its other files, cwd or root) through /proc, nor stop it',
    async () => {
      const s = seat as Seat;
      // The session served first: it takes the spare there is when it locks its scope.
      await sh('true');
      // The spare no session took: started with the word, still in / (a taken one is in its scope).
      const spare = await waitFor(async () => {
        for (const info of await descendantsOf(server?.pid ?? 0)) {
          if (!info.cmdline.endsWith(SCOPE_FROM_STDIN)) continue;
          if ((await cwdOf(info.pid)) === '/') {
            return info.pid;
          }
        }
        return undefined;
      }, 'the spare process');
      const before = await treeState(s.outside);
      const files = await sh(s.x('proc-fd', `spare=${String(spare)}`, s.outside));
      for (const kind of ['fd', 'cwd', 'root']) {
        expect(verdictLine(files.output, `${kind}-spare`)).toMatch(
          blockedWith(`${kind}-spare`, ['EACCES', 'EPERM', 'ENOENT']),
        );
      }
      const signals = await sh(s.x('signal', 'STOP', `spare=${String(spare)}`));
      expect(verdicts(files.output + signals.output).filter((v) => v.kind === 'ESCAPED')).toEqual(
        [],
      );
      expect(await treeState(s.outside)).toEqual(before);
      // Still waiting, unstopped, with no scope.
      expect(await cwdOf(spare)).toBe('/');
      const state = (await readFile(`/proc/${String(spare)}/stat`, 'utf8')).split(') ')[1]?.[0];
      expect(state).not.toBe('T');
    },
  );

  it.skipIf(identity.skip !== undefined)(
    "R8D.15, R7.10: a command cannot open a session rooted outside its scope: not without the token (401), not through the server's token file (unreadable), not with a leaked token",
    async () => {
      const s = seat as Seat;
      const before = await treeState(s.outside);
      const write = `echo pwned > ${quote(join(s.outside, 'pwned'))}`;
      const root = pathToFileURL(s.outside).href;
      expect(verdictLine(await attack('-', root, write), 'session')).toBe(
        'session: blocked: HTTP 401',
      );
      // R7.10: the server's token file is private state, which commands cannot read.
      expect(verdictLine(await attack(server?.tokenFile ?? '', root, write), 'session')).toBe(
        'session: blocked: the token file cannot be read (EACCES)',
      );
      // Leaked anyway (copied into the project, say): the session is refused for its root.
      const leaked = await leakToken();
      const withToken = verdictLine(await attack(leaked, root, write), 'session');
      expect(withToken).toMatch(/^session: blocked: .*lies outside every allowed root/);
      expect(withToken).toContain('--allowed-roots');
      const etc = verdictLine(
        await attack(leaked, 'file:///etc', 'touch /etc/ahma-red-team-pwned'),
        'session',
      );
      expect(etc).toMatch(/^session: blocked: .*\(\/etc\) lies outside every allowed root/);
      expect(await treeState(s.outside)).toEqual(before);
      await expect(readFile('/etc/ahma-red-team-pwned')).rejects.toThrow(/ENOENT/);
    },
    120_000,
  );

  it.skipIf(identity.skip !== undefined)(
    "R8D.15: a root of file:///proc/self is refused: the server's own /proc entry (oom_score_adj) is untouched",
    async () => {
      const adj = `/proc/${String(server?.pid)}/oom_score_adj`;
      const before = await readFile(adj, 'utf8');
      const leaked = await leakToken();
      for (const root of ['file:///proc/self', `file:///proc/${String(server?.pid)}`]) {
        const verdict = verdictLine(
          await attack(leaked, root, 'echo 1000 > oom_score_adj'),
          'session',
        );
        expect(verdict).toMatch(/^session: blocked: .*lies on the kernel's proc file system/);
      }
      expect(await readFile(adj, 'utf8')).toBe(before);
    },
    120_000,
  );

  it.skipIf(identity.skip !== undefined)(
    'R8.11: the server took its token from its environment: commands do not see it, and a command that had it still cannot root a session outside',
    async () => {
      const s = seat as Seat;
      const token = `env-token-${String(Date.now())}`;
      const fromEnv = await s.httpServer(['--session-isolation', '--sync'], s.scope, {
        AHMA_HTTP_TOKEN: token,
      });
      try {
        expect(fromEnv.stderr()).toContain("the token is AHMA_HTTP_TOKEN's value");
        const envClient = await connect({ ...fromEnv, token }, s.scope);
        try {
          const seen = structured<CommandResult>(
            (await envClient.callTool({
              name: 'sandboxed_shell',
              arguments: { command: 'env; cat /proc/self/environ | tr "\\0" "\\n"' },
            })) as CallToolResult,
          );
          expect(seen.output).not.toContain(token);
          // Leaked anyway (say, copied into the project): the root is what stops it.
          const leaked = join(s.scope, 'leaked-token');
          await s.write(leaked, `${token}\n`, 0o600);
          const verdict = (await envClient.callTool({
            name: 'sandboxed_shell',
            arguments: {
              command: [
                nodePath,
                script,
                fromEnv.url,
                leaked,
                pathToFileURL(s.outside).href,
                'touch pwned',
              ]
                .map(quote)
                .join(' '),
            },
          })) as CallToolResult;
          expect(verdictLine(structured<CommandResult>(verdict).output, 'session')).toMatch(
            /^session: blocked: .*lies outside every allowed root/,
          );
        } finally {
          await envClient.close();
        }
      } finally {
        await fromEnv.close();
      }
    },
    120_000,
  );

  it.skipIf(identity.skip !== undefined || process.getuid?.() !== 0)(
    'R8.11: another local user connecting without the token gets 401, and cannot read the token file',
    async () => {
      // The other user: nobody for a root server, root (this process) for nobody's.
      const other: Identity =
        identity.name === 'root'
          ? { name: 'user', uid: NOBODY, gid: NOBODY, switchUser: true, skip: undefined }
          : { name: 'root', uid: 0, gid: 0, switchUser: false, skip: undefined };
      const otherNode = other.switchUser
        ? (await file.runDir().mirror(other)).node
        : process.execPath;
      const attempt = asIdentity(other, otherNode, [
        script,
        server?.url ?? '',
        '-',
        pathToFileURL(seat?.scope ?? '').href,
        'echo in',
      ]);
      const { stdout } = await run(attempt.command, attempt.args, { cwd: '/' });
      expect(verdictLine(stdout, 'session')).toBe('session: blocked: HTTP 401');
      if (other.switchUser) {
        const read = asIdentity(other, '/bin/cat', [server?.tokenFile ?? '']);
        await expect(run(read.command, read.args)).rejects.toThrow(/Permission denied/);
      }
    },
    60_000,
  );

  /** A bash loop POSTing `n` initializes to `url` (with `token` unless '-'): the statuses, counted. */
  const floodScript = (url: string, n: number, token = '-') => {
    const body = JSON.stringify(INITIALIZE);
    const auth = token === '-' ? '' : `-H ${quote(`authorization: Bearer ${token}`)}`;
    return (
      `for i in $(seq ${String(n)}); do curl -s -o /dev/null -w '%{http_code}\n' -X POST ` +
      `-H 'content-type: application/json' -H 'accept: application/json' ${auth} ` +
      `-d ${quote(body)} ${quote(url)}; done | sort | uniq -c`
    );
  };
  /** How many times the flood got `status` ("  99 200" lines of uniq -c). */
  const got = (output: string, status: number) =>
    Number(new RegExp(`^\\s*(\\d+) ${String(status)}$`, 'm').exec(output)?.[1] ?? 0);

  it.skipIf(identity.skip !== undefined)(
    'R8.4: a command flooding the server with initialize requests cannot end a session that made a request a moment ago: 401 with the token required, 503 past the cap without',
    async () => {
      const s = seat as Seat;
      // With the token required (the default): every one of them is refused.
      const refused = (await sh(floodScript(server?.url ?? '', 30))).output;
      expect(got(refused, 401), refused).toBe(30);
      // Without a token (--http-no-auth): a cap of 10, an idle session that made a request.
      const open = await s.httpServer(['--http-no-auth', '--max-sessions', '10', '--sync']);
      try {
        const victim = new Client({ name: 'victim', version: '1.0.0' });
        const flooder = new Client({ name: 'flooder', version: '1.0.0' });
        await victim.connect(new StreamableHTTPClientTransport(new URL(open.url)));
        await flooder.connect(new StreamableHTTPClientTransport(new URL(open.url)));
        try {
          await victim.listTools();
          const flood = structured<CommandResult>(
            (await flooder.callTool({
              name: 'sandboxed_shell',
              arguments: { command: floodScript(open.url, 100), timeout_seconds: 60 },
            })) as CallToolResult,
          ).output;
          expect(got(flood, 200), flood).toBe(8);
          expect(got(flood, 503), flood).toBe(92);
          // The victim's session is still there: its next request is answered.
          expect((await victim.listTools()).tools.length).toBeGreaterThan(0);
        } finally {
          await Promise.all([victim.close(), flooder.close()]);
        }
      } finally {
        await open.close();
      }
    },
    120_000,
  );

  it.skipIf(identity.skip !== undefined)(
    "R8.4: with isolation, a command's flood of sessions gets at most --max-sessions session processes, then 503s",
    async () => {
      const s = seat as Seat;
      // A cap of 4, not the default 16 (session-limits.test.ts pins that default): each session
      // is a process start, and four show the cap holding as well as sixteen, in a quarter the time.
      const open = await s.httpServer([
        '--http-no-auth',
        '--session-isolation',
        '--max-sessions',
        '4',
        '--sync',
      ]);
      const victim = await connect(open, s.scope);
      try {
        const flood = structured<CommandResult>(
          (await victim.callTool(
            {
              name: 'sandboxed_shell',
              arguments: { command: floodScript(open.url, 8), timeout_seconds: 90 },
            },
            undefined,
            { timeout: 120_000 },
          )) as CallToolResult,
        ).output;
        // The victim holds one of the 4 places.
        expect(got(flood, 200), flood).toBe(3);
        expect(got(flood, 503), flood).toBe(5);
        const sessions = (
          await readFile(`/proc/${String(open.pid)}/task/${String(open.pid)}/children`, 'utf8')
        )
          .trim()
          .split(/\s+/)
          .filter((pid) => pid !== '');
        expect(sessions.length).toBeLessThanOrEqual(4);
        expect((await victim.listTools()).tools.length).toBeGreaterThan(0);
      } finally {
        await victim.close();
        await open.close();
      }
    },
    180_000,
  );

  it.skipIf(identity.skip !== undefined)(
    'R7.1, R8D.15: one containment check: a session rooted at a directory named ..x in the scope is inside it and writes there',
    async () => {
      const s = seat as Seat;
      const dotted = await s.mkdir(join(s.scope, '..x'));
      const inside = await connect(server as HttpServerProcess, dotted);
      try {
        const result = structured<CommandResult>(
          (await inside.callTool({
            name: 'sandboxed_shell',
            arguments: { command: 'pwd; echo ok > written' },
          })) as CallToolResult,
        );
        expect(result.output).toBe(`${dotted}\n`);
        expect(await readFile(join(dotted, 'written'), 'utf8')).toBe('ok\n');
      } finally {
        await inside.close();
      }
    },
    60_000,
  );
});
