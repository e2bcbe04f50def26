import { digestCatalog, restrictTool, TRACE_PROFILE } from '@toolpin/digest';

/** Options of {@link pinFor}. */
export interface PinForOptions {
  mode?: 'enforce' | 'monitor';
  onDrift?: 'filter' | 'block-server';
  profile?: string;
  /** Keep the pinned definitions in the pin (for drift explanations). @default true */
  definitions?: boolean;
}

/** A pin-file object approving exactly `tools` for the server at `url`. */
export function pinFor(
  name: string,
  url: string,
  tools: readonly object[],
  options: PinForOptions = {},
): Record<string, unknown> {
  const profile = options.profile ?? TRACE_PROFILE;
  const digest = digestCatalog(tools, { profile });
  const pin: Record<string, unknown> = {
    name,
    upstream: { url },
    mode: options.mode ?? 'enforce',
    profile,
    onDrift: options.onDrift ?? 'filter',
    pin: { catalog: digest.catalog, tools: digest.entries },
  };
  if (options.definitions ?? true) {
    pin.definitions = Object.fromEntries(
      digest.tools.map((tool, index) => [tool.key, restrictTool(tools[index] as Record<string, unknown>)]),
    );
  }
  return pin;
}
