// R8.4 with --session-isolation (R8D): what an isolated session still runs, as its backend counts
// it from the session's traffic (transports/http/session/session-activity.ts), and the `status`
// probe that settles what the traffic cannot show (a completion push the client's log level
// filtered, a process that was replaced). A fake client transport; the isolated session's side is
// whatever the test hands the returned transport.
import type {
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  observeActivity,
  type SessionActivity,
} from '../../../../src/transports/http/session/session-activity.js';

/** The client's transport: what the session sent it, and a way to make the client send. */
class FakeClient implements Transport {
  readonly sent: { message: JSONRPCMessage; options: TransportSendOptions | undefined }[] = [];
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly sessionId = 'session-1';
  start(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push({ message, options });
    return Promise.resolve();
  }
  /** The client sends `message`. */
  say(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}

interface Setup {
  readonly client: FakeClient;
  readonly activity: SessionActivity;
  /** What reached the isolated session's side (the client's messages and the probes). */
  readonly received: JSONRPCMessage[];
  setPid(pid: number | undefined): void;
  /** The session's side answers (or pushes) `message` to the client. */
  answer(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
  /** The probes sent so far. */
  probes(): JSONRPCRequest[];
}

function setup(probeIntervalMs = 60_000): Setup {
  const client = new FakeClient();
  let pid: number | undefined = 100;
  const activity = observeActivity(client, { pid: () => pid, probeIntervalMs });
  const received: JSONRPCMessage[] = [];
  activity.transport.onmessage = (message) => received.push(message);
  return {
    client,
    activity,
    received,
    setPid: (next) => (pid = next),
    answer: (message, options) => activity.transport.send(message, options),
    probes: () =>
      received.filter(
        (message): message is JSONRPCRequest =>
          'method' in message &&
          'id' in message &&
          typeof message.id === 'string' &&
          message.id.startsWith('ahma-activity-'),
      ),
  };
}

const call = (id: number, name = 'sandboxed_shell'): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

const started = (id: number, operation: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  result: {
    content: [{ type: 'text', text: `Started as operation ${operation}` }],
    structuredContent: { operation_id: operation, status: 'started', tool: 'sandboxed_shell' },
  },
});

const pushed = (operation: string, status: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', logger: 'ahma', data: { operation_id: operation, status } },
});

