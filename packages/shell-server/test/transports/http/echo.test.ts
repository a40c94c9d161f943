// R8B: with --log-to-stderr in HTTP mode, every JSON-RPC message is echoed pretty-printed with two
// spaces: `→ STDIN:` what came in, `← STDOUT:` what went out, `⚠ STDERR:` error answers and
// refusals. The HTTP server in the test process, its stderr kept as the binary would print it.
import { afterEach, describe, expect, it } from 'vitest';
import { formatEcho } from '../../../src/transports/http/echo.js';
import { E2E } from '../../support/harness.js';
import { httpClient, httpServer, post } from '../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

describe('R8B: the traffic echo', () => {
  it('R8B.1–R8B.3: requests in, answers out and errors are echoed pretty-printed with their prefixes', async () => {
    const http = await httpServer(e2e, await e2e.scope(), ['--log-to-stderr']);
    const client = await httpClient(e2e, http.url, http);
    await client.client.listTools();
    await expect(client.call('no_such_tool', {}))
      .resolves.toBeDefined()
      .catch(() => undefined);
    await post(http.url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }); // no session: 400
    const stderr = http.stderr();
    // The initialize as the client sent it, two-space indented after the prefix.
    expect(stderr).toContain(
      '→ STDIN: {\n  "jsonrpc": "2.0",\n  "id": 0,\n  "method": "initialize",\n  "params": {\n    "protocolVersion"',
    );
    expect(stderr).toMatch(/← STDOUT: \{\n {2}"result": \{\n {4}"protocolVersion"/);
    expect(stderr).toContain(
      '→ STDIN: {\n  "jsonrpc": "2.0",\n  "id": 1,\n  "method": "tools/list"\n}\n',
    );
    expect(stderr).toMatch(/← STDOUT: \{\n {2}"result": \{\n {4}"tools": \[/);
    // The unknown tool's JSON-RPC error, and the request refused without a session.
    expect(stderr).toMatch(/⚠ STDERR: \{\n {2}"jsonrpc": "2.0",\n {2}"id": \d+,\n {2}"error": \{/);
    expect(stderr).toMatch(/⚠ STDERR: \{\n[\s\S]*Mcp-Session-Id header is required/);
  });

  it('R8B.4: text that is not JSON is echoed as it is; colours only when asked', () => {
    expect(formatEcho('error', 'Session not found', false)).toBe('⚠ STDERR: Session not found\n');
    expect(formatEcho('in', { a: [1] }, false)).toBe('→ STDIN: {\n  "a": [\n    1\n  ]\n}\n');
    const ESC = String.fromCharCode(0x1b);
    expect(formatEcho('out', {}, true)).toBe(`${ESC}[32m← STDOUT:${ESC}[0m {}\n`);
  });

  it('R8B: without --log-to-stderr nothing is echoed', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const client = await httpClient(e2e, http.url, http);
    await client.client.listTools();
    expect(http.stderr()).toBe('');
  });
});
