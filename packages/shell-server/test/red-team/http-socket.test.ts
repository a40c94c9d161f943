// Red team, `--http-socket` (R8.11): the unix socket serves the server's own uid without a token,
// so the kernel's word on who connected (SO_PEERCRED) must be the gate, not the socket's mode. The
// BUILT server runs as each identity; once it listens the test opens the socket to everyone
// (socket 0777, directory 0755, as a careless admin might), so the kernel lets any uid connect,
// and checks that a client of ANOTHER uid (root against the nobody server, nobody through setpriv
// against the root server) is refused by the peer check and logged (the log file), while a client of the
// server's own uid gets its initialize answered.
import { execFile } from 'node:child_process';
import { chmod, lstat, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  asIdentity,
  eachIdentity,
  IDENTITIES,
  redTeamFile,
  Seat,
  type HttpServerProcess,
  type Identity,
  waitFor,
} from './harness.js';
import { INITIALIZE } from '../support/http.js';

const file = redTeamFile([]);
const testIsRoot = process.getuid?.() === 0;

/** The raw initialize every client here sends. */
const INITIALIZE_BODY = JSON.stringify(INITIALIZE);

/** curl POSTing an initialize through the socket as `identity`: its status line and output. */
function initializeAs(
  identity: Identity,
  socket: string,
): Promise<{ status: string; output: string }> {
  const { command, args } = asIdentity(identity, 'curl', [
    '-sS',
    '--max-time',
    '15',
    '--unix-socket',
    socket,
    '-H',
    'content-type: application/json',
    '-H',
    'accept: application/json, text/event-stream',
    '--data-binary',
    INITIALIZE_BODY,
    '-w',
    '\nstatus=%{http_code}\n',
    'http://localhost/mcp',
  ]);
  return new Promise((resolve) => {
    // curl exits non-zero when the connection is reset: its output is the verdict either way.
    execFile(command, args, { timeout: 30_000 }, (_error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      resolve({ status: /status=(\d+)/.exec(output)?.[1] ?? 'none', output });
    });
  });
}

/** The lines of the server's log file (JSON, in $HOME/.cache/ahma/logs: the seat's HOME). */
async function logLines(seat: Seat): Promise<Record<string, unknown>[]> {
  const dir = join(seat.home, '.cache', 'ahma', 'logs');
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) =>
    name.endsWith('.log'),
  );
  const texts = await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')));
  return texts
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

eachIdentity('as $name', (identity) => {
  const other = IDENTITIES.find((each) => each.name !== identity.name);
  let seat: Seat | undefined;
  let server: HttpServerProcess | undefined;
  let socket = '';
  let modeAtStart = 0;

  beforeAll(async () => {
    if (identity.skip !== undefined) return;
    seat = await Seat.create(identity, file.runDir());
    socket = join(seat.base, 'sock', 'ahma.sock');
    server = await seat.httpServer(['--http-socket', socket]);
    modeAtStart = (await lstat(socket)).mode & 0o777;
    // Anyone may now connect as far as the kernel's permission checks go.
    await chmod(socket, 0o777);
    await chmod(dirname(socket), 0o755);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await seat?.dispose();
  }, 60_000);

  it.skipIf(identity.skip !== undefined)(
    "R8.11: a client of the server's own uid gets its initialize answered (200) through the socket, no token",
    async () => {
      expect(modeAtStart.toString(8)).toBe('600');
      const answer = await initializeAs(identity, socket);
      expect(answer.status, answer.output).toBe('200');
      expect(answer.output).toContain('"protocolVersion"');
    },
  );

  it.skipIf(
    identity.skip !== undefined || other === undefined || other.skip !== undefined || !testIsRoot,
  )(
    'R8.11: a client of another uid is refused by the peer check, though the socket is 0777 in a 0755 directory',
    async () => {
      const stranger = other as Identity;
      const answer = await initializeAs(stranger, socket);
      expect(answer.status, answer.output).not.toBe('200');
      expect(answer.output).not.toContain('"protocolVersion"');
      // Refused with a 403 before a byte was read, or reset before curl could read it.
      expect(answer.output).toMatch(/status=403|status=000/);
      const refusal = await waitFor(
        async () =>
          (await logLines(seat as Seat)).find(
            (line) => line['msg'] === 'refused a unix socket connection of another user',
          ),
        'the warning of the refusal in the log',
        10_000,
      );
      expect(refusal).toMatchObject({ uid: stranger.uid, socket });
      // The server still serves its own uid.
      expect((await initializeAs(identity, socket)).status).toBe('200');
    },
  );
});
