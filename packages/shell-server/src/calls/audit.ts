// NFR4.3: one audit line per execution, whichever way it was asked for (an MCP call, the one-shot
// CLI): the argv that really ran (bounded, with a SHA-256 of the whole), where, and how it ended.
import type { ExecutionResult } from '@ahma/core';
import type { Logger } from 'pino';
import { auditedArgv } from './audit-argv.js';

/** Where audit lines go, and the scope they are recorded against. */
export interface AuditLog {
  readonly logger: Logger;
  readonly scope: string;
}

export interface AuditRecord {
  readonly operation: string;
  readonly tool: string;
  /** The argv that ran (core's commandArgv): `bash --noprofile --norc -c SCRIPT` for a script. */
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly result: Pick<ExecutionResult, 'status' | 'exitCode' | 'signal' | 'durationMs'>;
}

export function audit(log: AuditLog, record: AuditRecord): void {
  const { result } = record;
  log.logger.info(
    {
      audit: {
        operation: record.operation,
        tool: record.tool,
        ...auditedArgv(record.argv),
        scope: log.scope,
        cwd: record.cwd,
        status: result.status,
        exit_code: result.exitCode,
        signal: result.signal,
        duration_ms: Math.round(result.durationMs),
      },
    },
    'execution',
  );
}
