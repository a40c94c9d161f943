// NFR4.3: one audit line per execution, whichever way it was asked for (an MCP call, the one-shot
// CLI): the argv that really ran (bounded, with a SHA-256 of the whole), where, how it ended, and
// the trust hand-off files that changed while it ran (R7.11).
import type { EgressCaller, EgressDecision, ExecutionResult } from '@ahma/core';
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
  readonly result: Pick<ExecutionResult, 'status' | 'exitCode' | 'signal' | 'durationMs'> &
    Partial<Pick<ExecutionResult, 'handoffWrites'>>;
}

export function audit(log: AuditLog, record: AuditRecord): void {
  const { result } = record;
  // R7.11: a hand-off write is what the person must review: the line is a warning then.
  const writes = result.handoffWrites ?? [];
  log.logger[writes.length === 0 ? 'info' : 'warn'](
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
        ...(writes.length === 0
          ? {}
          : { handoff_writes: writes.map((write) => `${write.change} ${write.path}`) }),
      },
    },
    'execution',
  );
}

/**
 * R7.19: one audit line per connection the egress proxy allowed or refused (`--network proxy`):
 * host, port, the tool and operation whose command asked, and the rule that decided.
 */
export function auditEgress(log: AuditLog, decision: EgressDecision<EgressCaller>): void {
  log.logger[decision.allowed ? 'info' : 'warn'](
    {
      audit: {
        operation: decision.principal?.operationId,
        tool: decision.principal?.tool,
        scope: log.scope,
        network: {
          method: decision.method,
          host: decision.host,
          port: decision.port,
          allowed: decision.allowed,
          rule: decision.rule,
          address: decision.address,
          refusal: decision.refusal,
          reason: decision.reason,
        },
      },
    },
    decision.allowed ? 'network connection' : 'network refusal',
  );
}
