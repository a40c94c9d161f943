// What serves an HTTP session's transport: a connection over the process's runtime (shared mode),
// or, with --session-isolation (R8D), a process of its own on the client's first root
// (mcp/isolated-session.ts). The session files (streamable-session.ts, legacy-session.ts) handle
// the HTTP side the same way for both.
//
// Both say truthfully how many of the session's commands still run (R8.4: a session with a running
// command is neither swept as idle nor ended to make room, or the command would be killed). Shared
// mode counts the operations its connection started. An isolated session's run in its process, so
// its backend watches the session's traffic (`observeActivity`): the client's tools/call requests
// not answered yet, and the operations its process reported running (an answer `started` or
// `running`, a task `working`) until a completion push, a task status, or an answer of
// `status`/`await`/`cancel` shows them ended. What the traffic cannot show (a push the client's log
// level filtered, a process restarted after a crash, which takes its commands along) is settled by
// asking the process: while some operation is thought to run, every `ACTIVITY_PROBE_MS` and
// whenever the process changed, the backend sends it a `status` call of its own, whose answer never
// reaches the client, and keeps only the operations it lists as running.
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
import type { Runtime } from '../../runtime.js';
import type { ChildCommand } from '../../sessions/child.js';
import type { RootPolicy } from '../../sessions/root-scope.js';
import { createIsolatedSession, type IsolatedSession } from '../isolated-session.js';
import { createMcpServer, type ConnectionHeld } from '../server.js';
import { echo, type TrafficEcho } from './echo.js';
import { answerRefusals } from './refusals.js';

/** --session-isolation: what every session process is started from. */
export interface IsolationSettings {
  /** The server's scope, for a client without roots (R8D.9). */
  readonly defaultScope: string;
  /** What a client's root is checked against (allowed roots, private state, …). */
  readonly roots: RootPolicy;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** ahma-shell --mode stdio with the server's flags (sessions/child-command.ts). */
  readonly childCommand: ChildCommand;
}

export interface SessionBackend {
  /** Commands this session started that still run, and its calls not answered yet (isolated). */
  runningOperations(): number;
  /** What its connection holds (shared mode; undefined for an isolated session's process). */
  held(): ConnectionHeld | undefined;
  /** Why later requests are refused with 403, once the client changed its roots (R8D.13). */
  readonly forbidden: string | undefined;
  /** Ends what serves the session: its running commands are killed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts serving `transport` (do not start it yourself; set its onclose first, which is chained).
 * A request whose protocol params are wrong is answered -32602 on it (refusals.ts).
 */
export async function serveSession(
  transport: Transport,
  runtime: Runtime,
  isolation: IsolationSettings | undefined,
  traffic: TrafficEcho | undefined,
): Promise<SessionBackend> {
  if (isolation !== undefined) {
    let session: IsolatedSession | undefined = undefined;
    const activity = observeActivity(transport, { pid: () => session?.childPid });
    session = createIsolatedSession({
      upstream: activity.transport,
      ...isolation,
      logger: runtime.logger,
    });
    const isolated = session;
    // Wrong protocol params are answered here, as in shared mode (its process would answer them
    // the same way: the check is every transport's).
    answerRefusals(transport);
    // For the memory budget of the session processes (transports/http/sessions.ts).
    const sessionProcess: SessionProcess = {
      get sessionId() {
        return transport.sessionId;
      },
      get pid() {
        return isolated.childPid;
      },
      get live() {
        return isolated.terminated === undefined;
      },
    };
    const processes = liveProcesses.get(isolation) ?? new Set<SessionProcess>();
    liveProcesses.set(isolation, processes);
    processes.add(sessionProcess);
    let closing: Promise<void> | undefined;
    return {
      // A session that ended by itself has no process, and so no command, left.
      runningOperations: () =>
        isolated.terminated === undefined ? activity.runningOperations() : 0,
      held: () => undefined,
      get forbidden() {
        return isolated.terminated === 'roots_changed'
          ? 'Forbidden: the session ended because the client changed its roots after its sandbox scope was locked'
          : undefined;
      },
      close: () =>
        (closing ??= (async () => {
          activity.close();
          await isolated.close();
          processes.delete(sessionProcess);
        })()),
    };
  }
  const connection = createMcpServer(runtime);
  // Refused requests and the SDK's protocol errors would otherwise vanish without a trace.
  connection.server.onerror = (error) => {
    runtime.logger.warn({ err: error }, 'MCP protocol error');
    echo(traffic, 'error', error.message);
  };
  await connection.server.connect(transport);
  answerRefusals(transport);
  return {
    runningOperations: () => connection.runningOperations(),
    held: () => connection.held(),
    forbidden: undefined,
    close: () => connection.close(),
  };
}

/** An isolated session's process, for the memory budget of the session processes (R8.4). */
export interface SessionProcess {
  /** The id of the session it serves, once it has one. */
  readonly sessionId: string | undefined;
  /** Its pid; undefined between two processes. */
  readonly pid: number | undefined;
  /** False once the session ended by itself: it has no process any more. */
  readonly live: boolean;
}

/** The isolated sessions of each server (its IsolationSettings) whose backend is not closed. */
const liveProcesses = new WeakMap<IsolationSettings, Set<SessionProcess>>();

/**
 * The processes of the isolated sessions served with `isolation` (a server's), starting or live;
 * a session's leaves the list once its close() has stopped it.
 */
export function sessionProcesses(isolation: IsolationSettings | undefined): SessionProcess[] {
  return isolation === undefined ? [] : [...(liveProcesses.get(isolation) ?? [])];
}

// ── What an isolated session still runs ───────────────────────────────────────────────────────────

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

const isId = (value: unknown): value is RequestId =>
  typeof value === 'string' || typeof value === 'number';

/** A map key for a request id (1 and "1" are different ids). */
const keyOf = (id: RequestId): string => `${typeof id}:${String(id)}`;

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
    if (this.#closed || !('method' in message)) return;
    if ('id' in message) {
      if (message.method === 'tools/call') this.#calls.add(keyOf(message.id));
      return;
    }
    if (message.method === 'notifications/cancelled') {
      // A cancelled request is not answered.
      const id = message.params?.['requestId'];
      if (isId(id)) this.#calls.delete(keyOf(id));
    }
  }

  #send(message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    if ('id' in message && isId(message.id) && this.#isProbe(message.id)) {
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
    if ('method' in message) {
      if ('id' in message) return; // the process asking the client something
      if (message.method === 'notifications/message') this.#learn(message.params?.['data']);
      else if (message.method === 'notifications/tasks/status') this.#learn(message.params);
      return;
    }
    if (!('id' in message) || !isId(message.id)) return;
    this.#calls.delete(keyOf(message.id));
    if ('result' in message) this.#learn(message.result);
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
    if (probe === undefined || !('id' in message) || !isId(message.id)) return;
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
