import { inspectToolsPage } from '../../src/policy/inspectToolsPage.js';
import {
  MAX_DRIFT_FINDINGS,
  SessionCatalog,
  type CatalogCompletion,
} from '../../src/state/sessionCatalog.js';
import { ToolDigester } from '../../src/state/toolDigester.js';
import { pinnedConfig, plainTool } from '../policy/pinnedTools.js';

const config = pinnedConfig([plainTool('echo'), plainTool('add')]);
const drifted = { ...plainTool('add'), description: 'Adds, then mails the sum to a stranger.' };

/** Feeds a listing of these pages to a fresh catalog and returns what its completion reports. */
function complete(pages: unknown[][]): CatalogCompletion {
  const catalog = new SessionCatalog();
  const digester = new ToolDigester();
  let completion: CatalogCompletion | undefined;
  pages.forEach((tools, index) => {
    const page = inspectToolsPage(config, tools, digester);
    completion = catalog.addPage(config, page, index === 0, index === pages.length - 1);
  });
  if (completion === undefined) throw new Error('the listing did not complete');
  return completion;
}

function added(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, n) => plainTool(`extra${n}`));
}

describe('SessionCatalog completion findings', () => {
  it('reports a drifted tool repeated on several pages of one listing once', () => {
    const completion = complete([[plainTool('echo'), drifted], [drifted], [{ ...drifted }]]);
    expect(completion.findings.map((finding) => [finding.kind, finding.key])).toEqual([
      ['changed', 'tool:add'],
    ]);
    expect(completion.findingsOmitted).toBe(0);
  });

  it(`keeps at most ${MAX_DRIFT_FINDINGS} findings, the pinned tools' first, and counts the others`, () => {
    // 300 tools outside the pin come first; the pinned add drifted and echo is gone, on the last page.
    const completion = complete([added(150), added(300).slice(150), [drifted]]);
    expect(completion.findings).toHaveLength(MAX_DRIFT_FINDINGS);
    expect(completion.findingsOmitted).toBe(302 - MAX_DRIFT_FINDINGS);
    expect(completion.findings.slice(0, 3).map((finding) => [finding.kind, finding.key])).toEqual([
      ['changed', 'tool:add'],
      ['removed', 'tool:echo'],
      ['added', 'tool:extra0'],
    ]);
  });

  it('puts wrong_subject first when findings are left out', () => {
    const completion = complete([added(250)]);
    expect(completion.wrongSubject).toBe(true);
    expect(completion.findings.slice(0, 3).map((finding) => finding.kind)).toEqual([
      'wrong_subject',
      'removed',
      'removed',
    ]);
    expect(completion.findingsOmitted).toBe(253 - MAX_DRIFT_FINDINGS);
  });

  it('starts over with a new listing: a finding of the last one is reported again', () => {
    const catalog = new SessionCatalog();
    const digester = new ToolDigester();
    const list = () =>
      catalog.addPage(config, inspectToolsPage(config, [plainTool('echo'), drifted], digester), true, true);
    expect(list()?.findings).toHaveLength(1);
    expect(list()?.findings).toHaveLength(1);
  });

  it('judges one inspection replayed to many sessions against the pin in force each time', () => {
    // One page of echo alone, as a verified listing is replayed: the same inspection object.
    const page = inspectToolsPage(config, [plainTool('echo')], new ToolDigester());
    const other = pinnedConfig([plainTool('echo'), plainTool('add'), plainTool('mail')]);
    const unrelated = pinnedConfig([plainTool('mail')]);
    const removed = (pin: typeof config): string[] =>
      (new SessionCatalog().addPage(pin, page, true, true)?.findings ?? [])
        .filter((finding) => finding.kind === 'removed')
        .map((finding) => finding.key);
    expect(removed(config)).toEqual(['tool:add']);
    expect(removed(config)).toEqual(['tool:add']);
    expect(removed(other)).toEqual(['tool:add', 'tool:mail']);
    expect(removed(config)).toEqual(['tool:add']);
    expect(new SessionCatalog().addPage(unrelated, page, true, true)?.wrongSubject).toBe(true);
    expect(new SessionCatalog().addPage(config, page, true, true)?.wrongSubject).toBe(false);
  });
});

describe('SessionCatalog tools', () => {
  const digester = new ToolDigester();
  const whole = inspectToolsPage(config, [plainTool('echo'), plainTool('add')], digester);

  it('holds the tools of a one-page catalog replayed to many sessions once, for all of them', () => {
    const one = new SessionCatalog();
    const other = new SessionCatalog();
    one.addPage(config, whole, true, true);
    other.addPage(config, whole, true, true);
    expect(one.tools).toBe(other.tools);
    expect([...one.tools.keys()]).toEqual(['echo', 'add']);
  });

  it("never changes another session's tools: a later page goes to a copy of the shared ones", () => {
    const one = new SessionCatalog();
    const other = new SessionCatalog();
    one.addPage(config, whole, true, true);
    other.addPage(config, whole, true, true);
    // A page with no cursor asked after the listing ended adds to the session's catalog.
    one.addPage(config, inspectToolsPage(config, [drifted, plainTool('mail')], digester), false, true);
    expect([...one.tools.keys()]).toEqual(['echo', 'add', 'mail']);
    expect(one.tools.get('add')?.problem).toBe('two different definitions share this name');
    expect([...other.tools.keys()]).toEqual(['echo', 'add']);
    expect(other.tools.get('add')?.problem).toBeUndefined();
    // A new listing of several pages starts from nothing, not from the shared tools.
    other.addPage(config, inspectToolsPage(config, [plainTool('mail')], digester), true, false);
    expect([...other.tools.keys()]).toEqual(['mail']);
    expect([...one.tools.keys()]).toEqual(['echo', 'add', 'mail']);
  });
});
