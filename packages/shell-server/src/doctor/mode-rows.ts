// The rows that report a mode in force rather than probe a command: the network mode (there is no
// network confinement yet) and the sandbox mechanism with the Landlock ABI the helper's probe found.
import type { Engine } from '@ahma/core';
import { row, type DoctorRow } from './report.js';

export function networkRow(): DoctorRow {
  return row(
    'network',
    'not enforced',
    'mode in force: --network host (no network confinement yet: commands reach any host)',
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
