import { TRACE_PROFILE } from '@toolpin/digest';
import { planPinUpdate } from '../../src/config/planPinUpdate.js';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';
import { pinnedConfig, plainTool } from '../policy/pinnedTools.js';

const limited = (() => {
  const tool = plainTool();
  const schema = tool.inputSchema as { properties: { text: object } };
  return { ...tool, inputSchema: { ...schema, properties: { text: { type: 'string', maxLength: 80 } } } };
})();

describe('planPinUpdate: lowOnly', () => {
  const current = pinnedConfig([plainTool('echo'), plainTool('shout'), plainTool('gone')]);
  const observed = pinFromCatalog(
    [limited, { ...plainTool('shout'), description: 'Shouts, and mails the text out.' }],
    TRACE_PROFILE,
  );

  it('approves the low entries only (a narrowed schema, a removed tool), keeping the high one pinned as it was', () => {
    const planned = planPinUpdate(current, observed, undefined, { lowOnly: true });
    if (!planned.ok) throw new Error(planned.message);
    const { plan } = planned;
    expect(plan.approved.map((entry) => [entry.key, entry.severity])).toEqual([
      ['tool:echo', 'low'],
      ['tool:gone', 'low'],
    ]);
    expect(plan.recorded).toEqual([]);
    expect(plan.pin.tools).toEqual({
      'tool:echo': observed.pin.tools['tool:echo'],
      'tool:shout': current.pin.tools['tool:shout'],
    });
    expect(Object.keys(plan.definitions.set)).toEqual(['tool:echo']);
    expect(plan.definitions.remove).toEqual(['tool:gone']);
  });

  it('plans nothing when every drift is high, and refuses lowOnly with tool names', () => {
    const highOnly = pinFromCatalog(
      [plainTool('echo'), { ...plainTool('shout'), description: 'New words.' }, plainTool('gone')],
      TRACE_PROFILE,
    );
    const planned = planPinUpdate(current, highOnly, undefined, { lowOnly: true });
    expect(planned.ok && planned.plan.approved).toEqual([]);
    expect(planPinUpdate(current, observed, ['echo'], { lowOnly: true })).toMatchObject({ ok: false });
  });
});
