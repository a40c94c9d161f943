// R8B: with --log-to-stderr in HTTP mode every JSON-RPC message is echoed, pretty-printed with two
// spaces: what the client sent as `→ STDIN:`, what the server sent as `← STDOUT:`, error answers
// and protocol errors as `⚠ STDERR:` (the words of the stdio bridge this mode replaced, so people
// reading a session know which way each message went). Text that is not JSON is shown as it is.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface TrafficEcho {
  /** Receives each echoed block (ending with a newline). */
  readonly write: (text: string) => void;
  /** ANSI colours on the prefixes (a terminal). */
  readonly colour: boolean;
}

export type EchoDirection = 'in' | 'out' | 'error';

const PREFIX: Record<EchoDirection, { text: string; colour: string }> = {
  in: { text: '→ STDIN:', colour: '\u001b[36m' },
  out: { text: '← STDOUT:', colour: '\u001b[32m' },
  error: { text: '⚠ STDERR:', colour: '\u001b[31m' },
};

/** One echoed block: the prefix, then the message pretty-printed (or the text as it is). */
export function formatEcho(direction: EchoDirection, payload: unknown, colour: boolean): string {
  const { text, colour: code } = PREFIX[direction];
  const prefix = colour ? `${code}${text}\u001b[0m` : text;
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload, null, 2);
  return `${prefix} ${body}\n`;
}

export function echo(sink: TrafficEcho | undefined, direction: EchoDirection, payload: unknown) {
  sink?.write(formatEcho(direction, payload, sink.colour));
}

/** Echoes every message `transport` receives and sends (call after the server connected it). */
export function echoTraffic(transport: Transport, sink: TrafficEcho | undefined): void {
  if (sink === undefined) return;
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    echo(sink, 'in', message);
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    echo(sink, 'error' in message ? 'error' : 'out', message);
    return send(message, options);
  };
}
