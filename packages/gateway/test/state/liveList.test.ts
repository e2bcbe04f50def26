import { LiveList, type ListMember } from '../../src/state/liveList.js';

interface Item extends ListMember<Item> {
  readonly name: string;
}

const item = (name: string): Item => ({ listPrev: null, listNext: null, listed: false, name });
const names = (list: LiveList<Item>): string[] => list.toArray().map((member) => member.name);

describe('LiveList', () => {
  it('holds each member once, newest first, and removes any of them', () => {
    const list = new LiveList<Item>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    list.add(a);
    list.add(b);
    list.add(c);
    list.add(b);
    expect(names(list)).toEqual(['c', 'b', 'a']);
    expect(list.size).toBe(3);
    list.remove(b);
    expect(names(list)).toEqual(['c', 'a']);
    list.remove(c);
    expect(names(list)).toEqual(['a']);
    list.remove(a);
    expect(names(list)).toEqual([]);
    expect(list.size).toBe(0);
    list.add(b);
    expect(names(list)).toEqual(['b']);
  });

  it('leaves a removed member no link, and a second removal changes nothing', () => {
    const list = new LiveList<Item>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    for (const member of [a, b, c]) list.add(member);
    list.remove(b);
    // Nothing removed points at anything: a dead member cannot keep a live one (or its graph) reachable.
    expect(b).toMatchObject({ listPrev: null, listNext: null, listed: false });
    expect(c.listNext).toBe(a);
    expect(a.listPrev).toBe(c);
    list.remove(b);
    expect(list.size).toBe(2);
    expect(names(list)).toEqual(['c', 'a']);
  });

  it('gives the members a predicate keeps, to act on while the list changes', () => {
    const list = new LiveList<Item>();
    const members = ['a', 'b', 'c', 'd'].map(item);
    for (const member of members) list.add(member);
    const picked = list.filter((member) => member.name !== 'c');
    for (const member of picked) list.remove(member);
    expect(picked.map((member) => member.name)).toEqual(['d', 'b', 'a']);
    expect(names(list)).toEqual(['c']);
  });
});
