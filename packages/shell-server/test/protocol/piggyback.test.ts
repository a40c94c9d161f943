// R2.7: results the model cannot lose. A call answered `started` finishes; its push arrives (which
// today's clients do not show the model); the next call of any tool carries the result before its
// own, once; the call after that does not; `await` of the same id still answers. A result handed
// over by `await` first is not carried again. The built binary, over stdio and Streamable HTTP.
import { describe, expect } from 'vitest';
import { httpBinary, httpClient } from '../support/http.js';
import {
  it,
  pushedId,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type E2E,
  type Operations,
  type RunningServer,
  type StartedResult,
} from '../support/harness.js';

const AT_ONCE = ['--inline-wait', '0'];

/** Starts `script` (answered `started`) and waits for its push: it has finished, nobody has it. */
async function finishedUnseen(server: RunningServer, script: string): Promise<string> {
  const started = structured<StartedResult>(
    await server.call('sandboxed_shell', { command: script }),
  );
  expect(started.status).toBe('started');
  await waitFor(
    () => server.messages.some((message) => pushedId(message) === started.operation_id),
    'the push of the finished command',
  );
  return started.operation_id;
}

const shell = async (server: RunningServer, command: string) =>
  server.call('sandboxed_shell', { command, execution_mode: 'Synchronous' });

const transports = [
  ['stdio', async (e2e: E2E) => e2e.server(await e2e.scope(), AT_ONCE)],
  [
    'Streamable HTTP',
    async (e2e: E2E) => {
      const http = await httpBinary(e2e, await e2e.scope(), AT_ONCE);
      return httpClient(e2e, http.url, http);
    },
  ],
] as const;

describe.concurrent.each(transports)('over %s', { timeout: 60_000 }, (_, connect) => {
  it('R2.7: the next call of any tool carries the finished result before its own, once; await still answers', async ({
    e2e,
  }) => {
    const server = await connect(e2e);
    const marker = uniqueMarker();
    const id = await finishedUnseen(server, `sleep 1; echo ${marker}-done; exit 3`);

    const next = await shell(server, 'echo unrelated');
    const [carried, own] = next.content as { type: string; text: string }[];
    expect(carried?.text).toMatch(/^\[ahma\] Finished since your last call:/);
    expect(carried?.text).toContain(`${id} (sandboxed_shell) failed, exit code 3`);
    expect(carried?.text).toContain(`${marker}-done`);
    expect(own?.text).toContain('unrelated');
    // The call's own structured result is untouched.
    expect(structured<{ output: string }>(next).output).toBe('unrelated\n');

    expect(textOf(await shell(server, 'echo again'))).not.toContain(marker);
    const awaited = structured<Operations>(await server.call('await', { ids: [id] }));
    expect(awaited.operations[0]).toMatchObject({ operation_id: id, status: 'failed' });
    expect(textOf(await server.call('await', { ids: [id] }))).toContain(`${marker}-done`);
  });

  it('R2.7: a result await handed over already is not carried again', async ({ e2e }) => {
    const server = await connect(e2e);
    const marker = uniqueMarker();
    const id = await finishedUnseen(server, `sleep 1; echo ${marker}`);
    expect(textOf(await server.call('await', { ids: [id] }))).toContain(marker);
    expect(textOf(await shell(server, 'echo next'))).not.toContain('Finished since your last call');
  });
});

describe.concurrent('the carried result', { timeout: 60_000 }, () => {
  it('R2.7: a long output is cut to its last lines, with how to get the whole', async ({ e2e }) => {
    const server = await e2e.server(await e2e.scope(), AT_ONCE);
    const id = await finishedUnseen(server, 'sleep 1; seq 1 5000');
    const text = textOf(await shell(server, 'true'));
    expect(text).toContain(`the whole output: \`output\` with id "${id}"`);
    expect(text).toContain(`the whole result: \`await\` with ids ["${id}"]`);
    expect(text).toContain('\n5000\n');
    expect(text).not.toContain('\n4000\n');
  });
});

describe.concurrent('Claude Code channel', { timeout: 60_000 }, () => {
  it('R2.7: with --claude-channel the server declares claude/channel and sends each finished result that way too', async ({
    e2e,
  }) => {
    const server = await e2e.server(await e2e.scope(), [...AT_ONCE, '--claude-channel']);
    expect(server.client.getServerCapabilities()?.experimental).toHaveProperty(['claude/channel']);
    const marker = uniqueMarker();
    const id = await finishedUnseen(server, `sleep 1; echo ${marker}`);
    const event = await waitFor(
      () =>
        server.received.find(
          ({ message }) => 'method' in message && message.method === 'notifications/claude/channel',
        )?.message,
      'the channel event',
    );
    const params = (
      event as unknown as { params: { content: string; meta: Record<string, string> } }
    ).params;
    expect(params.content).toContain(marker);
    expect(params.meta).toMatchObject({
      operation_id: id,
      tool: 'sandboxed_shell',
      status: 'completed',
    });
  });

  it('R2.7: without it, nothing is declared or sent', async ({ e2e }) => {
    const server = await e2e.server(await e2e.scope(), AT_ONCE);
    expect(server.client.getServerCapabilities()?.experimental).toBeUndefined();
    await finishedUnseen(server, 'sleep 1; echo x');
    expect(
      server.received.some(
        ({ message }) => 'method' in message && message.method === 'notifications/claude/channel',
      ),
    ).toBe(false);
  });
});
