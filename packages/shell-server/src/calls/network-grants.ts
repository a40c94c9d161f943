// R7.18: grants a person answers once. When the egress proxy refused a command a host it could be
// allowed (not on the allowlist, a port not allowed, a name leading to a private address), the
// server asks the person — through the client (MCP elicitation), never the model: no tool widens
// the sandbox — whether to allow it once, for this session, always, or not. The answer becomes the
// narrowest rule (host:port), kept by the engine's gate (`always`: in the ledger in Ahma's private
// state); the command is not run again on its own: the result says what was decided, and the agent
// runs it again. A client that cannot be asked gets the refusal with the flag that would allow it.
import {
  askable,
  grantRules,
  type Engine,
  type ExecutionResult,
  type GrantDuration,
  type NetworkRefusal,
} from '@ahma/core';
import type { Logger } from 'pino';

/** The person's answer to one question; undefined when the client gave none (declined, timed out). */
export type PersonAnswer = GrantDuration | 'deny' | undefined;

/** Asks the person, through the client; undefined when this client cannot be asked. */
export interface PersonAsker {
  /** Who answers (the client's name and version), for the ledger. */
  readonly who: string;
  ask(question: NetworkQuestion): Promise<PersonAnswer>;
}

export interface NetworkQuestion {
  readonly message: string;
  /** The rules a yes adds. */
  readonly rules: readonly string[];
}

export interface GrantContext {
  readonly engine: Engine;
  readonly logger: Logger;
  readonly tool: string;
  readonly operationId: string;
  /** The connection (session) that called: its grants for this session. */
  readonly owner: string | undefined;
  readonly asker: PersonAsker | undefined;
}

/** Questions per command at most: a command refused many hosts gets the first few asked. */
const MAX_QUESTIONS = 3;

/** The answers the elicitation form offers, in order. */
export const ANSWERS = ['once', 'session', 'always', 'deny'] as const;

/** The result with what the person was asked and answered (or why they could not be). */
export async function askAboutRefusals(
  result: ExecutionResult,
  context: GrantContext,
): Promise<ExecutionResult> {
  const gate = context.engine.egress;
  const refusals = (result.networkRefusals ?? []).filter(askable);
  if (gate === undefined || refusals.length === 0) return result;
  const { asker } = context;
  if (asker === undefined) {
    return withNote(
      result,
      '[ahma network] this client cannot ask the person (it has no MCP elicitation): only the operator can allow these hosts, with the --allow-host given above. Ahma does not retry outside the sandbox, and no tool can widen it.',
    );
  }
  const lines: string[] = [];
  for (const refusal of refusals.slice(0, MAX_QUESTIONS)) {
    const rules = grantRules(refusal);
    const answer = await asker
      .ask({ message: questionText(context.tool, refusal), rules })
      .catch((error: unknown) => {
        context.logger.warn({ err: error }, 'could not ask the person about a refused host');
        return undefined;
      });
    const shown = rules.join(', ');
    if (answer === undefined || answer === 'deny') {
      lines.push(
        `[ahma network] the person did not allow ${shown}${answer === undefined ? ' (no answer)' : ''}; it stays refused.`,
      );
      grantAudit(context, refusal, rules, answer ?? 'no answer', asker.who);
      continue;
    }
    await gate.grant(context.owner, refusal, answer, {
      who: asker.who,
      why: `${context.tool} (${context.operationId}): ${refusal.reason}`,
    });
    grantAudit(context, refusal, rules, answer, asker.who);
    lines.push(
      `[ahma network] the person allowed ${shown} ${DURATION_TEXT[answer]}: run the command again to use it.`,
    );
  }
  return withNote(result, lines.join('\n'));
}

const DURATION_TEXT: Record<GrantDuration, string> = {
  once: "for this session's next command",
  session: 'for this session',
  always:
    'for every session in this scope (ahma-shell grants list shows it, grants revoke takes it back)',
};

function questionText(tool: string, refusal: NetworkRefusal): string {
  return `${tool} wants to reach ${hostPortText(refusal)}, which Ahma refused: ${refusal.reason}. Allow it once (the next command), for this session, always (in this project), or deny?`;
}

function hostPortText(refusal: NetworkRefusal): string {
  return `${refusal.host.includes(':') ? `[${refusal.host}]` : refusal.host}:${String(refusal.port)}`;
}

/** R7.19: each answer is an audit line (a grant is a warning: the sandbox widened). */
function grantAudit(
  context: GrantContext,
  refusal: NetworkRefusal,
  rules: readonly string[],
  answer: string,
  who: string,
): void {
  const granted = answer !== 'deny' && answer !== 'no answer';
  context.logger[granted ? 'warn' : 'info'](
    {
      audit: {
        operation: context.operationId,
        tool: context.tool,
        scope: context.engine.sandbox.scope,
        network_grant: {
          host: refusal.host,
          port: refusal.port,
          rules,
          answer,
          who,
        },
      },
    },
    granted ? 'network grant' : 'network grant refused',
  );
}

function withNote(result: ExecutionResult, note: string): ExecutionResult {
  return note === '' ? result : { ...result, output: `${result.output}${note}\n` };
}
