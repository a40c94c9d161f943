// SPEC §6: each line is a message or the JSON-RPC error for it, in one clear line: -32700 for
// what is not JSON, -32600 for JSON that is not a JSON-RPC 2.0 message, -32602 for the protocol
// params of a request the server serves.
import { describe, expect, it } from 'vitest';
import { readLine } from '../../src/jsonrpc/incoming.js';
import { paramsProblem } from '../../src/jsonrpc/params.js';

const errorOf = (line: string) => {
  const incoming = readLine(line);
  if (!('error' in incoming)) throw new Error(`accepted: ${line}`);
  return incoming.error;
};

describe('readLine', () => {
  it('SPEC §6: accepts requests, notifications and responses', () => {
    for (const line of [
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":"s","result":{}}',
      '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}',
    ]) {
      expect(readLine(line), line).toHaveProperty('message');
    }
  });

  it('SPEC §6: not JSON is -32700 Parse error with id null', () => {
    expect(errorOf('{"id":1,')).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error: \S.*$/) },
    });
  });

  it('SPEC §6: JSON that is not a JSON-RPC message is -32600, with the id of a request-shaped one', () => {
    expect(errorOf('{"jsonrpc":"2.0","id":7,"method":5}')).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32600, message: 'Invalid Request: "method" must be a string' },
    });
    expect(errorOf('{"jsonrpc":"1.0","id":"a","method":"x"}').error.message).toBe(
      'Invalid Request: "jsonrpc" must be "2.0"',
    );
    expect(errorOf('{"id":1,"method":"x"}').error.message).toBe(
      'Invalid Request: "jsonrpc" is required',
    );
    expect(errorOf('{"jsonrpc":"2.0","id":1.5,"method":"x"}')).toMatchObject({
      id: null,
      error: { message: 'Invalid Request: "id" must be a string or an integer' },
    });
    expect(errorOf('{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}').error.message).toBe(
      'Invalid Request: "params" must be an object',
    );
    expect(errorOf('{"jsonrpc":"2.0","id":1,"method":"x","extra":0}').error.message).toBe(
      'Invalid Request: unexpected key "extra"',
    );
    expect(errorOf('[]')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(errorOf('"text"')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(errorOf('{"jsonrpc":"2.0","id":3}')).toMatchObject({
      id: null,
      error: { code: -32600 },
    });
    // A bad response's id is one of the server's own: it is not echoed.
    expect(errorOf('{"jsonrpc":"2.0","id":3,"error":{"code":"x"}}')).toMatchObject({
      id: null,
      error: { code: -32600, message: 'Invalid Request: "error.code" must be a number' },
    });
  });
});

describe('readLine batches', () => {
  it('SPEC §6: a JSON array is a batch whose elements are each checked like a line', () => {
    const line = readLine(
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},5,{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"x","method":7}]',
    );
    if (!('batch' in line)) throw new Error(`not a batch: ${JSON.stringify(line)}`);
    expect(line.batch).toEqual([
      { message: { jsonrpc: '2.0', id: 1, method: 'ping' } },
      {
        error: {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'Invalid Request: a message must be a JSON object' },
        },
      },
      { message: { jsonrpc: '2.0', method: 'notifications/initialized' } },
      {
        error: {
          jsonrpc: '2.0',
          id: 'x',
          error: { code: -32600, message: 'Invalid Request: "method" must be a string' },
        },
      },
    ]);
  });

  it('SPEC §6: an empty batch is one -32600 error, not an array', () => {
    expect(errorOf('[]')).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: an empty batch' },
    });
  });
});

describe('paramsProblem', () => {
  const request = (method: string, params: unknown) =>
    ({ jsonrpc: '2.0', id: 1, method, params }) as Parameters<typeof paramsProblem>[0];

  it('SPEC §6: names the wrong field of a served request in one line', () => {
    expect(paramsProblem(request('tools/call', { name: 'a', arguments: 'x' }))).toBe(
      'tools/call: "arguments" must be an object',
    );
    expect(paramsProblem(request('tools/call', { name: 'a', _meta: { progressToken: {} } }))).toBe(
      'tools/call: "_meta.progressToken" must be a string or a number',
    );
    expect(paramsProblem(request('tools/call', undefined))).toBe(
      'tools/call: "params" is required',
    );
    expect(paramsProblem(request('initialize', { protocolVersion: 1 }))).toBe(
      'initialize: "protocolVersion" must be a string',
    );
  });

  it('SPEC §6: logging/setLevel (served with the logging capability, R2.2) names a bad level', () => {
    expect(paramsProblem(request('logging/setLevel', { level: 'loud' }))).toMatch(
      /^logging\/setLevel: "level" /,
    );
    expect(paramsProblem(request('logging/setLevel', { level: 'warning' }))).toBeUndefined();
  });

  it('SPEC §6: valid params and methods the server does not serve pass through to the SDK', () => {
    expect(paramsProblem(request('tools/call', { name: 'a', arguments: {} }))).toBeUndefined();
    expect(paramsProblem(request('tools/list', {}))).toBeUndefined();
    expect(paramsProblem(request('prompts/get', { name: 5 }))).toBeUndefined();
  });
});
