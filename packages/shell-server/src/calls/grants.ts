// R7.18: grants a person answers once. When the egress proxy refused a command a host it could be
// allowed (not on the allowlist, a port not allowed, a name leading to a private address), or the
// sandbox refused it a write outside every writable path, the server asks the person — through
// the client (MCP elicitation), never the model: no tool widens the sandbox — whether to allow it
// once, for this session, always, or not. The answer becomes the narrowest rule (host:port, or the
// directory that holds the refused path), kept by the engine (`always`: in the ledger in Ahma's
// private state); the command is not run again on its own: the result says what was decided, and
// the agent runs it again. A client that cannot be asked gets the refusal with the flag that would
// allow it.
import {
  askable,
  authority,
  grantRules,
  type Engine,
  type ExecutionResult,
  type GrantDuration,
} from '@ahma/core';
import type { Logger } from 'pino';

/** The person's answer to one question; undefined when the client gave none (declined, timed out). */
export type PersonAnswer = GrantDuration | 'deny' | undefined;

/** Asks the person, through the client. */
export interface PersonAsker {
  /** Who answers (the client's name and version), for the ledger. */
  readonly who: string;
  ask(question: GrantQuestion): Promise<PersonAnswer>;
}

export interface GrantQuestion {
  readonly message: string;
  /** What a yes allows, shown as the field's title: `reach 127.0.0.1:5432`, `write /srv/out`. */
  readonly allows: string;
}

export interface GrantContext {
  readonly engine: Engine;
  readonly logger: Logger;
  readonly tool: string;
  readonly operationId: string;
  /** The connection (session) that called: its grants for this session. */
  readonly owner: string | undefined;
  /** Undefined: this client cannot be asked. */
  readonly asker: PersonAsker | undefined;
}

/** Questions per command at most: a command refused many things gets the first few asked. */
const MAX_QUESTIONS = 3;

/** The answers the elicitation form offers, in order. */
export const ANSWERS = ['once', 'session', 'always', 'deny'] as const;

/** One thing the person could allow: what to ask, and what a yes does. */
interface Askable {
  readonly question: GrantQuestion;
  /** For the audit line. */
  readonly audit: Record<string, unknown>;
  grant(duration: GrantDuration, who: string): Promise<void>;
}

/** The result with what the person was asked and answered (or why they could not be). */
export async function askAboutRefusals(
  result: ExecutionResult,
  context: GrantContext,
): Promise<ExecutionResult> {
  const lines: string[] = [];
  const askables = [
    ...networkAskables(result, context),
    ...(await writeAskables(result, context, lines)),
  ];
  const { asker } = context;
  if (asker === undefined) {
    if (askables.length > 0) {
      lines.push(
        '[ahma sandbox] this client cannot ask the person (it has no MCP elicitation): only the operator can allow this, with the flag given above. Ahma does not retry outside the sandbox, and no tool can widen it.',
      );
    }
    return withLines(result, lines);
  }
  for (const each of askables.slice(0, MAX_QUESTIONS)) {
    const answer = await asker.ask(each.question).catch((error: unknown) => {
      context.logger.warn({ err: error }, 'could not ask the person');
      return undefined;
    });
    grantAudit(context, each, answer ?? 'no answer', asker.who);
    if (answer === undefined || answer === 'deny') {
      lines.push(
        `[ahma sandbox] the person did not allow this command to ${each.question.allows}${answer === undefined ? ' (no answer)' : ''}; it stays refused.`,
      );
      continue;
    }
    await each.grant(answer, asker.who);
    lines.push(
      `[ahma sandbox] the person allowed commands to ${each.question.allows} ${DURATION_TEXT[answer]}: run the command again to use it.`,
    );
  }
  return withLines(result, lines);
}

function withLines(result: ExecutionResult, lines: readonly string[]): ExecutionResult {
  return lines.length === 0
    ? result
    : { ...result, output: `${result.output}${lines.join('\n')}\n` };
}

const DURATION_TEXT: Record<GrantDuration, string> = {
  once: "for this session's next command",
  session: 'for this session',
  always:
    'for every session in this scope (ahma-shell grants list shows it, grants revoke takes it back)',
};

/** R7.17: the hosts the proxy refused that a rule could allow. */
function networkAskables(result: ExecutionResult, context: GrantContext): Askable[] {
  const gate = context.engine.egress;
  if (gate === undefined) return [];
  return (result.networkRefusals ?? []).filter(askable).map((refusal) => {
    const rules = grantRules(refusal);
    return {
      question: {
        message: `${context.tool} wants to reach ${authority(refusal.host, refusal.port)}, which Ahma refused: ${refusal.reason}. Allow it once (the next command), for this session, always (in this project), or deny?`,
        allows: `reach ${rules.join(', ')}`,
      },
      audit: { network_grant: { host: refusal.host, port: refusal.port, rules } },
      grant: async (duration, who) => {
        await gate.grant(context.owner, refusal, duration, {
          who,
          why: `${context.tool} (${context.operationId}): ${refusal.reason}`,
        });
      },
    };
  });
}

/** R7.18: the writes refused outside every writable path that a grant could allow. */
async function writeAskables(
  result: ExecutionResult,
  context: GrantContext,
  lines: string[],
): Promise<Askable[]> {
  const grants = context.engine.writeGrants;
  const askables: Askable[] = [];
  const targets = new Set<string>();
  for (const refused of result.writeRefusals ?? []) {
    const target = await grants.target(refused);
    if ('problem' in target) {
      lines.push(`[ahma sandbox] writing ${refused} cannot be granted: ${target.problem}.`);
      continue;
    }
    if (targets.has(target.path)) continue;
    targets.add(target.path);
    askables.push({
      question: {
        message: `${context.tool} was refused writing ${refused}, outside the paths commands may write. Allow commands to write ${target.path} once (the next command), for this session, always (in this project), or deny? Files written there may be used later outside the sandbox.`,
        allows: `write ${target.path}`,
      },
      audit: { write_grant: { refused, path: target.path } },
      grant: (duration, who) =>
        grants.grant(context.owner, target.path, duration, {
          who,
          why: `${context.tool} (${context.operationId}) was refused writing ${refused}`,
        }),
    });
  }
  return askables;
}

/** R7.19: each answer is an audit line (a grant is a warning: the sandbox widened). */
function grantAudit(context: GrantContext, asked: Askable, answer: string, who: string): void {
  const granted = answer !== 'deny' && answer !== 'no answer';
  context.logger[granted ? 'warn' : 'info'](
    {
      audit: {
        operation: context.operationId,
        tool: context.tool,
        scope: context.engine.sandbox.scope,
        ...asked.audit,
        answer,
        who,
      },
    },
    granted ? 'grant' : 'grant refused',
  );
}
