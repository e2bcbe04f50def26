import { createLogger } from '../../src/observe/logger.js';
import { UnpinnedMembersNotice } from '../../src/observe/unpinnedMembersNotice.js';
import { pinnedConfig, plainTool } from '../policy/pinnedTools.js';

function capture(): { lines: Record<string, unknown>[]; notice: UnpinnedMembersNotice } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { lines, notice: new UnpinnedMembersNotice(logger) };
}

const ECHO = { key: 'tool:echo', tool: 'echo', members: ['_meta', 'icons'] };
const ADD = { key: 'tool:add', tool: 'add', members: ['x-foo'] };

describe('UnpinnedMembersNotice', () => {
  it('logs the stripped members once per tool under one pin, and again under a reloaded pin', () => {
    const { lines, notice } = capture();
    const pin = pinnedConfig([plainTool('echo'), plainTool('add')], { extraMembers: false });
    notice.note(pin, [ECHO]);
    notice.note(pin, [ECHO]);
    notice.note(pin, []);
    notice.note(pin, [ECHO, ADD]);
    expect(lines.map((line) => [line.event, line.level, line.tools])).toEqual([
      ['pin.unrecorded_members', 40, [ECHO]],
      ['pin.unrecorded_members', 40, [ADD]],
    ]);
    expect(lines[0]).toMatchObject({ server: 'srv', file: '/pins/srv.yaml', action: 'stripped', count: 1 });
    expect(lines[0]?.msg).toContain('toolpin approve /pins/srv.yaml');
    notice.note(pinnedConfig([plainTool('echo'), plainTool('add')]), [ECHO]);
    expect(lines).toHaveLength(3);
  });

  it('says the members are passed in monitor mode', () => {
    const { lines, notice } = capture();
    notice.note(pinnedConfig([plainTool('echo')], { mode: 'monitor' }), [ECHO]);
    expect(lines[0]).toMatchObject({ event: 'pin.unrecorded_members', mode: 'monitor', action: 'passed' });
    expect(lines[0]?.msg).toMatch(/^monitor mode passes/);
  });
});
