import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { defaultTools } from './catalog.js';
import { paginate } from './paginate.js';

/** Sends one `notifications/progress` (progress, total) for the call being executed. */
export type ProgressSink = (progress: number, total: number) => Promise<void>;

/**
 * The mutable tool catalog shared by every peer: the definitions it lists, what each call does,
 * and how many calls each tool actually executed. `onListChanged` fires after every mutation.
 */
export class ToolRegistry {
  private readonly tools: Tool[];
  private readonly calls = new Map<string, number>();
  /** While set, `slow` calls wait here after their first step (see {@link holdSlowCalls}). */
  private held: Promise<void> | undefined;
  onListChanged: () => void = () => {};

  constructor(tools: Tool[] = defaultTools()) {
    this.tools = structuredClone(tools);
  }

  /** A deep copy of the current definitions, in order. */
  list(): Tool[] {
    return structuredClone(this.tools);
  }

  /**
   * One page of tools/list (see {@link paginate}): deep copies of that page's definitions only, so
   * a paged listing of a large catalog copies each definition once, not once per page.
   */
  page(cursor: string | undefined, pageSize: number | undefined): { page: Tool[]; nextCursor?: string } {
    const { page, nextCursor } = paginate(this.tools, cursor, pageSize);
    return nextCursor === undefined
      ? { page: structuredClone(page) }
      : { page: structuredClone(page), nextCursor };
  }

  callCount(name?: string): number {
    if (name !== undefined) return this.calls.get(name) ?? 0;
    let total = 0;
    for (const n of this.calls.values()) total += n;
    return total;
  }

  /** Replaces fields of one definition (e.g. `{ description }`) and announces list_changed. */
  drift(name: string, patch: Partial<Tool>): void {
    const index = this.tools.findIndex((t) => t.name === name);
    const current = this.tools[index];
    if (current === undefined) throw new Error(`unknown tool ${name}`);
    this.tools[index] = { ...current, ...structuredClone(patch) };
    this.onListChanged();
  }

  add(tool: Tool): void {
    if (this.tools.some((t) => t.name === tool.name)) throw new Error(`duplicate tool ${tool.name}`);
    this.tools.push(structuredClone(tool));
    this.onListChanged();
  }

  remove(name: string): void {
    const index = this.tools.findIndex((t) => t.name === name);
    if (index < 0) throw new Error(`unknown tool ${name}`);
    this.tools.splice(index, 1);
    this.onListChanged();
  }

  /**
   * Holds every `slow` call after its first step (its first progress sent) until the returned
   * release is called: a call a test keeps in flight for as long as it needs, with no timed wait.
   */
  holdSlowCalls(): () => void {
    let release: () => void = () => undefined;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.held = undefined;
      release();
    };
  }

  /** Executes a tools/call. Unknown tools answer an `isError` result (and are not counted). */
  async call(name: string, args: Record<string, unknown>, progress?: ProgressSink): Promise<CallToolResult> {
    if (!this.tools.some((t) => t.name === name)) {
      return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${name}` }] };
    }
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
    switch (name) {
      case 'echo':
        return { content: [{ type: 'text', text: String(args['text'] ?? '') }] };
      case 'add':
        return { content: [{ type: 'text', text: String(Number(args['a']) + Number(args['b'])) }] };
      case 'slow': {
        const steps = typeof args['steps'] === 'number' ? args['steps'] : 3;
        const delayMs = typeof args['delayMs'] === 'number' ? args['delayMs'] : 10;
        for (let i = 1; i <= steps; i++) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          await progress?.(i, steps);
          if (i === 1) await this.held;
        }
        return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
      }
      default: {
        const text = `${name} called with ${JSON.stringify(args)}`;
        // A tool with an outputSchema answers its `structured` argument as its structured content.
        const tool = this.tools.find((t) => t.name === name);
        if (tool?.outputSchema === undefined) return { content: [{ type: 'text', text }] };
        return {
          content: [{ type: 'text', text }],
          structuredContent: args['structured'] as Record<string, unknown>,
        };
      }
    }
  }
}
