// An HTTP client that goes away in the middle of a call (SPEC §3, §12). In the sessionless
// 2026-07-28 era the connection is the request: its closing before the answer is the cancellation,
// and the command's processes are killed. A 2025 Streamable session cancels with
// notifications/cancelled instead: a POST whose connection drops leaves its command running, and
// its result stays available (README "No push lost"). The built binary, raw requests over
// node:http (dropped by destroying the socket), processes found in /proc by a marker in argv.
import { request as httpRequest, type ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  E2E,
  processesMatching,
  uniqueMarker,
  waitFor,
  type Operations,
} from '../../../support/harness.js';
import { httpBinary, post, rawSession } from '../../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const MODERN = '2026-07-28';

/** The per-request envelope of a 2026-07-28 request, without the tasks extension. */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The headers of a 2026-07-28 POST naming `method` (and the tool called). */
function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

/** A POST over node:http whose connection the test drops (`drop`) before any answer. */
function openPost(url: string, body: unknown, headers: Record<string, string>): ClientRequest {
  const request = httpRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
  });
  // The drop makes the request fail on this side: that is the point, not an error of the test.
  request.on('error', () => undefined);
  request.end(JSON.stringify(body));
  return request;
}

/** A raw 2026-07-28 request answered as JSON (the result, or the error). */
async function modern(
  url: string,
  headers: Record<string, string>,
  id: number,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: { structuredContent?: unknown }; error?: unknown }> {
  const name = typeof params['name'] === 'string' ? params['name'] : undefined;
  const response = await post(
    url,
    { jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } },
    { accept: 'application/json', ...headers, ...modernHeaders(method, name) },
  );
  return (await response.json()) as { result?: { structuredContent?: unknown } };
}

/** The operations `status` reports (the 2026-07-28 era sees every operation of the endpoint). */
async function modernStatus(
  url: string,
  headers: Record<string, string>,
): Promise<Operations['operations']> {
  const answer = await modern(url, headers, 99, 'tools/call', {
    name: 'status',
    arguments: {},
  });
  return (answer.result?.structuredContent as Operations).operations;
}

describe('a 2026-07-28 client that goes away', () => {
  it('SPEC §12: a call kept open (no tasks extension, JSON answer) is cancelled when its connection closes: the processes die, the operation is cancelled', async () => {
    const { url, headers } = await httpBinary(e2e, await e2e.scope(), ['--inline-wait', '0']);
    const marker = uniqueMarker();
    const call = openPost(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          // exec -a: the process's name carries the marker (a warm shell's command line does not).
          arguments: { command: `exec -a ${marker} sleep 60` },
          _meta: ENVELOPE,
        },
      },
      { accept: 'application/json', ...headers, ...modernHeaders('tools/call', 'sandboxed_shell') },
    );
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    call.destroy();
    await waitFor(
      async () => (await processesMatching(marker)).length === 0,
      'the command of the dropped call to be killed',
      8000,
    );
    const operations = await waitFor(async () => {
      const now = await modernStatus(url, headers);
      return now.some(
        (operation) => operation.tool === 'sandboxed_shell' && operation.status !== 'running',
      )
        ? now
        : undefined;
    }, 'the operation to end');
    expect(operations).toContainEqual(
      expect.objectContaining({ tool: 'sandboxed_shell', status: 'cancelled' }),
    );
  });

  it('SPEC §12: a call kept open with a progressToken (SSE) is cancelled when its connection closes, before any heartbeat', async () => {
    // Heartbeats far apart: the drop must be seen by itself, not when the next heartbeat is written.
    const scope = await e2e.scope();
    const { url, headers } = await httpBinary(
      e2e,
      { ...scope, env: { ...scope.env, AHMA_TEST_HEARTBEAT_MS: '120000' } },
      ['--inline-wait', '0'],
    );
    const marker = uniqueMarker();
    const call = openPost(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          arguments: { command: `exec -a ${marker} sleep 60` },
          _meta: { ...ENVELOPE, progressToken: 'p-1' },
        },
      },
      {
        accept: 'application/json, text/event-stream',
        ...headers,
        ...modernHeaders('tools/call', 'sandboxed_shell'),
      },
    );
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    call.destroy();
    await waitFor(
      async () => (await processesMatching(marker)).length === 0,
      'the command of the dropped call to be killed',
      8000,
    );
  });
});

describe('a 2025 Streamable HTTP client whose POST drops', () => {
  it('SPEC §3, R8.2: a synchronous call whose POST stream drops keeps running to its end, and its result is there for `await` (2025 clients cancel with notifications/cancelled)', async () => {
    const { url, headers } = await httpBinary(e2e, await e2e.scope());
    const session = await rawSession(url, headers);
    const marker = uniqueMarker();
    const call = openPost(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'sandboxed_shell',
          arguments: {
            command: `bash -c 'exec -a ${marker} sleep 1.5'; echo survived`,
            execution_mode: 'Synchronous',
          },
          _meta: { progressToken: 'p-1' },
        },
      },
      { accept: 'application/json, text/event-stream', 'mcp-session-id': session, ...headers },
    );
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the command to run');
    call.destroy();
    // It ends by itself, not killed: the operation completes with its whole output.
    const answer = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'await', arguments: { timeout_seconds: 30 } },
      },
      { accept: 'application/json', 'mcp-session-id': session, ...headers },
    );
    const body = (await answer.json()) as { result?: { structuredContent?: unknown } };
    const [operation] =
      (body.result?.structuredContent as Operations | undefined)?.operations ?? [];
    expect(operation).toMatchObject({
      tool: 'sandboxed_shell',
      status: 'completed',
      exit_code: 0,
      output: 'survived\n',
    });
  });
});
