// The probes of the three protections the exit code stands on: writes outside the scope, reads of
// secrets, hand-off files. Each runs a real command through the engine and judges by what happened
// on disk (or in its output), never by what the sandbox claims; each has a control (something the
// command may do), so that a broken shell is not taken for a refusal.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isInside, type Engine } from '@ahma/core';
import type { CredentialCheck } from './credential-paths.js';
import {
  exists,
  fields,
  mechanismName,
  plural,
  q,
  reason,
  sh,
  type ProbeContext,
} from './probe-command.js';
import { row, type DoctorRow } from './report.js';
import { PUBLIC_CONTENT } from './workspace.js';

export async function probeWrites(context: ProbeContext): Promise<DoctorRow> {
  const { engine, workspace } = context;
  // The state directory lies outside every writable path by construction (the engine checks).
  const outside = [workspace.outside, engine.state.serverDir].find(
    (dir) => !engine.sandbox.writable.some((writable) => isInside(dir, writable)),
  );
  if (outside === undefined) {
    return row('writes', 'not enforced', 'no directory outside every writable path to try');
  }
  const control = join(workspace.scope, 'doctor-write-control');
  const target = join(outside, 'doctor-write-probe');
  const ran = await sh(
    context,
    `printf x > ${q(control)}; printf 'outside=%s\\n' "$( { printf x > ${q(target)}; } 2>&1 )"`,
  );
  if (!(await exists(control))) {
    return row('writes', 'not enforced', `not measured: the probe command failed (${ran.output})`);
  }
  if (await exists(target)) {
    return row('writes', 'not enforced', 'a command created a file outside every writable path');
  }
  return row(
    'writes',
    'enforced by kernel',
    `${mechanismName(engine)}: creating a file outside every writable path was refused (${reason(fields(ran.output).get('outside'))})`,
  );
}

/**
 * A command reads the planted secret (beside a readable file: the control), a file in Ahma's
 * private state, and the denied files the server itself can read; and no Landlock rule may grant
 * a denied path present here.
 */
export async function probeReads(
  context: ProbeContext,
  credentials: CredentialCheck,
): Promise<DoctorRow> {
  const { engine, workspace } = context;
  const stateToken = `${workspace.token}-state`;
  const stateFile = join(engine.state.serverDir, 'doctor-probe');
  await writeFile(stateFile, stateToken, { mode: 0o600 });
  const lines = [
    `printf 'public=%s\\n' "$(cat ${q(workspace.publicFile)} 2>&1)"`,
    `printf 'secret=%s\\n' "$(cat ${q(workspace.secretFile)} 2>&1)"`,
    `printf 'state=%s\\n' "$(cat ${q(stateFile)} 2>&1)"`,
    ...credentials.readable.map(
      (file) => `head -c 1 ${q(file)} >/dev/null 2>&1 && printf 'leaked=%s\\n' ${q(file)}`,
    ),
    'true',
  ];
  const ran = await sh(context, lines.join('\n'));
  const seen = fields(ran.output);
  if (seen.get('public') !== PUBLIC_CONTENT) {
    return row('reads', 'not enforced', `not measured: the probe command failed (${ran.output})`);
  }
  const leaks: string[] = [];
  if (seen.get('secret') === workspace.token) leaks.push('a file denied by --deny-read');
  if (seen.get('state') === stateToken) leaks.push("Ahma's private state");
  leaks.push(
    ...ran.output
      .split('\n')
      .filter((line) => line.startsWith('leaked='))
      .map((line) => line.slice('leaked='.length)),
  );
  if (leaks.length > 0) {
    return row('reads', 'not enforced', `a command read ${leaks.join(', ')}`);
  }
  if (credentials.granted.length > 0) {
    return row(
      'reads',
      'not enforced',
      `the sandbox rules grant denied paths: ${credentials.granted.slice(0, 3).join('; ')}`,
    );
  }
  const files = credentials.readable.length;
  const present = credentials.present.length;
  const also = files === 0 ? '' : ` or ${plural(files, 'credential file')} present here`;
  return row(
    'reads',
    'enforced by kernel',
    `${mechanismName(engine)}: commands could not read a denied file beside a readable one, Ahma's private state${also} (${reason(seen.get('secret'))}); no rule grants any of the ${plural(present, 'denied path')} present`,
  );
}

/**
 * How the engine keeps the hand-off files, when it says ('mount' | 'detect' | 'off'), and why
 * (read defensively: a sandbox without the field protects nothing).
 */
function handoffMechanism(engine: Engine): { mechanism?: string; reason?: string } {
  const handoff = (
    engine.sandbox as { readonly handoff?: { readonly mechanism?: unknown; reason?: unknown } }
  ).handoff;
  return {
    ...(typeof handoff?.mechanism === 'string' ? { mechanism: handoff.mechanism } : {}),
    ...(typeof handoff?.reason === 'string' ? { reason: handoff.reason } : {}),
  };
}

/** A command writes a git hook, sets core.hooksPath and writes in `.ahma/`. */
export async function probeHandoff(context: ProbeContext): Promise<DoctorRow> {
  const { engine, workspace } = context;
  const scope = workspace.scope;
  const control = join(scope, 'doctor-handoff-control');
  const hook = join(scope, '.git', 'hooks', 'pre-commit');
  const config = join(scope, '.git', 'config');
  const ahma = join(scope, '.ahma', 'doctor-probe');
  const configBefore = await readFile(config, 'utf8');
  const setHooksPath = workspace.git
    ? 'git config core.hooksPath /x'
    : `printf '[core]\\n\\thooksPath = /x\\n' >> ${q(config)}`;
  const ran = await sh(
    context,
    [
      `printf x > ${q(control)}`,
      `printf '#!/bin/sh\\necho x\\n' > ${q(hook)}`,
      setHooksPath,
      `printf x > ${q(ahma)}`,
      'true',
    ].join('\n'),
  );
  if (!(await exists(control))) {
    return row('handoff', 'not enforced', `not measured: the probe command failed (${ran.output})`);
  }
  const configAfter = await readFile(config, 'utf8').catch(() => '');
  const written = [
    ...((await exists(hook)) ? ['.git/hooks/pre-commit'] : []),
    ...(configAfter !== configBefore ? ['.git/config (core.hooksPath)'] : []),
    ...((await exists(ahma)) ? ['.ahma/'] : []),
  ];
  const { mechanism, reason: why } = handoffMechanism(engine);
  const because = why === undefined ? '' : `: ${why}`;
  if (written.length === 0) {
    const how = mechanism === 'mount' ? 'read-only mount' : mechanismName(engine);
    return row(
      'handoff',
      'enforced by kernel',
      `${how}: a command could not write .git/hooks/pre-commit, .git/config (core.hooksPath) or .ahma/`,
    );
  }
  if (mechanism === 'detect') {
    return row(
      'handoff',
      'detected only',
      `a command wrote ${written.join(', ')}; Ahma reports such changes but cannot prevent them here${because}`,
    );
  }
  return row(
    'handoff',
    'not enforced',
    `a command wrote ${written.join(', ')} (${mechanism === undefined ? 'no hand-off protection in this version' : `hand-off protection: ${mechanism}${because}`})`,
  );
}

/** A command signals the server (kill -0) and reads its /proc/<pid>/environ (ptrace access). */
