// Red team, R15.4: a command under `pty: true` gets a terminal of its own, inside the same
// confinement. It cannot type into it (TIOCSTI) or into another terminal, its terminal is not the
// server's, and it writes outside the scope no more than any command. Run as root and as an
// ordinary user.
import { expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile, structured } from './harness.js';

const file = redTeamFile([]);

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity);

  it('R15.4: a pty command cannot type into its terminal (TIOCSTI), write outside the scope, or reach the server’s terminal', async () => {
    const outside = `${seat().outside}/pty-escape`;
    const started = structured<{ operation_id: string }>(
      await server().call('sandboxed_shell', {
        command: [
          `python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b"x"); print("sti:typed")' 2>&1 | tail -1`,
          `echo x > ${outside} 2>/dev/null && echo outside:written || echo outside:refused`,
          'readlink /proc/self/fd/0',
          `ls -l /proc/${String(server().pid)}/fd/0 2>&1 | sed 's/^/server-tty: /'`,
        ].join('\n'),
        pty: true,
      }),
    );
    const text = (await server().wait(started.operation_id))?.output ?? '';
    expect(text).toContain('Operation not permitted');
    expect(text).not.toContain('sti:typed');
    expect(text).toContain('outside:refused');
    expect(text).toMatch(/^\/dev\/pts\/\d+\r?$/m);
    expect(text).toMatch(/server-tty: .*(Permission denied|No such file)/);
  });
});
