// The operations page's HTTP rules (SPEC §15 operations page), against the HTTP server of
// `ahma-shell --mode http` in this process: who gets in (the one-time link, its cookie), what is
// refused (no cookie, another origin, a change without this page's Origin), that /mcp keeps its
// bearer token, and the API over a real command (list, output, cancel that kills it).
import { request } from 'node:http';
import { describe, expect } from 'vitest';
import { recordedLinks } from '../../../src/ops/link-record.js';
import { it, exists, waitFor, type E2E, type Scope } from '../../support/harness.js';
import { httpServer, openStream, type InProcessHttp } from '../../support/http.js';

const TOKEN = 'ops-page-test-token';

async function opsServer(e2e: E2E): Promise<{ http: InProcessHttp; scope: Scope; origin: string }> {
  const scope = await e2e.scope({ noTools: true });
  // No inline wait: a call answers with its running operation at once.
  const http = await httpServer(e2e, scope, ['--inline-wait', '0'], { token: TOKEN });
  return { http, scope, origin: `http://127.0.0.1:${String(http.port)}` };
}

/** What the person's browser does with the link: the session cookie it is given. */
async function signIn(http: InProcessHttp): Promise<string> {
  const link = http.server.opsLink();
  if (link === undefined) throw new Error('no operations page');
  const response = await fetch(link, { redirect: 'manual' });
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie') ?? '';
  return cookie.split(';')[0] ?? '';
}

/** A request as the page's own script makes it. */
/** Starts `command` with sandboxed_shell in the background, as a call would; its operation's id. */
async function startInBackground(http: InProcessHttp, command: string): Promise<string> {
  const shell = http.runtime.tools.find((entry) => entry.tool.name === 'sandboxed_shell');
  const started = await shell?.call(
    { command, execution_mode: 'AsyncResultPush' },
    { signal: new AbortController().signal, progress: undefined },
  );
  if (started?.kind !== 'operation') throw new Error(`the command did not start: ${command}`);
  return started.snapshot.id;
}

function fromPage(origin: string, path: string, cookie: string, init: RequestInit = {}) {
  return fetch(`${origin}${path}`, {
    ...init,
    redirect: 'manual',
    headers: { cookie, 'sec-fetch-site': 'same-origin', ...(init.headers as object) },
  });
}

/** A cancel POSTed with these headers (the page's own: its Origin and JSON). */
function postCancel(origin: string, cookie: string, id: string, headers: Record<string, string>) {
  return fromPage(origin, '/ops/api/cancel', cookie, {
    method: 'POST',
    headers,
    body: JSON.stringify({ id }),
  });
}

