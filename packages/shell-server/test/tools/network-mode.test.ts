// R7.15, R7.16: a tool file's own network mode. A file can narrow the server's mode, never widen
// it: under a --network host server, a `"network": "none"` tool reaches nothing and a `"network":
// "proxy"` tool reaches only what the rules allow, through an egress proxy started for it; under a
// --network proxy server, a `"network": "host"` tool is still held to the proxy. The server made in
// this process from its command line, the SDK Client, curl against a service on 127.0.0.1.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it, textOf, type RunningServer, type Scope } from '../support/harness.js';
import { loopbackService } from '../support/loopback-service.js';

const service = loopbackService();

/** A tool `fetch_<mode>` that runs `curl URL` with the file's network mode. */
async function fetchTool(scope: Scope, mode: 'none' | 'proxy' | 'host'): Promise<void> {
  await writeFile(
    join(scope.dir, '.ahma', 'tools', `fetch-${mode}.json`),
    JSON.stringify({
      name: `fetch_${mode}`,
      description: `curl with network ${mode}`,
      command: 'curl -sS -m 10',
      synchronous: true,
      network: mode,
      subcommand: [
        {
          name: 'default',
          description: 'Fetches a URL.',
          positional_args: [
            { name: 'url', type: 'string', description: 'The URL.', required: true },
          ],
        },
      ],
    }),
  );
}

const fetch = async (server: RunningServer, tool: string, target: number) =>
  textOf(await server.call(tool, { url: `http://127.0.0.1:${String(target)}/` }));

describe.concurrent('a tool file’s network mode', { timeout: 60_000 }, () => {
  it('R7.15, R7.16: under a host server, "none" reaches nothing, "proxy" only what the rules allow; other tools are unchanged', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await fetchTool(scope, 'none');
    await fetchTool(scope, 'proxy');
    const server = await e2e.inProcess(scope, [
      '--allow-host',
      `127.0.0.1:${String(service.port())}`,
    ]);
    expect(await fetch(server, 'fetch_none', service.port())).not.toContain(
      'hello from the service',
    );
    expect(await fetch(server, 'fetch_proxy', service.port())).toContain('hello from the service');
    const refused = await fetch(server, 'fetch_proxy', 9);
    expect(refused).toContain('port 9 is not allowed');
    expect(refused).toContain('--allow-host 127.0.0.1:9');
    const shell = textOf(
      await server.call('sandboxed_shell', {
        command: `curl -sS -m 10 http://127.0.0.1:${String(service.port())}/`,
        execution_mode: 'Synchronous',
      }),
    );
    expect(shell).toContain('hello from the service');
  });

  it('R7.16: under a proxy server, a "host" tool file is still held to the proxy', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await fetchTool(scope, 'host');
    const server = await e2e.inProcess(scope, ['--network', 'proxy']);
    const text = await fetch(server, 'fetch_host', service.port());
    expect(text).not.toContain('hello from the service');
    expect(text).toContain('is not on the allowlist');
  });
});
