// R7.18, R7.19: grants a person answers once. A `--network proxy` server refuses a loopback
// service nobody named, and any server a write outside its writable paths; the SDK Client's
// elicitation handler stands for the person. "session" lets the retried command through, "deny" keeps it refused, a client without elicitation is told
// which flag would allow it, and "always" lands in the ledger, where `ahma-shell grants list`
// shows it, a new server honours it, and `grants revoke` takes it back. Every decision of the
// proxy and every answer is an audit line.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import { it, serverSetup, textOf, type E2E, type Scope } from '../support/harness.js';
import { httpBinary } from '../support/http.js';
import { loopbackService } from '../support/loopback-service.js';

const service = loopbackService();

interface Person {
  /** The answer the person gives (undefined: the client has no elicitation). */
  answer: 'once' | 'session' | 'always' | 'deny' | undefined;
  readonly asked: string[];
}

/**
 * A server (`--network proxy` unless `args` say otherwise) made in this process from that command
 * line, its log as the binary prints it with --log-to-stderr, and an SDK client whose elicitation
 * handler answers as `person` says, connected over the SDK's in-memory transport.
 */
async function serve(
  e2e: E2E,
  scope: Scope,
  person: Person,
  args: readonly string[] = ['--network', 'proxy'],
) {
  const [{ createRuntime }, { createMcpServer }] = await Promise.all([
    import('../../src/runtime/runtime.js'),
    import('../../src/protocol/server.js'),
  ]);
  const setup = await serverSetup(scope, ['--mode', 'stdio', ...args, '--log-to-stderr']);
  const runtime = await createRuntime({
    options: setup.options,
    env: scope.env,
    cwd: scope.dir,
    logger: setup.logger,
  });
  const connection = createMcpServer(runtime);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await connection.server.connect(serverSide);
  const client = new Client(
    { name: 'grant-test', version: '1.0.0' },
    person.answer === undefined ? {} : { capabilities: { elicitation: {} } },
  );
  if (person.answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      person.asked.push(request.params.message);
      return { action: 'accept', content: { decision: person.answer ?? 'deny' } };
    });
  }
  await client.connect(clientSide);
  e2e.onCleanup(async () => {
    await client.close();
    await connection.close();
    await runtime.close();
  });
  const stderr = setup.stderr;
  const sh = async (command: string) =>
    textOf(
      (await client.callTool({
        name: 'sandboxed_shell',
        arguments: { command, execution_mode: 'Synchronous' },
      })) as CallToolResult,
    );
  const curl = () => sh(`curl -sS -m 10 http://127.0.0.1:${String(service.port())}/`);
  return { sh, curl, stderr };
}

describe.concurrent('network grants', { timeout: 60_000 }, () => {
  it('R7.18: "session": the person is asked, not the model, and the retried command reaches the host', async ({
    e2e,
  }) => {
    const person: Person = { answer: 'session', asked: [] };
    const server = await serve(e2e, await e2e.scope(), person);
    const first = await server.curl();
    expect(first).not.toContain('hello from the service');
    expect(person.asked).toHaveLength(1);
    expect(person.asked[0]).toContain(
      `sandboxed_shell wants to reach 127.0.0.1:${String(service.port())}`,
    );
    expect(first).toContain(
      `the person allowed commands to reach 127.0.0.1:${String(service.port())} for this session`,
    );
    const second = await server.curl();
    expect(second).toContain('hello from the service');
    expect(person.asked).toHaveLength(1);
    // R7.19: the refusal, the grant and the connection it allowed are audit lines.
    expect(server.stderr()).toMatch(/network refusal/);
    expect(server.stderr()).toMatch(/network_grant/);
    expect(server.stderr()).toMatch(/network connection/);
  });

  it('R7.18: "deny" keeps the host refused, and is asked again next time', async ({ e2e }) => {
    const person: Person = { answer: 'deny', asked: [] };
    const server = await serve(e2e, await e2e.scope(), person);
    expect(await server.curl()).toContain('the person did not allow');
    const again = await server.curl();
    expect(again).not.toContain('hello from the service');
    expect(person.asked).toHaveLength(2);
  });

  it('R7.18: a client without elicitation gets the refusal with the flag that would allow it, and nothing is retried', async ({
    e2e,
  }) => {
    const server = await serve(e2e, await e2e.scope(), { answer: undefined, asked: [] });
    const text = await server.curl();
    expect(text).not.toContain('hello from the service');
    expect(text).toContain(`--allow-host 127.0.0.1:${String(service.port())}`);
    expect(text).toContain('this client cannot ask the person');
  });

  it('R7.18: "always" lands in the ledger: grants list shows it, a new server honours it, grants revoke takes it back', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const person: Person = { answer: 'always', asked: [] };
    const first = await serve(e2e, scope, person);
    expect(await first.curl()).toContain('for every session in this scope');
    const listed = await e2e.run(['grants', 'list', '--json'], { env: scope.env });
    expect(listed.code).toBe(0);
    const grants = JSON.parse(listed.stdout) as {
      id: string;
      rule: string;
      who: string;
      scope: string;
    }[];
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({
      kind: 'host',
      rule: `127.0.0.1:${String(service.port())}`,
      who: 'grant-test 1.0.0',
      scope: scope.dir,
    });

    const later = await serve(e2e, scope, { answer: 'deny', asked: [] });
    expect(await later.curl()).toContain('hello from the service');

    const id = grants[0]?.id ?? '';
    const revoked = await e2e.run(['grants', 'revoke', id], { env: scope.env });
    expect(revoked.stdout).toContain(`revoked ${id}`);
    const after = await e2e.run(['grants', 'list'], { env: scope.env });
    expect(after.stdout).toBe('no grants\n');
    expect((await e2e.run(['grants', 'revoke', id], { env: scope.env })).code).toBe(1);
  });
});

