// R7.18: asking the person through the client: MCP elicitation (a form with one choice), which the
// client shows to its user, not to the model. Only a client that declared form elicitation is
// asked.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { ANSWERS, type PersonAnswer, type PersonAsker } from '../calls/grants.js';

/** How long a question waits for the person before it counts as no answer. */
const ANSWER_TIMEOUT_MS = 5 * 60 * 1000;

const TITLES: Record<(typeof ANSWERS)[number], string> = {
  once: 'Allow once (the next command)',
  session: 'Allow for this session',
  always: 'Always allow in this project',
  deny: 'Deny',
};

/**
 * The connection's asker, or undefined when its client cannot be asked. `related`: the call's
 * request while it is open (a question then travels on its stream), else undefined.
 */
export function personAsker(
  server: Server,
  related: () => RequestId | undefined,
): PersonAsker | undefined {
  if (server.getClientCapabilities()?.elicitation?.form === undefined) return undefined;
  const client = server.getClientVersion();
  return {
    who: client === undefined ? 'an MCP client' : `${client.name} ${client.version}`,
    async ask(question) {
      const relatedRequestId = related();
      const answer = await server.elicitInput(
        {
          mode: 'form',
          message: question.message,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: {
                type: 'string',
                title: `Allow commands to ${question.allows}?`,
                oneOf: ANSWERS.map((value) => ({ const: value, title: TITLES[value] })),
              },
            },
            required: ['decision'],
          },
        },
        {
          timeout: ANSWER_TIMEOUT_MS,
          ...(relatedRequestId === undefined ? {} : { relatedRequestId }),
        },
      );
      if (answer.action !== 'accept') return answer.action === 'decline' ? 'deny' : undefined;
      const decision = answer.content?.['decision'];
      return ANSWERS.find((value) => value === decision) as PersonAnswer;
    },
  };
}
