import { decideCall } from '../../src/policy/decideCall.js';
import { inspectToolsPage } from '../../src/policy/inspectToolsPage.js';
import type { PinView } from '../../src/policy/pinView.js';
import { SessionCatalog } from '../../src/state/sessionCatalog.js';
import { ToolDigester } from '../../src/state/toolDigester.js';
import { appTool, pinnedConfig, plainTool } from './pinnedTools.js';

/** The catalog of a session that was served `tools` in one listing under `pin`. */
function servedCatalog(pin: PinView, tools: readonly unknown[]): SessionCatalog {
  const catalog = new SessionCatalog();
  catalog.addPage(pin, inspectToolsPage(pin, tools, new ToolDigester()), true, true);
  return catalog;
}

describe('decideCall: members pinned by value', () => {
  it('refuses a call to a tool whose pinned _meta changed, with reason tool_drifted', () => {
    const pin = pinnedConfig([appTool(), plainTool()]);
    const catalog = servedCatalog(pin, [appTool('ui://weather/evil.html'), plainTool()]);
    const decision = decideCall(pin, catalog, 'get_weather');
    expect(decision).toMatchObject({
      kind: 'deny',
      data: { reason: 'tool_drifted', server: 'srv', tool: 'get_weather', key: 'tool:get_weather' },
    });
    // The digest is the same: only the member pinned by value tells the definitions apart.
    if (decision.kind === 'deny') expect(decision.data.observed).toBe(decision.data.pinned);
    expect(decideCall(pin, catalog, 'echo')).toEqual({ kind: 'allow' });
  });

  it('allows a call to a tool served with unrecorded members: the client saw it without them', () => {
    const pin = pinnedConfig([plainTool()]);
    const catalog = servedCatalog(pin, [{ ...plainTool(), 'x-foo': 'bar', _meta: { a: 1 } }]);
    expect(decideCall(pin, catalog, 'echo')).toEqual({ kind: 'allow' });
  });

  it('judges the session catalog against the pin in force: approving the new _meta allows the call', () => {
    const drifted = appTool('ui://weather/v2.html');
    const before = pinnedConfig([appTool()]);
    const catalog = servedCatalog(before, [drifted]);
    expect(decideCall(before, catalog, 'get_weather').kind).toBe('deny');
    const approved = pinnedConfig([drifted]);
    expect(decideCall(approved, catalog, 'get_weather')).toEqual({ kind: 'allow' });
  });

  it('flags and allows the drifted call in monitor mode', () => {
    const pin = pinnedConfig([appTool()], { mode: 'monitor' });
    const catalog = servedCatalog(pin, [appTool('ui://weather/evil.html')]);
    expect(decideCall(pin, catalog, 'get_weather')).toMatchObject({
      kind: 'allow',
      flagged: { reason: 'tool_drifted', tool: 'get_weather' },
    });
  });
});
