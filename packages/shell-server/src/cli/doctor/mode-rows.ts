// The rows that report a mode in force: the network mode (under --network none and proxy, probed:
// a command tries a TCP and a UDP socket, and the proxy) and the sandbox mechanism with the
// Landlock ABI the helper's probe found.
import type { Engine } from '@ahma/core';
import { sh, type ProbeContext } from './probe-command.js';
import { row, type DoctorRow } from './report.js';

/**
 * R7.15, R7.16: host reaches anything (not enforced); none and proxy are probed: a direct TCP
 * connect and a UDP socket must be refused, and under proxy the egress proxy must be reachable.
 */
export async function networkRow(context: ProbeContext): Promise<DoctorRow> {
  const mode = context.engine.sandbox.network;
  if (mode === 'host') {
    return row(
      'network',
      'not enforced',
      'mode in force: --network host (commands reach any address; --network proxy or none confine them)',
    );
  }
  const ran = await sh(
    context,
    [
      'exec 3<>/dev/tcp/127.0.0.1/9 2>&1 || echo tcp-refused',
      'python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" 2>/dev/null && echo udp-open || echo udp-refused',
      ...(mode === 'proxy'
        ? ['(exec 3<>"/dev/tcp/127.0.0.1/${http_proxy##*:}") 2>/dev/null && echo proxy-reached']
        : []),
    ].join('\n'),
  );
  const tcp = /Permission denied/.test(ran.output) && ran.output.includes('tcp-refused');
  const udp = ran.output.includes('udp-refused');
  const proxy = mode === 'none' || ran.output.includes('proxy-reached');
  if (!tcp || !udp || !proxy) {
    return row(
      'network',
      'not enforced',
      `mode in force: --network ${mode}, yet ${proxy ? 'a command opened a socket' : 'the egress proxy was not reachable'}: ${ran.output.trim().slice(0, 200)}`,
    );
  }
  if (mode === 'none') {
    return row(
      'network',
      'enforced by kernel',
      'mode in force: --network none: a TCP and a UDP socket were refused (seccomp: no socket but unix ones; Landlock: no TCP bind or connect)',
    );
  }
  const rules = context.engine.egress?.rules.allow.length ?? 0;
  return row(
    'network',
    'enforced by kernel',
    `mode in force: --network proxy: a direct TCP connect and a UDP socket were refused, the egress proxy was reached (Landlock: TCP connects to its port alone; seccomp: TCP sockets only); ${String(rules)} host rule${rules === 1 ? '' : 's'} allow (profiles, --allow-host, grants)`,
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
