// R7.16–R7.18: the engine's side of `--network proxy`. It runs the egress proxy, gives each command
// a pass — a proxy URL carrying a token of its own, set in the command's proxy variables — and
// answers the proxy's "who is this and what may it reach" from that token: the server's rules (the
// profiles' hosts and --allow-host, less --deny-host), the person's lasting grants for this scope
// (the ledger), the grants of the command's session, and a grant for its next command only. What
// the proxy refused a command is handed back when the command ends, so the person can be asked.
//
// A token is good only while its command runs, and only another process of that command can read
// it (Landlock keeps commands from each other's /proc): no other local process can use the proxy,
// and what a command was refused is known to be that command's.
import { randomBytes } from 'node:crypto';
import type { NetworkRefusal } from '../process/execution-types.js';
import type { GrantLedger } from '../state/grant-ledger.js';
import {
  startEgressProxy,
  type EgressDecision,
  type EgressProxy,
  type EgressRefusal,
} from './egress-proxy.js';
import { HostRules, parseHostPattern, type HostPattern } from './host-rules.js';
import { authority } from './upstream.js';

/** Who runs a command: the proxy's principal. */
export interface EgressCaller {
  readonly tool: string;
  readonly operationId: string;
  /** The MCP connection (session) that started it; grants "for this session" are its own. */
  readonly owner: string | undefined;
}

/** How long a person's "yes" lasts. */
export type GrantDuration = 'once' | 'session' | 'always';

export interface EgressGateOptions {
  /** The scope (real path) whose commands these are: ledger grants are per scope. */
  readonly scope: string;
  /** Host rules commands may reach: the enabled profiles' hosts and --allow-host. */
  readonly allow: readonly string[];
  /** Host rules they may not (--deny-host), whatever allows them. */
  readonly deny: readonly string[];
  /** The person's lasting grants; none are kept without one. */
  readonly ledger?: GrantLedger | undefined;
  /** Every decision of the proxy (the audit log). */
  readonly onDecision?: ((decision: EgressDecision<EgressCaller>) => void) | undefined;
}

/** A command's way through the proxy. */
export interface EgressPass {
  /** The variables the command runs with (the proxy variables, and no bypass by name). */
  readonly env: Readonly<Record<string, string>>;
  /** The command ended: the token stops working; what was refused. */
  end(): NetworkRefusal[];
}

interface OpenPass {
  readonly caller: EgressCaller;
  readonly once: readonly HostPattern[];
  readonly refusals: Map<string, NetworkRefusal>;
}

/** The proxy variables curl, git, npm, pip, cargo and Go read, in the spellings each reads. */
const PROXY_VARIABLES = [
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
] as const;
/** The user name in every pass's proxy URL (the token is the password). */
const PROXY_USER = 'ahma';
/** A refusal only the person can lift (unlike a malformed request or an unreachable host). */
const ASKABLE: ReadonlySet<EgressRefusal> = new Set(['unlisted', 'private', 'port']);

export class EgressGate {
  readonly #options: EgressGateOptions;
  readonly #passes = new Map<string, OpenPass>();
  /** Grants for a session's commands, by owner. */
  readonly #session = new Map<string | undefined, HostPattern[]>();
  /** Grants for the next command of a session, by owner. */
  readonly #once = new Map<string | undefined, HostPattern[]>();
  #base: HostRules;
  #proxy: EgressProxy | undefined;

  private constructor(options: EgressGateOptions, base: HostRules) {
    this.#options = options;
    this.#base = base;
  }

