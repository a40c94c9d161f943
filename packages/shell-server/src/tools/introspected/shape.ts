// SPEC §15 --introspect: what a written definition gives an agent, read off its shape: how many
// tools (its leaves), and whether it is worth serving at all.

type Node = Record<string, unknown>;

function children(node: Node): Node[] {
  const list = node['subcommand'];
  return Array.isArray(list) ? (list as Node[]) : [];
}

/** The tools a definition gives: its leaves. */
export function leafCount(node: Node): number {
  const below = children(node);
  return below.length === 0 ? 1 : below.reduce((sum, child) => sum + leafCount(child), 0);
}

/**
 * Whether a definition gives an agent more than the bare program: more than one tool, or a tool
 * with arguments. A help no parser could read becomes one tool without any: not worth serving.
 */
export function useful(definition: Node): boolean {
  const hasArguments = (node: Node): boolean =>
    ['options', 'positional_args'].some((field) => {
      const list = node[field];
      return Array.isArray(list) && list.length > 0;
    }) || children(node).some(hasArguments);
  return leafCount(definition) > 1 || hasArguments(definition);
}
