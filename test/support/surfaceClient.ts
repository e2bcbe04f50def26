/** What a test reads of a server's surfaces through an SDK client (v1 and v2 clients alike). */
export interface SurfaceClient {
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: unknown[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  getInstructions(): string | undefined;
}

/** What the client was served: prompt names, template URIs, instructions. */
export interface ServedView {
  readonly prompts: string[];
  readonly templates: string[];
  readonly instructions: string | undefined;
}

/** Lists prompts and templates and reads the instructions the client was given at connect. */
export async function servedView(client: SurfaceClient): Promise<ServedView> {
  const { prompts } = await client.listPrompts();
  const { resourceTemplates } = await client.listResourceTemplates();
  return {
    prompts: prompts.map((prompt) => prompt.name).sort(),
    templates: resourceTemplates.map((template) => template.uriTemplate).sort(),
    instructions: client.getInstructions(),
  };
}

/** The JSON-RPC error of a rejected SDK request (McpError of v1, ProtocolError of v2). */
export interface RequestRefusal {
  readonly code: number;
  readonly data: unknown;
}

/** The refusal a prompts/get met, or undefined when it was answered. */
export async function promptRefusal(
  client: SurfaceClient,
  name: string,
  args: Record<string, string> = { who: 'Ada' },
): Promise<RequestRefusal | undefined> {
  return client.getPrompt({ name, arguments: args }).then(
    () => undefined,
    (error: unknown) => {
      const { code, data } = error as { code?: unknown; data?: unknown };
      if (typeof code !== 'number') throw error;
      return { code, data };
    },
  );
}
