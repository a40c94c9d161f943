// Red team, import_config of what is not a file (FR4.7, R7.6). The server itself runs unconfined,
// and import_config reads the path the agent names, anywhere. Opening a device runs its driver
// (/dev/ptmx allocates a terminal, /dev/watchdog would arm a watchdog) and opening a FIFO can hang,
// so the server must refuse those WITHOUT opening them: each is a tool error saying what the path
// is, answered at once, and no terminal is ever allocated (every allocation makes a /dev/pts/N
// entry, which inotify reports even if it is gone by the time anyone looks).
import { existsSync, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { confined, IDENTITIES, redTeamFile, sleep, textOf, type Server } from './harness.js';

const file = redTeamFile([]);

/** Within this, a refusal counts as prompt (a FIFO open waiting for a writer never answers). */
const PROMPT_MS = 5000;

interface Attempt {
  readonly isError: boolean;
  readonly text: string;
  readonly ms: number;
  /** Terminals allocated while the call ran (inotify events on /dev/pts, and entries left). */
  readonly ptys: readonly string[];
}

async function importWatched(server: Server, path: string): Promise<Attempt> {
  const events: string[] = [];
  const before = await readdir('/dev/pts');
  const watcher = watch('/dev/pts', (event, name) => events.push(`${event} ${String(name)}`));
  let attempt: Omit<Attempt, 'ptys'>;
  try {
    await sleep(20);
    const started = Date.now();
    const result = await server.call('import_config', { path }, PROMPT_MS * 3);
    attempt = { isError: result.isError === true, text: textOf(result), ms: Date.now() - started };
    await sleep(100);
  } finally {
    watcher.close();
  }
  const left = (await readdir('/dev/pts')).filter((name) => !before.includes(name));
  return { ...attempt, ptys: [...events, ...left.map((name) => `left ${name}`)] };
}

describe.each(IDENTITIES)('as $name', (identity) => {
  const { server: current } = confined(file, identity, { args: ['--registry'] });

  it('FR4.7: import_config of /dev/ptmx is refused as a character device, and no terminal is allocated', async () => {
    const attempt = await importWatched(current(), '/dev/ptmx');
    expect(attempt.ptys).toEqual([]);
    expect(attempt.isError).toBe(true);
    expect(attempt.text).toMatch(
      /^\[CONFIG_INVALID\] cannot read \/dev\/ptmx: it is a character device, not a regular file/,
    );
    expect(attempt.ms).toBeLessThan(PROMPT_MS);
  });

  it('FR4.7: import_config of /dev/zero is refused as a character device, promptly', async () => {
    const attempt = await importWatched(current(), '/dev/zero');
    expect(attempt.isError).toBe(true);
    expect(attempt.text).toMatch(
      /^\[CONFIG_INVALID\] cannot read \/dev\/zero: it is a character device, not a regular file/,
    );
    expect(attempt.ms).toBeLessThan(PROMPT_MS);
  });

  it('FR4.7: import_config of a FIFO a command made in the scope is refused at once, and the server answers after', async () => {
    const server = current();
    const made = await server.sh('rm -f pipe.yaml && mkfifo pipe.yaml && echo made');
    expect(made.output).toContain('made');
    const attempt = await importWatched(server, 'pipe.yaml');
    expect(attempt.isError).toBe(true);
    expect(attempt.text).toMatch(
      /^\[CONFIG_INVALID\] cannot read \S*\/pipe\.yaml: it is a FIFO \(named pipe\), not a regular file/,
    );
    expect(attempt.ms).toBeLessThan(PROMPT_MS);
    const listed = await server.call('list_commands', {}, PROMPT_MS);
    expect(listed.isError, textOf(listed)).not.toBe(true);
  });

  it.skipIf(identity.uid === 0 || !existsSync('/etc/shadow'))(
    'R7.6: a regular file the server may not read is refused as the path named, without its content',
    async () => {
      const attempt = await importWatched(current(), '/etc/shadow');
      expect(attempt.isError).toBe(true);
      expect(attempt.text).toMatch(
        /^\[CONFIG_INVALID\] cannot read \/etc\/shadow: EACCES: permission denied, open '\/etc\/shadow'$/,
      );
    },
  );

  it('R7.6: import_config of a symlink in the scope to /dev/ptmx is refused, and /dev/ptmx is never opened through it', async () => {
    const server = current();
    const made = await server.sh('ln -sfn /dev/ptmx terminal.yaml && echo linked');
    expect(made.output).toContain('linked');
    const attempt = await importWatched(server, 'terminal.yaml');
    expect(attempt.ptys).toEqual([]);
    expect(attempt.isError).toBe(true);
    expect(attempt.text).toMatch(
      /^\[CONFIG_INVALID\] cannot read \S*\/terminal\.yaml: it is a character device, not a regular file/,
    );
    expect(attempt.ms).toBeLessThan(PROMPT_MS);
  });
});
