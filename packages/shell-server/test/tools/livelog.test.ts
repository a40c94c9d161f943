// Livelog tools (SPEC §2 Compatibility, §3): the runtime in this process with the SDK's real
// Client over InMemoryTransport, the source in the real sandbox, and a small OpenAI-compatible endpoint started by
// the test (llm-server.ts). Alerts arrive as notifications/message warnings. Each test has its own
// server and endpoint; they run at once.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  descendantsOf,
  it,
  processesMatching,
  readLog,
  sleep,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type Operations,
  type RunningServer,
  type Scope,
  type StartedResult,
} from '../support/harness.js';
import { LlmServer } from '../support/llm-server.js';

type Alert = LoggingMessageNotification['params'];

interface Monitor {
  readonly server: RunningServer;
  readonly scope: Scope;
  /** notifications/message received by the client. */
  readonly messages: Alert[];
  /** Errors the SDK client reported. */
  readonly clientErrors: Error[];
  /** Starts the monitor; returns its operation id. */
  start(): Promise<string>;
  /** The alerts of livelog tools (warnings). */
  alerts(): { operation_id: string; tool: string; alert: string; chunk: string }[];
}

async function endpoint(e2e: E2E): Promise<LlmServer> {
  const llm = new LlmServer();
  await llm.start();
  e2e.onCleanup(() => llm.stop());
  return llm;
}

/** A server whose only tool file is a livelog tool "watch" running `bash -c script`. */
async function monitor(
  e2e: E2E,
  script: string,
  livelog: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<Monitor> {
  const base = await e2e.scope({ noTools: true });
  const scope = { ...base, env: { ...base.env, ...env } };
  await writeFile(
    join(scope.dir, '.ahma', 'tools', 'watch.json'),
    JSON.stringify({
      name: 'watch',
      description: 'Watch a test source for panics.',
      command: 'bash',
      tool_type: 'livelog',
      livelog: {
        source_command: 'bash',
        source_args: ['-c', script],
        detection_prompt: 'Report any line containing PANIC.',
        chunk_max_lines: 1,
        chunk_max_seconds: 1,
        cooldown_seconds: 0,
        llm_timeout_seconds: 5,
        ...livelog,
      },
    }),
  );
  const server = await e2e.inProcess(scope);
  const messages: Alert[] = [];
  const clientErrors: Error[] = [];
  server.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(notification.params);
  });
  server.client.onerror = (error) => clientErrors.push(error);
  return {
    server,
    scope,
    messages,
    clientErrors,
    async start() {
      const started = await server.call('watch', {});
      expect(started.isError ?? false).toBe(false);
      return structured<StartedResult>(started).operation_id;
    },
    alerts: () =>
      messages
        .filter((m) => m.level === 'warning' && m.logger === 'ahma')
        .map((m) => m.data as { operation_id: string; tool: string; alert: string; chunk: string }),
  };
}

async function statusOf(server: RunningServer, id: string): Promise<string | undefined> {
  const { operations } = structured<Operations>(await server.call('status', { ids: [id] }));
  return operations[0]?.status;
}

async function cancel(server: RunningServer, id: string): Promise<CommandResult> {
  const result = await server.call('cancel', { id });
  return structured<CommandResult>(result);
}

const provider = (llm: LlmServer) => ({ llm_provider: { base_url: llm.baseUrl, model: 'tiny' } });

