// Red team, the output log as a confused deputy (R7.6 "nothing the server writes lives where a
// command can write, and the server never follows a link it did not create"). The full output of
// a truncated command goes to a log file of the server's state directory. A command that can write
// there plants symlinks where the next operations' logs will go, or swaps the directory for a link
// to outside; the server, which may write where commands may not, would then write through them.
// It learns where the directory is from a previous truncated result's full_output_path (what the
// agent is shown), or from its environment (the caches the server redirects sit beside it).
// Each test has a server of its own: a planted link would otherwise catch the next test's logs.
import { dirname, join } from 'node:path';
import { it } from 'vitest';
import {
  blockedWith,
  confined,
  eachIdentity,
  fileState,
  redTeamFile,
  treeState,
  type CommandResult,
  type Server,
  verdictLine,
  verdicts,
} from './harness.js';

const file = redTeamFile(['log-plant']);

/** Output larger than the 10,000-token (40,000-byte) budget a result shows: it goes to a log file. */
const FLOOD_BYTES = 60_000;
const FLOOD = `head -c ${String(FLOOD_BYTES)} /dev/zero | tr '\\0' x`;

async function truncatedRun(server: Server): Promise<CommandResult & { full_output_path: string }> {
  const result = await server.sh(FLOOD);
  const path = result.full_output_path;
  if (!result.truncated || path === undefined) {
    throw new Error(
      `expected a truncated result with a log: ${JSON.stringify(result).slice(0, 300)}`,
    );
  }
  return { ...result, full_output_path: path };
}

const DENIED = ['EACCES', 'EPERM', 'EROFS', 'ENOENT'];

eachIdentity('as $name', (identity) => {
  const { seat, server: current } = confined(file, identity, { perTest: true });

  it('R7.6: the output-log directory is not writable by a command', async ({ expect }) => {
    const server = current();
    const logDir = dirname((await truncatedRun(server)).full_output_path);
    const before = await treeState(logDir);
    const result = await server.sh(seat().x('log-plant', 'write', logDir));
    expect.soft(verdictLine(result.output, 'write')).toMatch(blockedWith('write', DENIED));
    expect(await treeState(logDir)).toEqual(before);
  });

  it('R7.6: symlinks planted at the next operations’ log names do not make the server write outside', async ({
    expect,
  }) => {
    const server = current();
    const victim = await seat().write(join(seat().outside, 'victim.txt'), 'precious\n');
    const before = await fileState(victim);
    const logDir = dirname((await truncatedRun(server)).full_output_path);
    const planted = await server.sh(seat().x('log-plant', 'links', logDir, victim));
    const next = await truncatedRun(server);
    expect.soft(verdictLine(planted.output, 'links')).toMatch(blockedWith('links', DENIED));
    expect(await fileState(victim)).toEqual(before);
    // The log the server wrote is a regular file of its own, holding the whole flood.
    expect(await fileState(next.full_output_path)).toMatchObject({
      type: 'file',
      size: FLOOD_BYTES,
    });
  });

  it('R7.6: a log directory found from the environment cannot be planted either', async ({
    expect,
  }) => {
    const server = current();
    const victim = await seat().write(join(seat().outside, 'victim-env.txt'), 'precious\n');
    const before = await fileState(victim);
    await truncatedRun(server);
    const planted = await server.sh(seat().x('log-plant', 'links', 'auto', victim));
    await truncatedRun(server);
    expect.soft(verdicts(planted.output).filter((v) => v.kind === 'ESCAPED')).toEqual([]);
    expect(await fileState(victim)).toEqual(before);
  });

  it('R7.6: the log directory cannot be swapped for a symlink to outside', async ({ expect }) => {
    const server = current();
    const target = await seat().mkdir(join(seat().outside, 'log-target'));
    const before = await treeState(seat().outside);
    const logDir = dirname((await truncatedRun(server)).full_output_path);
    const swapped = await server.sh(seat().x('log-plant', 'swap', logDir, target));
    const next = await truncatedRun(server);
    expect.soft(verdictLine(swapped.output, 'swap')).toMatch(blockedWith('swap', DENIED));
    expect(await treeState(seat().outside)).toEqual(before);
    expect((await fileState(dirname(next.full_output_path)))?.type).toBe('dir');
  });
});
