// SPEC §6: the id of an oversized request is recovered from its kept head or tail only where it is
// certainly the top-level id of a request; otherwise the answer carries id null.
import { describe, expect, it } from 'vitest';
import { recoverId, tooLarge } from '../../src/jsonrpc/oversized.js';

const big = 'x'.repeat(10_000);
/** The first and last 4 KiB of a serialised message, as the framer keeps them. */
const ends = (message: unknown): [string, string] => {
  const line = JSON.stringify(message);
  return [line.slice(0, 4096), line.slice(-4096)];
};

describe('recoverId', () => {
  it('SPEC §6: finds the id last (TypeScript SDK order) or among the leading scalar members (Python SDK order)', () => {
    expect(
      recoverId(...ends({ method: 'tools/call', params: { big }, jsonrpc: '2.0', id: 7 })),
    ).toBe(7);
    expect(recoverId(...ends({ jsonrpc: '2.0', id: 'a"b', method: 'x', params: { big } }))).toBe(
      'a"b',
    );
    expect(recoverId(...ends({ jsonrpc: '2.0', method: 'x', id: -3, params: { big } }))).toBe(-3);
  });

  it('SPEC §6: gives null for responses, ids nested in params, non-integer ids and garbage', () => {
    expect(recoverId(...ends({ jsonrpc: '2.0', id: 4, result: { big } }))).toBeNull();
    expect(recoverId(...ends({ method: 'x', params: { big, id: 5 } }))).toBeNull();
    expect(recoverId(...ends({ method: 'x', params: { big }, id: 1.5 }))).toBeNull();
    expect(recoverId(...ends({ params: { big }, method: 'x', id: 6 }))).toBeNull();
    expect(recoverId(big, big)).toBeNull();
    // A head cut inside a value still names the method; a bad escape the pattern lets through is
    // skipped rather than thrown.
    expect(recoverId('{"method":"x","params":"cut', ',"id":8}')).toBe(8);
    expect(recoverId('{"method":"x","k":"\\q","id":3,', '')).toBe(3);
  });

  it('SPEC §6: the error is -32600 and says the size and the limit in one line', () => {
    const [head, tail] = ends({ method: 'x', params: { big }, jsonrpc: '2.0', id: 9 });
    expect(tooLarge(Buffer.from(head), Buffer.from(tail), 20_000, 10_000)).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: {
        code: -32600,
        message:
          'Invalid Request: message of 20000 bytes exceeds the limit of 10000 bytes; it was discarded',
      },
    });
  });
});
