import { TRACE_PROFILE } from '@toolpin/digest';
import {
  parsePinFile,
  serializePinFile,
  type OnDriftSetting,
  type ServerConfig,
} from '../../src/config/index.js';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';

/** Options of {@link pinnedConfig}. */
export interface PinnedConfigOptions {
  readonly mode?: 'enforce' | 'monitor';
  /** Record the members outside the six, as `toolpin pin` does; false writes a pin of the earlier format. @default true */
  readonly extraMembers?: boolean;
  /** @default 'filter' */
  readonly onDrift?: OnDriftSetting;
}

/**
 * The configuration the gateway would load for a pin of `tools`: made the way `toolpin pin`
 * makes it (pinFromCatalog, serializePinFile) and read back with the gateway's loader.
 */
export function pinnedConfig(tools: readonly object[], options: PinnedConfigOptions = {}): ServerConfig {
  const observed = pinFromCatalog(tools, TRACE_PROFILE);
  const text = serializePinFile(
    {
      name: 'srv',
      upstream: { url: 'http://127.0.0.1:9/mcp' },
      mode: options.mode ?? 'enforce',
      ...(options.onDrift === undefined ? {} : { onDrift: options.onDrift }),
      pin: observed.pin,
      definitions: observed.definitions,
      ...(options.extraMembers === false ? {} : { extraMembers: observed.extraMembers }),
    },
    'yaml',
  );
  return parsePinFile(text, '/pins/srv.yaml');
}

/** A tool of an MCP Apps server: icons, `_meta` naming its UI resource, and a vendor key. */
export function appTool(resourceUri = 'ui://weather/app.html'): Record<string, unknown> {
  return {
    name: 'get_weather',
    title: 'Get weather',
    description: 'Shows the weather for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    icons: [{ src: 'https://example.com/weather.png', mimeType: 'image/png' }],
    execution: { taskSupport: 'optional' },
    _meta: { 'ui/resourceUri': resourceUri },
    'x-foo': { tier: 'gold' },
  };
}

/** A tool with the six hashed members only. */
export function plainTool(name = 'echo'): Record<string, unknown> {
  return {
    name,
    description: 'Echoes the given text back unchanged.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  };
}
