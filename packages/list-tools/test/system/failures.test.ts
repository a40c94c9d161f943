// ahma-list-tools, called in-process, against servers that fail: each failure is exit 1 with a
// message naming the server and the cause.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTools } from '../support/list-tools.js';
import { freePort } from '../support/servers.js';

describe.concurrent('ahma-list-tools failures', () => {
  it('R6.10: a command that exits at once → exit 1 naming the command, with its stderr', async () => {
    const script = 'process.stderr.write("fatal: no config file\\n"); process.exit(3)';
    const run = await listTools(['--', process.execPath, '-e', script]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`ahma-list-tools: ${process.execPath} -e '`);
    expect(run.stderr).toContain('the server exited before answering initialize');
    expect(run.stderr).toContain('its stderr:\nfatal: no config file\n');
  });

  it('R6.10: a command that does not exist → exit 1, command not found', async () => {
    const run = await listTools(['--', 'ahma-no-such-command-xyz', '--flag']);
    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'ahma-list-tools: ahma-no-such-command-xyz --flag: cannot start it: command not found\n',
    });
  });

  it('R6.10: --timeout bounds a server that never answers, and names the cause', async () => {
    const script = 'process.stdout.write("not json\\n"); setInterval(() => {}, 1000)';
    // The limit counts the server's start-up: 2 s leaves a loaded machine time to start node and
    // write that line (with 0.5 s it sometimes had not, and the cause was missing).
    const run = await listTools(['--timeout', '2', '--', process.execPath, '-e', script]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no answer to the MCP initialize request within 2 s');
    expect(run.stderr).toContain('it wrote something that is not MCP to stdout');
    // Waiting out the SDK's 2 s close grace after the limit would reach 4 s.
    expect(run.ms).toBeLessThan(4000);
  });

  it('R6.10: a refused URL → exit 1 naming the URL and the cause', async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp`;
    const run = await listTools(['--http', url]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(`^ahma-list-tools: ${url}: cannot connect: connection refused`),
    );
  });

  describe('a server that answers 401', () => {
    let server: HttpServer | undefined;
    let url = '';
    beforeAll(async () => {
      server = createHttpServer((_request, response) => {
        response.writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/x"',
        });
        response.end('{"error":"invalid_token"}');
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    });
    afterAll(() => new Promise((resolve) => server?.close(resolve)));

    it('R14: → exit 1 when logging in fails (this server publishes no OAuth metadata), naming the server and the cause', async () => {
      const run = await listTools([
        '--http',
        url,
        '--no-browser',
        '--callback-port',
        String(await freePort()),
      ]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        // Its registration endpoint answers like its MCP endpoint: 401 invalid_token.
        new RegExp(`^ahma-list-tools: ${url}: logging in to the server failed: invalid_token`),
      );
    });
  });
});
