// Livelog tools in the 2026-07-28 era (SPEC §2 Compatibility, §12). That era has no pushes, so a
// monitor's alerts cannot reach the client; and a monitor of `tail -F` never ends by itself, so a
// call kept open until its command ends would never answer. A call without the tasks extension
// answers at once with the operation id, saying so, and `status`/`cancel` reach the monitor; one
// that opts in becomes a task, as any long call. The SDK v2 client over the built binary's stdio,
// raw JSON-RPC with the `_meta` envelope over its HTTP; the endpoint is llm-server.ts.
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  processesMatching,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type Operations,
  type Scope,
} from '../support/harness.js';
import { httpBinary } from '../support/http.js';
import { modernStdioClient } from '../support/modern-client.js';
import { LlmServer } from '../support/llm-server.js';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
/** Far below the test's own timeout: a call held open fails here, with a clear message. */
const ANSWER_WITHIN_MS = 5_000;

function envelope(tasks: boolean) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

interface Watched {
  readonly scope: Scope;
  readonly llm: LlmServer;
  /** The followed file's name: it carries a marker, so `tail -F <it>` is found in /proc. */
  readonly log: string;
  readonly marker: string;
}

/** A scope whose only tool is "watch", a livelog tool following `tail -F <log>`. */
async function watched(e2e: E2E): Promise<Watched> {
  const llm = new LlmServer();
  await llm.start();
  e2e.onCleanup(() => llm.stop());
  const scope = await e2e.scope({ noTools: true });
  const marker = uniqueMarker();
  const log = `app-${marker}.log`;
  await writeFile(join(scope.dir, log), '');
  await writeFile(
    join(scope.dir, '.ahma', 'tools', 'watch.json'),
    JSON.stringify({
      name: 'watch',
      description: 'Follow the application log and report panics.',
      command: 'tail',
      tool_type: 'livelog',
      livelog: {
        source_command: 'tail',
        source_args: ['-F', log],
        detection_prompt: 'Report any line containing PANIC.',
        llm_provider: { base_url: llm.baseUrl, model: 'tiny' },
        chunk_max_lines: 1,
        chunk_max_seconds: 1,
        cooldown_seconds: 0,
        llm_timeout_seconds: 5,
      },
    }),
  );
  return { scope, llm, log, marker };
}

interface Started {
  readonly operation_id: string;
  readonly status: string;
  readonly tool: string;
}

/** What a started monitor's answer must say in this era: its id, and where alerts do not go. */
function expectStartedWithoutPushes(structured: unknown, text: string): string {
  expect(structured).toMatchObject({ status: 'started', tool: 'watch' });
  const id = (structured as Started).operation_id;
  expect(text).toContain(id);
  expect(text).toContain('cannot reach you');
  expect(text).toContain('`cancel`');
  expect(text).not.toContain('notifications/message');
  return id;
}

describe.concurrent(
  'a livelog tool in the 2026-07-28 era without the tasks extension',
  { timeout: 60_000 },
  () => {
    it('SPEC §12, SPEC §2 livelog: over stdio (SDK v2 client) the call answers at once with the operation id; the monitor runs, `status` and `cancel` reach it, and its processes die', async ({
      e2e,
    }) => {
      const { scope, llm, log, marker } = await watched(e2e);
      const client = await modernStdioClient(e2e, scope);
      expect(client.getProtocolEra()).toBe('modern');

      // The tool's description tells this era's truth: no alert will arrive while it runs.
      const { tools } = await client.listTools();
      const description = tools.find((tool) => tool.name === 'watch')?.description ?? '';
      expect(description).toContain('cannot reach you');
      expect(description).not.toContain('notifications/message');
      expect(description).not.toContain('keeps the call open');

      const started = await client.callTool(
        { name: 'watch', arguments: {} },
        { timeout: ANSWER_WITHIN_MS },
      );
      expect(started.isError ?? false).toBe(false);
      const id = expectStartedWithoutPushes(
        started.structuredContent,
        started.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'),
      );
      await waitFor(async () => (await processesMatching(marker)).length > 0, 'tail -F to run');

      // The monitor works: a line appended to the followed file is checked by the endpoint.
      await appendFile(join(scope.dir, log), 'PANIC in worker 3\n');
      await waitFor(() => llm.chunks().includes('PANIC in worker 3'), 'the chunk to be checked');
      const status = await client.callTool({ name: 'status', arguments: { ids: [id] } });
      expect((status.structuredContent as Operations).operations[0]).toMatchObject({
        operation_id: id,
        status: 'running',
      });

      const cancelled = await client.callTool({ name: 'cancel', arguments: { id } });
      const result = cancelled.structuredContent as CommandResult;
      expect(result).toMatchObject({ operation_id: id, status: 'cancelled' });
      // The final result counts what the model found, which this era could not push.
      expect(result.output).toContain('1 issue found; 1 alert raised');
      expect(await processesMatching(marker)).toEqual([]);
    });

    it('SPEC §12, SPEC §2 livelog: over HTTP (raw, `_meta` envelope) the call answers at once with the operation id; with the tasks extension it is a task that tasks/cancel kills', async ({
      e2e,
    }) => {
      const { scope, marker } = await watched(e2e);
      const { url, headers } = await httpBinary(e2e, scope);
      const call = async (
        id: number,
        method: string,
        params: Record<string, unknown>,
        tasks = false,
      ) => {
        const name = params['name'] ?? params['taskId'];
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'mcp-protocol-version': MODERN,
            'mcp-method': method,
            ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
            ...headers,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method,
            params: { ...params, _meta: envelope(tasks) },
          }),
          signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
        });
        return ((await response.json()) as { result: Record<string, unknown> }).result;
      };

      const started = (await call(1, 'tools/call', { name: 'watch', arguments: {} })) as {
        structuredContent?: unknown;
        content: { text: string }[];
      };
      const id = expectStartedWithoutPushes(
        started.structuredContent,
        started.content.map((part) => part.text).join('\n'),
      );
      await waitFor(async () => (await processesMatching(marker)).length > 0, 'tail -F to run');
      const cancelled = (await call(2, 'tools/call', { name: 'cancel', arguments: { id } })) as {
        structuredContent: CommandResult;
      };
      expect(cancelled.structuredContent).toMatchObject({ operation_id: id, status: 'cancelled' });
      expect(await processesMatching(marker)).toEqual([]);

      // Opted in, the same call is a task (nothing about it changed), cancelled through the task.
      const task = await call(3, 'tools/call', { name: 'watch', arguments: {} }, true);
      expect(task).toMatchObject({ resultType: 'task', status: 'working' });
      await waitFor(async () => (await processesMatching(marker)).length > 0, 'tail -F to run');
      await call(4, 'tasks/cancel', { taskId: task['taskId'] }, true);
      expect(await processesMatching(marker)).toEqual([]);
    });
  },
);