describe.concurrent('livelog tools', { timeout: 60_000 }, () => {
  it('SPEC §2 livelog: a reply other than CLEAN is pushed as a warning alert with the chunk', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const m = await monitor(e2e, 'echo all good; sleep 0.3; echo PANIC in worker 3', provider(llm));
    const id = await m.start();
    const [finished] = structured<Operations>(
      await m.server.call('await', { ids: [id], timeout_seconds: 30 }),
    ).operations as CommandResult[];
    expect(m.alerts()).toEqual([
      {
        operation_id: id,
        tool: 'watch',
        alert: 'Issue: a panic was logged (PANIC in worker 3)',
        chunk: 'PANIC in worker 3',
      },
    ]);
    expect(m.clientErrors).toEqual([]);
    // What the endpoint got: the chunks, the model, the detection prompt.
    expect(llm.chunks()).toEqual(['all good', 'PANIC in worker 3']);
    expect(llm.requests[0]?.path).toBe('/v1/chat/completions');
    expect(llm.requests[0]?.model).toBe('tiny');
    expect(llm.requests[0]?.system).toContain('Report any line containing PANIC.');
    expect(llm.requests[0]?.authorization).toBeUndefined();
    // The source's output is the result, with what was checked and raised.
    expect(finished?.status).toBe('completed');
    expect(finished?.output).toBe(
      `all good\nPANIC in worker 3\nahma livelog: 2 chunks checked by tiny at ${llm.baseUrl}; 1 issue found; 1 alert raised\n`,
    );
  });

  it('SPEC §2 livelog: lines are chunked by chunk_max_lines, and the rest goes after chunk_max_seconds', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const m = await monitor(e2e, 'for i in 1 2 3 4 5 6 7; do echo line $i; done; sleep 300', {
      ...provider(llm),
      chunk_max_lines: 3,
      chunk_max_seconds: 2,
    });
    const id = await m.start();
    await waitFor(() => llm.requests.length >= 3, 'three chunks', 15_000);
    expect(llm.chunks()).toEqual(['line 1\nline 2\nline 3', 'line 4\nline 5\nline 6', 'line 7']);
    expect(await statusOf(m.server, id)).toBe('running');
    expect(m.alerts()).toEqual([]);
  });

  it('SPEC §2 livelog: a quiet source is still checked: a chunk goes chunk_max_seconds after its first line', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const m = await monitor(e2e, 'echo first; sleep 3; echo second; sleep 300', {
      ...provider(llm),
      chunk_max_lines: 50,
      chunk_max_seconds: 1,
    });
    await m.start();
    await waitFor(() => llm.requests.length >= 1, 'the first chunk', 15_000);
    // Sent while the source was still quiet, before its second line.
    expect(llm.chunks()).toEqual(['first']);
    await waitFor(() => llm.requests.length >= 2, 'the second chunk', 15_000);
    expect(llm.chunks()).toEqual(['first', 'second']);
  });

  it('SPEC §2 livelog: cooldown_seconds allows one alert; the issues found meanwhile are counted in the result', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const m = await monitor(e2e, 'for i in 1 2 3; do echo PANIC $i; sleep 0.3; done; sleep 300', {
      ...provider(llm),
      cooldown_seconds: 600,
    });
    const id = await m.start();
    await waitFor(() => llm.requests.length >= 3, 'three chunks', 15_000);
    await sleep(500);
    expect(m.alerts().map((a) => a.chunk)).toEqual(['PANIC 1']);
    const result = await cancel(m.server, id);
    expect(result.status).toBe('cancelled');
    expect(result.output).toContain(
      '3 issues found; 1 alert raised; 2 issues found during the last cooldown not raised',
    );
  });

  it('SPEC §2 livelog: an unreachable endpoint is reported once, the source keeps running, and the endpoint is used once it is back', async ({
    e2e,
  }) => {
    const llm = new LlmServer();
    e2e.onCleanup(() => llm.stop());
    const baseUrl = await llm.reservePort();
    const m = await monitor(e2e, 'while :; do echo PANIC tick; sleep 0.3; done', {
      llm_provider: { base_url: baseUrl, model: 'tiny' },
    });
    const id = await m.start();
    await waitFor(() => m.alerts().length >= 1, 'the endpoint error', 15_000);
    // Several more chunks fail meanwhile, without another report.
    await sleep(2000);
    const down = m.alerts();
    expect(down).toHaveLength(1);
    expect(down[0]?.operation_id).toBe(id);
    expect(down[0]?.alert).toMatch(
      new RegExp(
        `^livelog cannot check the output: could not reach ${baseUrl}/chat/completions: ECONNREFUSED`,
      ),
    );
    expect(await statusOf(m.server, id)).toBe('running');

    await llm.start();
    await waitFor(
      () => m.alerts().some((a) => a.alert.startsWith('Issue: a panic')),
      'an alert once the endpoint is back',
      15_000,
    );
    expect(m.alerts().filter((a) => a.alert.startsWith('livelog cannot'))).toHaveLength(1);
    expect(m.clientErrors).toEqual([]);
    const result = await cancel(m.server, id);
    expect(result.output).toMatch(/chunks? not checked: the endpoint failed/);
  });

  it('SPEC §2 livelog: llm_timeout_seconds bounds a request to an endpoint that never answers', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    llm.mode = 'hang';
    const m = await monitor(e2e, 'echo hello; sleep 300', {
      ...provider(llm),
      llm_timeout_seconds: 1,
    });
    const id = await m.start();
    const alert = await waitFor(() => m.alerts()[0], 'the timeout report', 20_000);
    expect(alert.alert).toContain(
      `${llm.baseUrl}/chat/completions did not answer within 1 s (llm_timeout_seconds)`,
    );
    expect(alert.chunk).toBe('hello');
    expect(await statusOf(m.server, id)).toBe('running');
  });

  it('SPEC §2 livelog: the API key reaches the endpoint as a bearer token and appears in no log, push or result', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const key = `sk-e2e-${uniqueMarker()}`;
    const m = await monitor(
      e2e,
      'echo one; sleep 1.5; echo two; sleep 300',
      { llm_provider: { base_url: llm.baseUrl, model: 'tiny', api_key: '${E2E_LLM_KEY}' } },
      { E2E_LLM_KEY: key },
    );
    const id = await m.start();
    await waitFor(() => llm.requests.length >= 1, 'the first chunk', 15_000);
    expect(llm.requests[0]?.authorization).toBe(`Bearer ${key}`);
    // An endpoint refusing the key echoes it back: the report must not carry it on.
    llm.mode = 'unauthorized';
    const alert = await waitFor(() => m.alerts()[0], 'the refusal report', 15_000);
    expect(alert.alert).toContain('answered HTTP 401');
    expect(alert.alert).toContain('[redacted]');
    const result = await cancel(m.server, id);
    const log = (await readLog(m.scope)).text;
    // The log is there (the audit line of the source names the operation), without the key.
    expect(log).toContain(id);
    const everything = [
      JSON.stringify(m.messages),
      JSON.stringify(result),
      m.server.stderr(),
      log,
    ].join('\n');
    expect(everything).not.toContain(key);
  });

  it('SPEC §2 livelog: the key is redacted from alert summaries, from reports cut at 200 characters, and as a 12-character piece', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const key = `sk-e2e-${uniqueMarker()}-${uniqueMarker()}`;
    llm.mode = 'issue-with-key';
    const m = await monitor(
      e2e,
      'echo one; sleep 2; echo two; sleep 300',
      { llm_provider: { base_url: llm.baseUrl, model: 'tiny', api_key: '${E2E_LLM_KEY}' } },
      { E2E_LLM_KEY: key },
    );
    const id = await m.start();
    await waitFor(() => llm.requests.length >= 1, 'the first chunk', 15_000);
    llm.mode = 'unauthorized-cut';
    const [issue, refusal] = await waitFor(
      () => (m.alerts().length >= 2 ? m.alerts() : undefined),
      'the issue alert and the refusal report',
      15_000,
    );
    expect(issue?.alert).toContain('the log shows Bearer [redacted], and a piece: [redacted].');
    expect(refusal?.alert).toContain('answered HTTP 401');
    expect(refusal?.alert).toContain('Bearer [redacted]');
    const result = await cancel(m.server, id);
    const everything = [
      JSON.stringify(m.messages),
      JSON.stringify(result),
      m.server.stderr(),
      (await readLog(m.scope)).text,
    ].join('\n');
    // Not even the 10 characters the cut at 200 would have left.
    expect(everything).not.toContain(key.slice(0, 10));
  });

  it('R7 livelog: the source runs confined: it cannot write outside the scope, and what it tried is checked', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const outside = await e2e.outsideDir();
    const m = await monitor(
      e2e,
      `echo x > ${outside}/escaped.txt; echo "outside rc=$?"; echo y > inside.txt; echo "inside rc=$?"; sleep 300`,
      { ...provider(llm), chunk_max_lines: 50, chunk_max_seconds: 1 },
    );
    const id = await m.start();
    await waitFor(() => llm.chunks().some((c) => c.includes('inside rc=')), 'the chunk', 15_000);
    const chunk = llm.chunks().join('\n');
    expect(chunk).toMatch(/Permission denied/);
    expect(chunk).toContain('outside rc=1');
    expect(chunk).toContain('inside rc=0');
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    expect(existsSync(join(m.scope.dir, 'inside.txt'))).toBe(true);
    await cancel(m.server, id);
  });

  it('SPEC §2 livelog: the tool is listed with the meta-parameters and says how alerts arrive', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const m = await monitor(e2e, 'true', provider(llm));
    const { tools } = await m.server.client.listTools();
    const watch = tools.find((tool) => tool.name === 'watch');
    expect(Object.keys(watch?.inputSchema.properties ?? {})).toEqual([
      'working_directory',
      'timeout_seconds',
      'max_output_tokens',
    ]);
    expect(watch?.description).toContain('notifications/message warning');
    const started = await m.server.call('watch', { bogus: 1 });
    expect(started.isError).toBe(true);
    expect(textOf(started)).toContain('bogus');
  });
});