const flush = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('what an isolated session still runs', () => {
  it('R8D R8.4: a tools/call counts until it is answered or cancelled; other requests do not', async () => {
    const { client, activity, received, answer } = setup();
    client.say(call(1));
    client.say({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    client.say(call(3));
    expect(received).toHaveLength(3);
    expect(activity.runningOperations()).toBe(2);
    await answer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    expect(activity.runningOperations()).toBe(1);
    client.say({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
    expect(activity.runningOperations()).toBe(0);
    // Answers reach the client unchanged.
    expect(client.sent.map((sent) => sent.message)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [] } },
    ]);
  });

  it('R8D R8.4: an operation answered `started` counts until its completion push, a task until its terminal status, and `status`/`await` answers settle both ways', async () => {
    const { client, activity, answer } = setup();
    client.say(call(1));
    await answer(started(1, 'op-1'));
    expect(activity.runningOperations()).toBe(1);
    // A livelog alert is no end.
    await answer({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'warning', logger: 'ahma', data: { operation_id: 'op-1', alert: 'x' } },
    });
    expect(activity.runningOperations()).toBe(1);
    await answer(pushed('op-1', 'completed'));
    expect(activity.runningOperations()).toBe(0);

    client.say(call(2));
    await answer({
      jsonrpc: '2.0',
      id: 2,
      result: { task: { taskId: 'op-2', status: 'working' } },
    });
    expect(activity.runningOperations()).toBe(1);
    await answer({
      jsonrpc: '2.0',
      method: 'notifications/tasks/status',
      params: { taskId: 'op-2', status: 'failed' },
    });
    expect(activity.runningOperations()).toBe(0);

    client.say(call(3));
    await answer(started(3, 'op-3'));
    client.say(call(4, 'await'));
    expect(activity.runningOperations()).toBe(2);
    await answer({
      jsonrpc: '2.0',
      id: 4,
      result: {
        content: [],
        structuredContent: {
          operations: [
            { operation_id: 'op-3', status: 'timed_out' },
            { operation_id: 'op-4', status: 'running' },
          ],
        },
      },
    });
    expect(activity.runningOperations()).toBe(1); // op-4, which the process says runs
  });

  it('R8D R8.4: a push that never came (the client log level filtered it) is settled by a `status` probe the client never sees, which keeps what was learnt after it was sent', async () => {
    const { client, activity, answer, probes } = setup(30);
    client.say(call(1));
    await answer(started(1, 'op-1'));
    expect(activity.runningOperations()).toBe(1);
    await flush();
    expect(probes()).toHaveLength(0); // not before the interval
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(activity.runningOperations()).toBe(1);
    await flush();
    const [probe] = probes();
    expect(probe).toMatchObject({
      method: 'tools/call',
      params: { name: 'status', arguments: {} },
    });
    // One probe at a time.
    activity.runningOperations();
    await flush();
    expect(probes()).toHaveLength(1);

    // Meanwhile another operation starts; the probe's answer predates it.
    client.say(call(2));
    await answer(started(2, 'op-2'));
    const sentBefore = client.sent.length;
    await answer({
      jsonrpc: '2.0',
      id: probe?.id ?? '',
      result: {
        content: [],
        structuredContent: { operations: [{ operation_id: 'op-1', status: 'completed' }] },
      },
    });
    expect(client.sent).toHaveLength(sentBefore); // the probe's answer is kept from the client
    expect(activity.runningOperations()).toBe(1); // op-2
  });

  it('R8D R8.4: a new process (a crash and restart) is asked at once, and the operations it does not know are dropped', async () => {
    const { client, activity, answer, probes, setPid } = setup();
    client.say(call(1));
    await answer(started(1, 'op-1'));
    expect(activity.runningOperations()).toBe(1);
    await flush();
    expect(probes()).toHaveLength(0);
    setPid(undefined); // between two processes: nobody to ask
    expect(activity.runningOperations()).toBe(1);
    await flush();
    expect(probes()).toHaveLength(0);
    setPid(101);
    activity.runningOperations();
    await flush();
    const [probe] = probes();
    expect(probe).toBeDefined();
    await answer({
      jsonrpc: '2.0',
      id: probe?.id ?? '',
      result: { content: [], structuredContent: { operations: [] } },
    });
    expect(activity.runningOperations()).toBe(0);
  });

  it('R8D: a question the session asks on behalf of a probe (roots/list) goes to the client on its stream, not on the probe', async () => {
    const { client, activity, answer, probes } = setup(0);
    client.say(call(1));
    await answer(started(1, 'op-1'));
    activity.runningOperations();
    await flush();
    const [probe] = probes();
    await answer(
      { jsonrpc: '2.0', id: 'roots-1', method: 'roots/list' },
      { relatedRequestId: probe?.id ?? '' },
    );
    const last = client.sent.at(-1);
    expect(last?.message).toMatchObject({ method: 'roots/list' });
    expect(last?.options?.relatedRequestId).toBeUndefined();
  });

  it('R8D: the transport handed to the isolated session is the client transport: close, session id, and handlers chained on it', async () => {
    const { client, activity } = setup();
    let closed = false;
    activity.transport.onclose = () => (closed = true);
    client.onclose?.();
    expect(closed).toBe(true);
    expect(activity.transport.sessionId).toBe('session-1');
    activity.close();
    client.say(call(9));
    expect(activity.runningOperations()).toBe(0);
    await activity.transport.close();
  });
});
