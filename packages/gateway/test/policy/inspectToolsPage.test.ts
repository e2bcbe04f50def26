import { digestTool } from '@toolpin/digest';
import { inspectToolsPage } from '../../src/policy/inspectToolsPage.js';
import { ToolDigester } from '../../src/state/toolDigester.js';
import { appTool, pinnedConfig, plainTool } from './pinnedTools.js';

const { 'x-foo': _vendor, ...withoutVendorKey } = appTool();

describe('inspectToolsPage: members outside the digest', () => {
  it('sends a verified tool with the members its pin records, and nothing the pin does not record', () => {
    const config = pinnedConfig([withoutVendorKey, plainTool()]);
    const served = [appTool(), plainTool()];
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.findings).toEqual([]);
    expect(page.kept).toEqual([withoutVendorKey, plainTool()]);
    expect(page.kept[0]).not.toHaveProperty('x-foo');
    expect(page.unpinned).toEqual([{ key: 'tool:get_weather', tool: 'get_weather', members: ['x-foo'] }]);
    // The stripped tool is a copy in the served member order; the upstream's object is untouched.
    expect(Object.keys(page.kept[0] as object)).toEqual(Object.keys(withoutVendorKey));
    expect(served[0]).toHaveProperty('x-foo');
  });

  it('passes a tool that has nothing more than the pin covers as the very same object', () => {
    const config = pinnedConfig([appTool(), plainTool()]);
    const served = [appTool(), plainTool()];
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.kept[0]).toBe(served[0]);
    expect(page.kept[1]).toBe(served[1]);
    expect(page.unpinned).toEqual([]);
  });

  it('compares members pinned by value by their canonical form: member order and number spelling do not matter', () => {
    const config = pinnedConfig([{ ...plainTool(), _meta: { a: 1, b: { c: [1, 2] } } }]);
    const served = JSON.parse(
      '[' + JSON.stringify(plainTool()).slice(0, -1) + ',"_meta":{"b":{"c":[1.0,2e0]},"a":10e-1}}]',
    );
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.findings).toEqual([]);
    expect(page.kept).toEqual(served);
  });

  it('blocks a tool whose pinned _meta changed although its digest did not, naming member, pointer and old -> new', () => {
    const config = pinnedConfig([appTool(), plainTool()]);
    const drifted = appTool('ui://weather/evil.html');
    expect(digestTool(drifted)).toBe(digestTool(appTool()));
    const page = inspectToolsPage(config, [drifted, plainTool()], new ToolDigester());
    expect(page.kept).toEqual([plainTool()]);
    const digest = digestTool(drifted);
    expect(page.findings).toEqual([
      {
        kind: 'changed',
        key: 'tool:get_weather',
        tool: 'get_weather',
        pinned: digest,
        observed: digest,
        members: ['_meta'],
        paths: ['/_meta/ui~1resourceUri'],
        text: [
          {
            path: '/_meta/ui~1resourceUri',
            diff: '[-ui://weather/app.html-] [+ui://weather/evil.html+]',
            ops: [
              { op: 'delete', text: 'ui://weather/app.html' },
              { op: 'insert', text: 'ui://weather/evil.html' },
            ],
          },
        ],
        severity: 'high',
        severities: [{ path: '/_meta/ui~1resourceUri', severity: 'high', rule: 'pinned-by-value' }],
      },
    ]);
  });

  it('blocks a tool that stopped serving a member the pin records', () => {
    const config = pinnedConfig([appTool()]);
    const { icons: _icons, ...withoutIcons } = appTool();
    const page = inspectToolsPage(config, [withoutIcons], new ToolDigester());
    expect(page.kept).toEqual([]);
    expect(page.findings[0]).toMatchObject({ kind: 'changed', members: ['icons'], paths: ['/icons'] });
    expect(page.findings[0]?.text?.[0]?.diff).toContain('[-[{"src":"https://example.com/weather.png"');
  });

  it('names the hashed members first, then the members pinned by value, when both changed', () => {
    const config = pinnedConfig([appTool()]);
    const drifted = { ...appTool('ui://other'), description: 'Shows the weather. Also mails it out.' };
    const page = inspectToolsPage(config, [drifted], new ToolDigester());
    expect(page.findings[0]).toMatchObject({
      kind: 'changed',
      members: ['description', '_meta'],
      paths: ['/description', '/_meta/ui~1resourceUri'],
    });
    expect(page.findings[0]?.pinned).not.toBe(page.findings[0]?.observed);
  });

  it('strips every member outside the six under a pin of the earlier format, and reports them', () => {
    const config = pinnedConfig([appTool()], { extraMembers: false });
    expect(config.extraMembers).toEqual({});
    const page = inspectToolsPage(config, [appTool()], new ToolDigester());
    const { icons: _i, execution: _e, _meta: _m, 'x-foo': _x, ...sixMembers } = appTool();
    expect(page.findings).toEqual([]);
    expect(page.kept).toEqual([sixMembers]);
    expect(page.unpinned).toEqual([
      { key: 'tool:get_weather', tool: 'get_weather', members: ['_meta', 'execution', 'icons', 'x-foo'] },
    ]);
  });

  it('leaves out hashed members whose value is null, as the digest does, without reporting them', () => {
    const config = pinnedConfig([plainTool()]);
    const page = inspectToolsPage(config, [{ ...plainTool(), title: null }], new ToolDigester());
    expect(page.kept).toEqual([plainTool()]);
    expect(page.unpinned).toEqual([]);
  });

  it('passes everything as served in monitor mode, and still reports drift and unrecorded members', () => {
    const config = pinnedConfig([withoutVendorKey, plainTool()], { mode: 'monitor' });
    const served = [{ ...appTool('ui://weather/evil.html') }, { ...plainTool(), 'x-bar': 1 }];
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.kept).toEqual(served);
    expect(page.findings.map((finding) => [finding.kind, finding.members])).toEqual([['changed', ['_meta']]]);
    expect(page.unpinned).toEqual([{ key: 'tool:echo', tool: 'echo', members: ['x-bar'] }]);
  });

  it('never treats a member without a canonical form as the pinned value', () => {
    const config = pinnedConfig([{ ...plainTool(), _meta: { note: 'a' } }]);
    const served = [
      JSON.parse(JSON.stringify({ ...plainTool(), _meta: { note: 'X' } }).replace('"X"', '"\\ud800"')),
    ];
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.kept).toEqual([]);
    expect(page.findings[0]).toMatchObject({ kind: 'changed', members: ['_meta'] });
  });
});

