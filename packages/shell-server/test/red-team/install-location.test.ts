// Red team, Ahma's own code (R7.6): a command could rewrite code of Ahma that lies where commands
// may write, and the rewrite would run unconfined at the next start. A server whose code lies in a
// writable path refuses to start, whoever it runs as, before it runs anything.
import { dirname } from 'node:path';
import { expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile } from './harness.js';

const file = redTeamFile([]);

eachIdentity('as $name', (identity) => {
  const { seat } = confined(file, identity, { perTest: true });

  it('R7.6: a server whose own code lies inside the scope refuses to start, naming the fix', async () => {
    const { bin } = await seat().runtime();
    // The scope: the directory holding the server's package (its bin/ and dist/).
    const scope = dirname(dirname(bin));
    const refused = await seat()
      .server([], scope)
      .then(() => undefined)
      .catch((error: unknown) => String(error));
    expect(refused).toMatch(
      /Ahma refuses to start: its own code lies where sandboxed commands can write/,
    );
    expect(refused).toMatch(/install Ahma outside the sandbox scope/);
  });
});
