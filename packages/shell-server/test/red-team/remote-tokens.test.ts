// Red team, remote MCP servers' tokens (SPEC §10, R11.1, docs/security.md "Remote MCP servers"):
// ahma-shell keeps them in its private state so that no command can plant tokens that would send
// an agent's calls into someone else's account, nor swap the file for a link. Run as root and as
// an ordinary user.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { confined, IDENTITIES, redTeamFile } from './harness.js';

const file = redTeamFile([]);

describe.each(IDENTITIES)('as $name', (identity) => {
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
