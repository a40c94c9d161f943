// The engine options the doctor probes with: those createRuntime gives createEngine for the same
// server options (sandbox on or off, capabilities, warm shells, state root, the check of where the
// code lies, --allow-read, --deny-read, --allow-write, --profile), on the doctor's own throwaway
// scope, plus the probe's planted secret: a file beside a readable one that a --deny-read entry
// must hide. Keep it in step with runtime.ts.
import { dirname } from 'node:path';
import { packageClosure, type createEngine, type Logger } from '@ahma/core';
import type { ServerOptions } from '../options.js';
import { AHMA_SECRET_VARIABLES, ahmaShellBin, type Environment } from '../runtime.js';

export type EngineOptions = Parameters<typeof createEngine>[0];

export interface DoctorEngineSettings {
  readonly options: ServerOptions;
  readonly env: Environment;
  /** The doctor's scope (a fresh directory, never the operator's project). */
  readonly scope: string;
  /** A directory outside the scope granted for reading, so that a denial in it is the deny's doing. */
  readonly readable: string;
  /** The planted secret inside `readable`, denied as --deny-read would. */
  readonly secret: string;
  readonly logger?: Logger | undefined;
}

export function doctorEngineOptions(settings: DoctorEngineSettings): EngineOptions {
  const { options } = settings;
  // bin/ahma-shell.js: its package is two levels up (the same from src/ and from the bundle).
  const packageDirectory = dirname(dirname(ahmaShellBin()));
  return {
    scope: settings.scope,
    env: settings.env,
    envDeny: [...AHMA_SECRET_VARIABLES, ...options.envDeny],
    noSandbox: options.noSandbox,
    keepCapabilities: options.keepCapabilities,
    noShellPool: options.noShellPool,
    ...(settings.logger === undefined ? {} : { logger: settings.logger }),
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(options.noSandbox ? {} : { codePaths: packageClosure(packageDirectory) }),
    // R7.10, R7.14: the operator's widenings and narrowings (the profiles of --tools bundles are
    // not looked up here: runtime.ts keeps that private).
    profiles: options.profiles,
    extraReadable: [...options.allowRead, settings.readable],
    extraWritable: options.allowWrite,
    denyRead: [...options.denyRead, settings.secret],
  };
}
