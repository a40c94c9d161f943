// Red team, remote MCP servers (SPEC §10, R11.1, R14.5, docs/security.md "Remote MCP servers"):
// ahma-shell keeps their tokens in its private state so that no command can plant tokens that
// would send an agent's calls into someone else's account, nor swap the file for a link; and a
// command that attacks the login's callback port can neither crash Ahma nor end the login. Run as
// root and as an ordinary user.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createBrowser,
  freePort,
  startOAuthWorld,
  type OAuthWorld,
} from '../../../remote/test/support/oauth-world.js';
import { confined, eachIdentity, redTeamFile, textOf, waitFor } from './harness.js';

const file = redTeamFile([]);

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, {
    prepare: async (seat) => {
      await seat.mkdir(join(seat.scope, '.ahma'));
      // A remote that is never reachable: the server still sets up its token file's home.
      await seat.write(
        join(seat.scope, '.ahma', 'mcp.json'),
        JSON.stringify({ servers: { acme: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }),
      );
    },
  });

  it('R11.1: a command can neither write the token file of remote servers nor put a link in its place', async () => {
    const tokens = join(seat().home, '.local', 'state', 'ahma', 'mcp_http_token.json');
    const planted = `{"version":1,"servers":{"http://127.0.0.1:1/mcp":{"tokens":{"access_token":"attacker","token_type":"Bearer"}}}}`;
    const write = await server().sh(`printf '%s' '${planted}' > ${tokens}; echo "rc=$?"`);
    expect(write.output).toMatch(/Permission denied|Read-only file system/);
    const link = await server().sh(`ln -sf /tmp/attacker.json ${tokens}; echo "rc=$?"`);
    expect(link.output).toMatch(/Permission denied|Read-only file system/);
    const read = await server().sh(`cat ${tokens} 2>&1; echo "rc=$?"`);
    expect(read.output).not.toContain('attacker');
  });
});

// While a login waits, the callback server listens on 127.0.0.1, which commands can reach.
eachIdentity('the login callback, as $name', (identity) => {
  let world: OAuthWorld | undefined;
  let port = 0;
  /** The server's arguments, completed once the callback port is chosen. */
  const args: string[] = [];
  beforeAll(async () => {
    world = await startOAuthWorld();
    port = await freePort();
    args.push('--oauth-callback-port', String(port));
  });
  afterAll(async () => {
    await world?.close();
  });
  const { server } = confined(file, identity, {
    args,
    prepare: async (seat) => {
      await seat.mkdir(join(seat.scope, '.ahma'));
      await seat.write(
        join(seat.scope, '.ahma', 'mcp.json'),
        JSON.stringify({ servers: { acme: { type: 'http', url: world?.mcpUrl.href } } }),
      );
    },
    perTest: true,
  });

  it('R14.5: a command that sends the callback port a request no URL can be made of, or a forged error, neither crashes Ahma nor ends the login', async () => {
    const first = await server().call('acme_connect');
    const login = /(http:\/\/localhost:\d+\/auth\?\S+)/.exec(textOf(first))?.[1];
    expect(login, textOf(first)).toBeDefined();
    const attack = await server().sh(
      `exec 3<>/dev/tcp/127.0.0.1/${String(port)}; printf 'GET //[ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3; head -c 12 <&3; echo; ` +
        `exec 4<>/dev/tcp/127.0.0.1/${String(port)}; printf 'GET /callback?state=guess&error=access_denied HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&4; head -c 12 <&4`,
    );
    expect(attack.output).toContain('HTTP/1.1 400');
    expect(attack.output).not.toContain('200');
    // Ahma is alive, and the login it started still completes.
    await createBrowser().authorize(login ?? '');
    await waitFor(
      async () =>
        (await server().client.listTools()).tools.some((tool) => tool.name === 'acme_echo'),
      'the remote tools after the login',
    );
  });
});