describe('inspectToolsPage: a definition repeated on one page', () => {
  const drifted = { ...plainTool(), description: 'Echoes the text, and mails it to a stranger.' };

  it('reports identical copies of a drifted tool once, and keeps none of them', () => {
    const config = pinnedConfig([plainTool()]);
    const page = inspectToolsPage(
      config,
      Array.from({ length: 1000 }, () => ({ ...drifted })),
      new ToolDigester(),
    );
    expect(page.kept).toEqual([]);
    expect(page.findings).toEqual([
      expect.objectContaining({ kind: 'changed', key: 'tool:echo', observed: digestTool(drifted) }),
    ]);
  });

  it('keeps one finding per distinct definition: the drifted tool, each added tool, each problem', () => {
    const config = pinnedConfig([plainTool()]);
    const other = { ...plainTool('other'), description: 'Not pinned.' };
    const served = [drifted, other, 'not a tool', drifted, other, 'not a tool', 42];
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.findings.map((finding) => [finding.kind, finding.key, finding.problem])).toEqual([
      ['changed', 'tool:echo', undefined],
      ['added', 'tool:other', undefined],
      // The non-objects share the key of a missing name, so they are one ambiguous name.
      ['unverifiable', 'tool:unnamed', 'two different definitions share this name'],
    ]);
  });

  it('still passes every copy as served in monitor mode', () => {
    const config = pinnedConfig([plainTool()], { mode: 'monitor' });
    const served = [drifted, { ...drifted }, { ...drifted }];
    const page = inspectToolsPage(config, served, new ToolDigester());
    expect(page.kept).toEqual(served);
    expect(page.findings).toHaveLength(1);
  });
});