describe.concurrent('write grants', { timeout: 60_000 }, () => {
  it('R7.18: a write refused outside the writable paths is asked about; "session" lets the retried command write that directory', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const person: Person = { answer: 'session', asked: [] };
    const server = await serve(e2e, scope, person, []);
    const first = await server.sh(`echo granted > ${outside}/new.txt`);
    expect(first).toContain('Permission denied');
    expect(person.asked).toHaveLength(1);
    expect(person.asked[0]).toContain(`sandboxed_shell was refused writing ${outside}/new.txt`);
    expect(first).toContain(`the person allowed commands to write ${outside} for this session`);
    await server.sh(`echo granted > ${outside}/new.txt`);
    expect(await readFile(join(outside, 'new.txt'), 'utf8')).toBe('granted\n');
    expect(server.stderr()).toMatch(/write_grant/);
  });

  it('R7.18: no grant is offered for a directory holding hand-off files, nor for HOME; "deny" keeps the write refused', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const repo = await e2e.outsideDir();
    await mkdir(join(repo, '.git'));
    const person: Person = { answer: 'deny', asked: [] };
    const server = await serve(e2e, scope, person, []);
    const handoff = await server.sh(`echo x > ${repo}/file.txt`);
    expect(handoff).toContain(`cannot be granted: it holds or lies in ${repo}/.git`);
    expect(person.asked).toHaveLength(0);
    const home = scope.env['HOME'] ?? '';
    const inHome = await server.sh(`echo x > ${home}/ahma-grant-test-${String(process.pid)}.txt`);
    expect(inHome).toContain('cannot be granted: it is HOME or holds it');
    expect(person.asked).toHaveLength(0);
    const outside = await e2e.outsideDir();
    expect(await server.sh(`echo x > ${outside}/file.txt`)).toContain('the person did not allow');
    expect(person.asked).toHaveLength(1);
    expect(existsSync(join(outside, 'file.txt'))).toBe(false);
  });

  it('R7.18: "always" keeps the directory in the ledger for the scope: a new server writes there without asking', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const first = await serve(e2e, scope, { answer: 'always', asked: [] }, []);
    await first.sh(`echo x > ${outside}/a.txt`);
    const listed = await e2e.run(['grants', 'list'], { env: scope.env });
    expect(listed.stdout).toContain(`write ${outside}`);
    const later: Person = { answer: 'deny', asked: [] };
    const second = await serve(e2e, scope, later, []);
    await second.sh(`echo y > ${outside}/b.txt`);
    expect(await readFile(join(outside, 'b.txt'), 'utf8')).toBe('y\n');
    expect(later.asked).toHaveLength(0);
  });
});

describe.concurrent('over HTTP', { timeout: 60_000 }, () => {
  it.for([[], ['--session-isolation']])(
    'R7.18: the question reaches a Streamable HTTP client, and "session" lets the retried command through (%j)',
    async (extra, { e2e }) => {
      const scope = await e2e.scope();
      const http = await httpBinary(e2e, scope, ['--network', 'proxy', ...extra]);
      const client = new Client(
        { name: 'grant-test', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { decision: 'session' } };
      });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(http.url), {
          requestInit: { headers: http.headers },
        }),
      );
      e2e.onCleanup(() => client.close());
      const curl = async () =>
        textOf(
          (await client.callTool({
            name: 'sandboxed_shell',
            arguments: {
              command: `curl -sS -m 10 http://127.0.0.1:${String(service.port())}/`,
              execution_mode: 'Synchronous',
            },
          })) as CallToolResult,
        );
      expect(await curl()).toContain('for this session');
      expect(asked).toHaveLength(1);
      expect(await curl()).toContain('hello from the service');
    },
  );
});
