// Red team, R7.9: Ahma's secrets never reach commands. A server is started with AHMA_HTTP_TOKEN,
// AHMA_OAUTH_CLIENT_SECRET and the API key a livelog tool of the scope names in its environment;
// a command, in a warm shell and spawned directly, finds none of them: not in `env`, not in its
// /proc/self/environ, nor in the environ of any process between it and the server that it can
// read. The server's own /proc/<pid>/environ still holds them (removing a variable from a
// process's environment does not change that file), and the sandbox keeps it out of reach: a
// Landlock domain refuses ptrace-mode reads of processes outside it, whatever the uid. Run as
// root and as an ordinary user.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile } from './harness.js';

const file = redTeamFile([]);

/** A livelog tool file naming `${RT_LIVELOG_KEY}` as its API key (never started here). */
const livelogTool = {
  name: 'watch',
  description: 'Watch a red-team source.',
  command: 'bash',
  tool_type: 'livelog',
  livelog: {
    source_command: 'bash',
    source_args: ['-c', 'sleep 300'],
    detection_prompt: 'Report any line containing PANIC.',
    llm_provider: {
      base_url: 'http://127.0.0.1:9/v1',
      model: 'tiny',
      api_key: '${RT_LIVELOG_KEY}',
    },
  },
};

/**
 * Prints the command's `env` (env:), its /proc/self/environ (self:), then, for each process from
 * its parent up to the server, `ancestor:<pid>:<comm>:<readable|denied>:<command line>` and, when
 * readable, that process's environ (environ:<pid>:).
 */
function probe(serverPid: number): string {
  return [
    'env | sed "s/^/env:/"',
    'cat /proc/self/environ | tr "\\0" "\\n" | sed "s/^/self:/"',
    'p=$PPID',
    'while [ "$p" -gt 1 ]; do ' +
      'if e=$(tr "\\0" "\\n" </proc/$p/environ 2>/dev/null); then r=readable; else r=denied; fi; ' +
      'echo "ancestor:$p:$(cat /proc/$p/comm):$r:$(tr "\\0" " " </proc/$p/cmdline)"; ' +
      'printf "%s\\n" "$e" | sed "s/^/environ:$p:/"; ' +
      `[ "$p" = ${String(serverPid)} ] && break; ` +
      'p=$(cut -d" " -f4 /proc/$p/stat); ' +
      'done',
  ].join('; ');
}

eachIdentity('as $name', (identity) => {
  const { seat } = confined(file, identity, {
    prepare: async (seat) => {
      await seat.mkdir(join(seat.scope, '.ahma'));
      await seat.mkdir(join(seat.scope, '.ahma', 'tools'));
      await seat.write(
        join(seat.scope, '.ahma', 'tools', 'watch.json'),
        JSON.stringify(livelogTool),
      );
    },
  });

  it.each([
    ['in a warm shell', [] as string[], true],
    ['spawned directly (--no-shell-pool)', ['--no-shell-pool'], false],
  ])(
    "R7.9: a command %s finds no secret in its env, its /proc/self/environ or any environ it can read; the server's environ is denied it",
    async (_, args, warm) => {
      const stamp = `${identity.name}-${String(Date.now())}`;
      const hidden = {
        AHMA_HTTP_TOKEN: `rt-http-token-${stamp}`,
        AHMA_OAUTH_CLIENT_SECRET: `rt-oauth-secret-${stamp}`,
        RT_LIVELOG_KEY: `rt-livelog-key-${stamp}`,
      };
      const server = await seat().server(args, seat().scope, {
        ...hidden,
        RT_ORDINARY: 'ordinary-value',
      });
      const result = await server.sh(probe(server.pid));
      const output = result.output;
      // The probe itself worked: it saw its own variables and walked up to the server.
      expect(output).toMatch(/^env:RT_ORDINARY=ordinary-value$/m);
      expect(output).toMatch(/^self:RT_ORDINARY=ordinary-value$/m);
      const ancestors = output.split('\n').filter((line) => line.startsWith('ancestor:'));
      const serverLine = ancestors.find((line) =>
        line.startsWith(`ancestor:${String(server.pid)}:`),
      );
      expect(serverLine, output).toBeDefined();
      expect(
        ancestors.some((line) => / --pool \d+/.test(line)),
        output,
      ).toBe(warm);
      // None of the secrets, anywhere the command looked.
      for (const [name, value] of Object.entries(hidden)) {
        expect(output, name).not.toContain(value);
        expect(output, name).not.toMatch(new RegExp(`^(env|self|environ:\\d+):${name}=`, 'm'));
      }
      // The server's environ still holds them (it cannot be rewritten): the sandbox denies it.
      expect(serverLine).toMatch(/:denied:/);
    },
  );
});
