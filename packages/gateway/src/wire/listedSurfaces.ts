/** A listed surface of an MCP server that a pin can pin (docs/pin-surfaces.md). */
export type ListedSurface = 'tools' | 'prompts' | 'resourceTemplates';

/** How one surface is listed: its method, the result member holding the items, and the capability that offers it. */
export interface SurfaceListing {
  readonly surface: ListedSurface;
  readonly method: 'tools/list' | 'prompts/list' | 'resources/templates/list';
  /** The member of each page's result that holds the items. */
  readonly member: 'tools' | 'prompts' | 'resourceTemplates';
  /** The server capability (initialize result) that says the server offers it. */
  readonly capability: 'tools' | 'prompts' | 'resources';
  /** One item, for messages. */
  readonly item: string;
  /** Several items, for messages. */
  readonly items: string;
}

/** The listed surfaces, tools first. */
export const SURFACE_LISTINGS: Readonly<Record<ListedSurface, SurfaceListing>> = {
  tools: {
    surface: 'tools',
    method: 'tools/list',
    member: 'tools',
    capability: 'tools',
    item: 'tool',
    items: 'tools',
  },
  prompts: {
    surface: 'prompts',
    method: 'prompts/list',
    member: 'prompts',
    capability: 'prompts',
    item: 'prompt',
    items: 'prompts',
  },
  resourceTemplates: {
    surface: 'resourceTemplates',
    method: 'resources/templates/list',
    member: 'resourceTemplates',
    capability: 'resources',
    item: 'resource template',
    items: 'resource templates',
  },
};