  /** Checks the rules (CONFIG_INVALID for a malformed one), loads the ledger, starts the proxy. */
  static async start(options: EgressGateOptions): Promise<EgressGate> {
    const lasting = (await options.ledger?.forScope(options.scope, 'host')) ?? [];
    const gate = new EgressGate(
      options,
      new HostRules(
        [...options.allow, ...lasting.map((grant) => grant.rule)].map(parseHostPattern),
        options.deny.map(parseHostPattern),
      ),
    );
    gate.#proxy = await startEgressProxy<OpenPass>({
      authenticate: (user, password) =>
        user === PROXY_USER ? gate.#passes.get(password) : undefined,
      rules: (pass) => gate.#rulesFor(pass),
      onDecision: (decision) => gate.#decided(decision),
    });
    return gate;
  }

  /** The proxy's port (the only one commands may connect to). */
  get port(): number {
    return this.#proxy?.port ?? 0;
  }

  /** The rules in force for the server's commands (the person's grants aside). */
  get rules(): HostRules {
    return this.#base;
  }

  open(caller: EgressCaller): EgressPass {
    const token = randomBytes(24).toString('hex');
    const once = this.#once.get(caller.owner) ?? [];
    this.#once.delete(caller.owner);
    const pass: OpenPass = { caller, once, refusals: new Map() };
    this.#passes.set(token, pass);
    const url = this.#proxy?.url(PROXY_USER, token) ?? '';
    const env: Record<string, string> = { no_proxy: '', NO_PROXY: '' };
    for (const name of PROXY_VARIABLES) env[name] = url;
    return {
      env,
      end: () => {
        this.#passes.delete(token);
        return [...pass.refusals.values()];
      },
    };
  }

  /**
   * R7.18: what a person allowed, as the narrowest rules (grantRules). `once`: the session's next
   * command; `session`: its commands from now on; `always`: every command in this scope, now and
   * after a restart (the ledger records who, when and why).
   */
  async grant(
    owner: string | undefined,
    refusal: NetworkRefusal,
    duration: GrantDuration,
    record: { readonly who: string; readonly why: string },
  ): Promise<HostPattern[]> {
    const patterns = grantRules(refusal).map(parseHostPattern);
    if (duration === 'always') {
      for (const pattern of patterns) {
        await this.#options.ledger?.add({
          kind: 'host',
          rule: pattern.text,
          scope: this.#options.scope,
          who: record.who,
          when: new Date().toISOString(),
          why: record.why,
        });
      }
      this.#base = this.#base.with(patterns);
    } else {
      const map = duration === 'once' ? this.#once : this.#session;
      map.set(owner, [...(map.get(owner) ?? []), ...patterns]);
    }
    return patterns;
  }

  /** The session ended: its grants go. */
  forget(owner: string | undefined): void {
    this.#session.delete(owner);
    this.#once.delete(owner);
  }

  async close(): Promise<void> {
    this.#passes.clear();
    await this.#proxy?.close();
  }

  #rulesFor(pass: OpenPass): HostRules {
    const more = [...(this.#session.get(pass.caller.owner) ?? []), ...pass.once];
    return more.length === 0 ? this.#base : this.#base.with(more);
  }

  #decided(decision: EgressDecision<OpenPass>): void {
    const pass = decision.principal;
    if (pass !== undefined && !decision.allowed && decision.refusal !== undefined) {
      const key = `${decision.host}:${String(decision.port)}:${decision.refusal}`;
      // Bounded: a command trying every port of a host is refused each time, remembered a few.
      if (pass.refusals.size < 20 && !pass.refusals.has(key)) {
        pass.refusals.set(key, {
          host: decision.host,
          port: decision.port,
          refusal: decision.refusal,
          reason: decision.reason,
          address: decision.address,
        });
      }
    }
    this.#options.onDecision?.({ ...decision, principal: pass?.caller });
  }
}

/** Whether the person could lift this refusal with a grant. */
export function askable(refusal: NetworkRefusal): boolean {
  return ASKABLE.has(refusal.refusal);
}

/**
 * The rules a grant adds for a refusal: `host:port`; for a name that led to a loopback or private
 * address, that address too (the proxy reaches such an address only when a rule names it).
 */
export function grantRules(refusal: NetworkRefusal): string[] {
  const named = authority(refusal.host, refusal.port);
  if (refusal.refusal !== 'private' || refusal.address === undefined) return [named];
  const address = authority(refusal.address, refusal.port);
  return address === named ? [named] : [named, address];
}
