// The rows that report a mode in force: the network mode (under --network none, probed: a command
// tries a TCP socket) and the sandbox mechanism with the Landlock ABI the helper's probe found.
import type { Engine } from '@ahma/core';
import { sh, type ProbeContext } from './probe-command.js';
import { row, type DoctorRow } from './report.js';

/** R7.15: host reaches anything (not enforced); none is probed with a TCP and a UDP socket. */
export async function networkRow(context: ProbeContext): Promise<DoctorRow> {
  if (context.engine.sandbox.network === 'host') {
    return row(
      'network',
      'not enforced',
      'mode in force: --network host (commands reach any address; --network none confines them)',
    );
  }
  const ran = await sh(
    context,
    'exec 3<>/dev/tcp/127.0.0.1/9 2>&1 || echo tcp-refused; python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" 2>/dev/null && echo udp-open || echo udp-refused',
  );
  const tcp = /Permission denied/.test(ran.output) && ran.output.includes('tcp-refused');
  const udp = ran.output.includes('udp-refused');
  return tcp && udp
    ? row(
        'network',
        'enforced by kernel',
        'mode in force: --network none: a TCP and a UDP socket were refused (seccomp: no socket but unix ones; Landlock: no TCP bind or connect)',
      )
    : row(
        'network',
        'not enforced',
        `mode in force: --network none, yet a command opened a socket: ${ran.output.trim().slice(0, 200)}`,
      );
}

/** The sandbox mechanism and Landlock ABI the helper's probe found. */
export function landlockRow(engine: Engine): DoctorRow {
  const { mechanism, abi } = engine.sandbox;
  if (mechanism === 'landlock' && abi !== undefined) {
    return row(
      'landlock',
      'enforced by kernel',
      abi >= 6
        ? `ABI ${String(abi)} (helper probe): files, signals and abstract unix sockets confined`
        : `ABI ${String(abi)} (helper probe): files confined; signals and abstract unix sockets not scoped (needs ABI 6, Linux 6.12)`,
    );
  }
  if (mechanism === 'seatbelt') {
    return row(
      'landlock',
      'not enforced',
      'no Landlock on this system: Seatbelt confines commands',
    );
  }
  return row('landlock', 'not enforced', 'no Landlock: commands run unconfined');
}
