// What still runs in an isolated session's process (R8.4), learnt from the session's traffic: the
// client's tools/call requests not answered yet, and the operations its process reported running
// (an answer `started` or `running`, a task `working`) until a completion push, a task status, or
// an answer of `status`/`await`/`cancel` shows them ended. What the traffic cannot show (a push the
// client's log level filtered, a process restarted after a crash, which takes its commands along)
// is settled by asking the process: while some operation is thought to run, every
// `ACTIVITY_PROBE_MS` and whenever the process changed, a `status` call of its own is sent, whose
// answer never reaches the client, and only the operations it lists as running are kept.
import { randomBytes } from 'node:crypto';
import { BUILTIN_TOOLS } from '@ahma/core';
import type {
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { cancelledRequestId, classify, isRequestId } from '../../../jsonrpc/message-kind.js';
import { keyOf } from '../../../jsonrpc/request-key.js';

/** While operations are thought to run, their process is asked this often which still do. */
export const ACTIVITY_PROBE_MS = 30_000;
/** A probe not answered by then is given up, and another may be sent. */
const PROBE_TIMEOUT_MS = 60_000;

const RUNNING = new Set(['started', 'running', 'working', 'input_required']);
const ENDED = new Set(['completed', 'failed', 'timed_out', 'cancelled']);

export interface ActivityOptions {
  /** The pid of the session's process now: a new one has none of the old one's operations. */
  readonly pid: () => number | undefined;
  /** Default ACTIVITY_PROBE_MS. */
  readonly probeIntervalMs?: number;
}

export interface SessionActivity {
  /** Give this to the isolated session instead of the client's transport. */
  readonly transport: Transport;
  /** The client's tools/call requests not answered yet, and the operations still running. */
  runningOperations(): number;
  /** Stops counting and asking (the session is closing). */
  close(): void;
}

/**
 * Watches the traffic of an isolated session through `upstream` (the client's transport) and
 * counts what still runs in its process; the returned transport passes everything on unchanged,
 * but for the answers to its own probes, which it keeps.
 */
export function observeActivity(upstream: Transport, options: ActivityOptions): SessionActivity {
  return new Activity(upstream, options);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

class Activity implements SessionActivity {
  readonly transport: Transport;
  readonly #upstream: Transport;
  readonly #pid: () => number | undefined;
  readonly #probeIntervalMs: number;
  /** The client's tools/call requests not answered yet. */
  readonly #calls = new Set<string>();
  /** Operations last seen running → when (#tick) they were, and by which process. */
  readonly #operations = new Map<string, { tick: number; pid: number | undefined }>();
  /** Counts what was learnt, so a probe's answer only judges what was known before it was sent. */
  #tick = 0;
  /** The isolated session's handler of the client's messages (probes are handed to it too). */
  #deliver: ((message: JSONRPCMessage, extra?: MessageExtraInfo) => void) | undefined;
  readonly #probePrefix = `ahma-activity-${randomBytes(6).toString('hex')}:`;
  #probes = 0;
  #probe:
    | {
        readonly key: string;
        readonly sentAt: number;
        readonly tick: number;
        readonly pid: number;
      }
    | undefined;
  /** When the process was last asked, or the first of the operations thought to run was learnt. */
  #checkedAt = 0;
  #closed = false;

  constructor(upstream: Transport, options: ActivityOptions) {
    this.#upstream = upstream;
    this.#pid = options.pid;
    this.#probeIntervalMs = options.probeIntervalMs ?? ACTIVITY_PROBE_MS;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the accessors below need it
    const activity = this;
    this.transport = {
      start: () => upstream.start(),
      close: () => upstream.close(),
      send: (message, sendOptions) => activity.#send(message, sendOptions),
      get onclose() {
        return upstream.onclose;
      },
      set onclose(handler) {
        upstream.onclose = handler;
      },
      get onerror() {
        return upstream.onerror;
      },
      set onerror(handler) {
        upstream.onerror = handler;
      },
      get onmessage() {
        return activity.#deliver;
      },
      set onmessage(handler) {
        activity.#deliver = handler;
        upstream.onmessage =
          handler === undefined
            ? undefined
            : (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
                activity.#fromClient(message);
                handler(message, extra);
              };
      },
      get sessionId() {
        return upstream.sessionId;
      },
    };
  }

  runningOperations(): number {
    this.#reconcile();
    return this.#calls.size + this.#operations.size;
  }

  close(): void {
    this.#closed = true;
    this.#calls.clear();
    this.#operations.clear();
  }

  #fromClient(message: JSONRPCMessage): void {
    if (this.#closed) return;
    const classified = classify(message);
    if (classified?.kind === 'request') {
      if (classified.message.method === 'tools/call') this.#calls.add(keyOf(classified.message.id));
    } else if (classified?.kind === 'notification') {
      // A cancelled request is not answered.
      const id = cancelledRequestId(classified.message);
      if (id !== undefined) this.#calls.delete(keyOf(id));
    }
  }

  #send(message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    if ('id' in message && isRequestId(message.id) && this.#isProbe(message.id)) {
      if (!('method' in message)) this.#probeAnswered(message);
      return Promise.resolve();
    }
    if (!this.#closed) this.#fromServer(message);
    // A question asked on a probe's behalf (roots/list) goes on the session's stream instead.
    const related = options?.relatedRequestId;
    if (related !== undefined && this.#isProbe(related)) {
      return this.#upstream.send(message, { ...options, relatedRequestId: undefined });
    }
    return this.#upstream.send(message, options);
  }

  #fromServer(message: JSONRPCMessage): void {
    // A request (the process asking the client something) says nothing of what runs.
    const classified = classify(message);
    if (classified?.kind === 'notification') {
      const { method, params } = classified.message;
      if (method === 'notifications/message') this.#learn(params?.['data']);
      else if (method === 'notifications/tasks/status') this.#learn(params);
    } else if (classified?.kind === 'response') {
      this.#calls.delete(keyOf(classified.message.id));
      if ('result' in classified.message) this.#learn(classified.message.result);
    }
  }

  /**
   * What a result or push says of operations: a command's (`operation_id`, `status`), a task's
   * (`taskId`, `status`), and the lists of `status`/`await` (`operations`) and tasks/list.
   */
  #learn(value: unknown): void {
    if (!isRecord(value)) return;
    this.#note(value['operation_id'], value['status']);
    this.#note(value['taskId'], value['status']);
    for (const key of ['structuredContent', 'task']) this.#learn(value[key]);
    for (const key of ['operations', 'tasks']) {
      const list = value[key];
      if (Array.isArray(list)) for (const item of list) this.#learn(item);
    }
  }

  #note(id: unknown, status: unknown): void {
    if (typeof id !== 'string' || typeof status !== 'string') return;
    if (RUNNING.has(status)) {
      if (this.#operations.size === 0) this.#checkedAt = Date.now();
      this.#operations.set(id, { tick: ++this.#tick, pid: this.#pid() });
    } else if (ENDED.has(status)) {
      this.#operations.delete(id);
    }
  }

  #isProbe(id: RequestId): boolean {
    return typeof id === 'string' && id.startsWith(this.#probePrefix);
  }

  /** Asks the process which operations still run, when the traffic may not have said. */
  #reconcile(): void {
    if (this.#closed || this.#deliver === undefined) return;
    const pid = this.#pid();
    const now = Date.now();
    if (this.#operations.size === 0) return;
    if (this.#probe !== undefined && now - this.#probe.sentAt < PROBE_TIMEOUT_MS) return;
    // Between two processes: the next one is asked.
    if (pid === undefined) return;
    // Operations of a process that was replaced: the new one is asked at once.
    const moved = [...this.#operations.values()].some((operation) => operation.pid !== pid);
    if (!moved && now - this.#checkedAt < this.#probeIntervalMs) return;
    this.#checkedAt = now;
    const id = `${this.#probePrefix}${String(++this.#probes)}`;
    this.#probe = { key: keyOf(id), sentAt: now, tick: this.#tick, pid };
    const deliver = this.#deliver;
    // Not from inside the caller (the session table's sweep): the session handles it on its own.
    queueMicrotask(() =>
      deliver({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: BUILTIN_TOOLS.status, arguments: {} },
      }),
    );
  }

  #probeAnswered(message: JSONRPCMessage): void {
    const probe = this.#probe;
    if (probe === undefined || !('id' in message) || !isRequestId(message.id)) return;
    if (keyOf(message.id) !== probe.key) return; // a probe given up on
    this.#probe = undefined;
    if (this.#closed || !('result' in message)) return; // not known: what is counted stays
    const content = message.result['structuredContent'];
    const listed = isRecord(content) ? content['operations'] : undefined;
    if (!Array.isArray(listed)) return;
    const running = new Set<string>();
    for (const operation of listed) {
      if (isRecord(operation) && typeof operation['operation_id'] === 'string') {
        if (operation['status'] === 'running') running.add(operation['operation_id']);
      }
    }
    for (const [id, operation] of this.#operations) {
      if (operation.tick > probe.tick) continue; // learnt after the question: newer than its answer
      if (running.has(id)) operation.pid = probe.pid;
      else this.#operations.delete(id);
    }
    for (const id of running) {
      if (!this.#operations.has(id)) {
        this.#operations.set(id, { tick: ++this.#tick, pid: probe.pid });
      }
    }
  }
}