/** A GET with headers fetch would not send as given (Host): its status. */
function rawGet(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.concurrent('the operations page over HTTP (SPEC §15 operations page)', () => {
  it('SPEC §15 operations page: the one-time link sets an HttpOnly, SameSite=Strict cookie once; the next link is on record', async ({
    e2e,
  }) => {
    const { http } = await opsServer(e2e);
    const link = http.server.opsLink();
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ops\/login\?key=[\w-]{43}$/);
    const first = await fetch(link ?? '', { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/ops');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^ahma_ops=[\w-]{43}; Path=\/ops; HttpOnly; SameSite=Strict$/);
    // Spent: the same link again is refused, and a new one replaced it.
    const again = await fetch(link ?? '', { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    const next = http.server.opsLink();
    expect(next).not.toBe(link);
    await waitFor(
      async () => (await recordedLinks(http.runtime.engine.state.root)).includes(next ?? ''),
      'the next link on record',
    );
    const wrongKey = await fetch(`${(next ?? '').replace(/key=.*/, 'key=guessed')}`, {
      redirect: 'manual',
    });
    expect(wrongKey.status).toBe(403);
    // A wrong guess does not spend the right link.
    expect((await fetch(next ?? '', { redirect: 'manual' })).status).toBe(303);
  });

  it('SPEC §15 operations page: `ahma-shell doctor` prints the unused link of the running server', async ({
    e2e,
  }) => {
    const { http, scope } = await opsServer(e2e);
    const link = http.server.opsLink() ?? 'no link';
    await waitFor(
      async () => (await recordedLinks(http.runtime.engine.state.root)).includes(link),
      'the link on record',
    );
    const doctor = await e2e.runInProcess(['doctor'], { env: scope.env, cwd: scope.dir });
    expect(doctor.stdout).toContain(
      `Operations pages of the servers running now (one-time links):\n  ${link}\n`,
    );
    const json = await e2e.runInProcess(['doctor', '--json'], { env: scope.env, cwd: scope.dir });
    expect((JSON.parse(json.stdout) as { ops_pages: string[] }).ops_pages).toEqual([link]);
  });

  it('SPEC §15 operations page: without the cookie nothing is shown, with the bearer token neither', async ({
    e2e,
  }) => {
    const { origin } = await opsServer(e2e);
    for (const path of ['/ops', '/ops/ops.js', '/ops/api/operations', '/ops/api/events']) {
      const bare = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect(bare.status, path).toBe(401);
      const bearer = await fetch(`${origin}${path}`, {
        redirect: 'manual',
        headers: { authorization: `Bearer ${TOKEN}`, cookie: 'ahma_ops=made-up' },
      });
      expect(bearer.status, path).toBe(401);
    }
  });

  it('SPEC §15 operations page: /mcp still needs the bearer token; the page does not open it', async ({
    e2e,
  }) => {
    const { http, origin } = await opsServer(e2e);
    const cookie = await signIn(http);
    const response = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(401);
    // Paths are judged as they are served: a dot segment does not carry the page's rule to /mcp.
    const headers = { cookie, 'sec-fetch-site': 'same-origin' };
    expect(await rawGet(http.port, '/ops/../mcp', headers)).toBe(401);
    expect(await rawGet(http.port, '/ops/%2e%2e/mcp', headers)).toBe(401);
    expect(await rawGet(http.port, '/mcp/../ops/api/operations', headers)).toBe(200);
  });

  it('SPEC §15 operations page: other origins are refused — another site, another port of this machine, a rebound name', async ({
    e2e,
  }) => {
    const { http, origin } = await opsServer(e2e);
    const cookie = await signIn(http);
    const ok = await fromPage(origin, '/ops/api/operations', cookie);
    expect(ok.status).toBe(200);
    const refusals: [string, Record<string, string>][] = [
      ['another site', { origin: 'http://evil.example' }],
      ['another port of this machine', { origin: 'http://127.0.0.1:1' }],
      ['a cross-site request', { 'sec-fetch-site': 'cross-site' }],
      // Another port of this machine is the same *site*: the cookie would go, the origin does not.
      ['a same-site page', { 'sec-fetch-site': 'same-site' }],
    ];
    for (const [what, headers] of refusals) {
      const response = await fromPage(origin, '/ops/api/operations', cookie, { headers });
      expect(response.status, what).toBe(403);
    }
    // A name of someone else's pointed at 127.0.0.1 (DNS rebinding) is not this server.
    const rebound = await rawGet(http.port, '/ops/api/operations', {
      cookie,
      host: `evil.example:${String(http.port)}`,
      'sec-fetch-site': 'same-origin',
    });
    expect(rebound).toBe(403);
    // A change needs this page's Origin, and JSON (which another origin cannot send unasked).
    const noOrigin = await postCancel(origin, cookie, 'op_x', {
      'content-type': 'application/json',
    });
    expect(noOrigin.status).toBe(403);
    const asForm = await postCancel(origin, cookie, 'op_x', {
      origin,
      'content-type': 'text/plain',
    });
    expect(asForm.status).toBe(415);
  });

  it('SPEC §15 operations page: a running command is listed with its command line and output, read whole through the output tool, a queued one with its place, and cancel kills it', async ({
    e2e,
  }) => {
    const { http, origin } = await opsServer(e2e);
    const cookie = await signIn(http);
    const id = await startInBackground(http, 'echo "pid $$"; echo "<b>bold</b>"; exec sleep 300');
    type Listed = { id: string; status: string; argv?: string[] };
    const listed = await waitFor(async () => {
      const body = (await (await fromPage(origin, '/ops/api/operations', cookie)).json()) as {
        operations: Listed[];
      };
      return body.operations.find(
        (operation) => operation.id === id && operation.argv !== undefined,
      );
    }, 'the command listed with its command line');
    expect(listed.status).toBe('running');
    expect(listed.argv?.at(-1)).toBe('echo "pid $$"; echo "<b>bold</b>"; exec sleep 300');
    const output = await waitFor(async () => {
      const response = await fromPage(origin, `/ops/api/output?id=${id}&tail=5`, cookie);
      const body = (await response.json()) as { text?: string };
      return body.text?.includes('<b>bold</b>') === true ? body.text : undefined;
    }, 'its output');
    const pid = Number(/pid (\d+)/.exec(output)?.[1]);
    expect(exists(pid)).toBe(true);
    // A second writer of the workspace waits its turn, and the list says behind whom.
    const second = await startInBackground(http, 'exec sleep 300');
    const queued = await waitFor(async () => {
      const body = (await (await fromPage(origin, '/ops/api/operations', cookie)).json()) as {
        operations: (Listed & { queued?: { position: number; behind: string } })[];
      };
      return body.operations.find((operation) => operation.id === second)?.queued;
    }, 'the second command queued');
    expect(queued).toEqual({ position: 1, behind: id });

    const json = { origin, 'content-type': 'application/json' };
    const cancelled = await postCancel(origin, cookie, id, json);
    expect(cancelled.status).toBe(200);
    await waitFor(() => !exists(pid), 'the command to be gone');
    const [ended] = await http.runtime.engine.operations.await([id], 10_000);
    expect(ended?.status).toBe('cancelled');
    expect(ended?.cancelReason).toBe('cancelled from the operations page');
    const unknown = await postCancel(origin, cookie, 'op_unknown_1', json);
    expect(unknown.status).toBe(409);
  });

  it('SPEC §15 operations page: the live stream keeps up with a flood of output without carrying all of it, and the whole output is still there', async ({
    e2e,
  }) => {
    const { http, origin } = await opsServer(e2e);
    const cookie = await signIn(http);
    const stream = await openStream(`${origin}/ops/api/events`, {
      cookie,
      'sec-fetch-site': 'same-origin',
    });
    e2e.onCleanup(async () => stream.close());
    const id = await startInBackground(
      http,
      "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END",
    );
    type Listed = { operations: { id: string; status: string }[] };
    await stream.next(
      (event) =>
        event.event === 'operations' &&
        (event.data as Listed).operations.some(
          (each) => each.id === id && each.status === 'completed',
        ),
      'the command listed as completed',
    );
    const live = stream.events
      .filter((event) => event.event === 'output' && (event.data as { id: string }).id === id)
      .map((event) => (event.data as { text: string }).text)
      .join('');
    expect(live.length).toBeLessThan(1_000_000);
    expect(live).toMatch(/characters not shown live/);
    expect(live).toMatch(/END\n$/);
    const whole = (await (
      await fromPage(origin, `/ops/api/output?id=${id}&offset=-4`, cookie)
    ).json()) as {
      total_bytes: number;
      text: string;
    };
    expect(whole.total_bytes).toBeGreaterThan(3_000_000);
    expect(whole.text).toBe('END\n');
  });
});