// Alone: it checks that the server has no zombie child, and the server in this process is the
// parent of every other test's processes too.
describe('livelog tools, cancelled', { timeout: 60_000 }, () => {
  it('SPEC §3 cancel: cancelling a livelog operation kills its source tree; no process of it survives', async ({
    e2e,
  }) => {
    const llm = await endpoint(e2e);
    const marker = uniqueMarker();
    const m = await monitor(
      e2e,
      [
        `setsid bash -c 'exec -a ${marker}-grandchild sleep 300' </dev/null >/dev/null 2>&1 &`,
        `echo watching; exec -a ${marker}-child sleep 300`,
      ].join('\n'),
      provider(llm),
    );
    const id = await m.start();
    const seen = await waitFor(async () => {
      const found = await processesMatching(marker);
      return found.length >= 2 ? found : undefined;
    }, 'the source processes');
    await waitFor(() => llm.requests.length >= 1, 'the first chunk', 15_000);
    const result = await cancel(m.server, id);
    expect(result.status).toBe('cancelled');
    expect(result.output).toBe(
      `watching\nahma livelog: 1 chunk checked by tiny at ${llm.baseUrl}; 0 issues found; 0 alerts raised\n`,
    );
    expect(seen.filter((info) => existsSync(`/proc/${String(info.pid)}`))).toEqual([]);
    expect(await processesMatching(marker)).toEqual([]);
    expect((await descendantsOf(m.server.pid)).filter((info) => info.state === 'Z')).toEqual([]);
    expect(await statusOf(m.server, id)).toBe('cancelled');
  });
});
