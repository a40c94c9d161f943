// The answer to a line over the stdio limit (SPEC §6): -32600 with the request's id when its kept
// head and tail show it cheaply, else null. The line itself is gone (discarded as it streamed), so
// the id is read with two anchored patterns, not a parser:
// - the head's leading run of members with scalar values (`{"jsonrpc":"2.0","id":3,"method":…`,
//   the order of Python's SDK), which are top-level members by construction;
// - the tail's last member (`…,"jsonrpc":"2.0","id":3}`, the order of the TypeScript SDK): the
//   final `}` closes the top-level object, so the member right before it is a top-level one.
// Only lines whose head shows a "method" are requests; a response's id would name one of the
// server's own requests and mislead the client, so it is never echoed.
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { RpcCode } from './codes.js';
import { errorResponse, type ErrorResponse } from './incoming.js';

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const SCALAR = String.raw`${STRING}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null`;
/** One `"key": scalar` member followed by `,` or `}`. */
const MEMBER = String.raw`\s*(${STRING})\s*:\s*(${SCALAR})\s*([,}])`;
const OPEN = /^\s*\{/;
/** A last member `"id": <string or integer>` closing the object. */
const TAIL_ID = new RegExp(String.raw`[{,]\s*"id"\s*:\s*(${STRING}|-?\d+)\s*\}\s*$`);

export function tooLarge(head: Buffer, tail: Buffer, size: number, limit: number): ErrorResponse {
  return errorResponse(
    recoverId(head.toString('utf8'), tail.toString('utf8')),
    RpcCode.InvalidRequest,
    `Invalid Request: message of ${String(size)} bytes exceeds the limit of ${String(limit)} bytes; it was discarded`,
  );
}

/** The request id of an oversized line, from its first and last bytes; null when not evident. */
export function recoverId(head: string, tail: string): RequestId | null {
  const leading = leadingMembers(head);
  if (typeof leading.get('method') !== 'string') return null;
  const id = leading.has('id') ? leading.get('id') : tailId(tail);
  if (typeof id === 'string' || Number.isSafeInteger(id)) return id as RequestId;
  return null;
}

/** The members at the start of the object whose values are scalars, up to the first that is not. */
function leadingMembers(head: string): Map<string, unknown> {
  const members = new Map<string, unknown>();
  const open = OPEN.exec(head);
  if (open === null) return members;
  // Sticky: each member must start where the previous one ended. A fresh RegExp per call, since
  // a sticky one carries its position (lastIndex) between uses.
  const member = new RegExp(MEMBER, 'y');
  member.lastIndex = open[0].length;
  for (let match = member.exec(head); match !== null; match = member.exec(head)) {
    const [, key = '""', value = 'null', end] = match;
    const parsedKey = parseJson(key);
    if (typeof parsedKey !== 'string') break;
    members.set(parsedKey, parseJson(value));
    if (end === '}') break;
  }
  return members;
}

function tailId(tail: string): unknown {
  const match = TAIL_ID.exec(tail);
  return match?.[1] === undefined ? undefined : parseJson(match[1]);
}

/** JSON.parse, or undefined for text the patterns let through but JSON refuses (a bad escape). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
