import {
  BridgeSessions,
  ClientQuota,
  credentialOf,
  isRefusal,
  type EndableSession,
  type SessionSlot,
} from '../../src/front/bridgeSessions.js';
import type { BridgeEnd } from '../../src/transports/messageBridge.js';

/** A session that records being closed and reports its end like a bridge does. */
class RecordedSession implements EndableSession {
  onclose?: ((endedBy: BridgeEnd) => void) | undefined;
  closed = 0;

  close(): Promise<void> {
    this.closed += 1;
    this.onclose?.('gateway');
    return Promise.resolve();
  }
}

const headers = { authorization: 'Bearer alice' };
const ALICE = credentialOf(headers);

/** The slot reserve() gave, failing the test when it refused. */
function slotOf(reserved: SessionSlot<string> | { refused: string }): SessionSlot<string> {
  if (isRefusal(reserved)) throw new Error(`refused: ${reserved.refused}`);
  return reserved;
}

function entry(session: RecordedSession): { bridge: RecordedSession; front: string; credential: string } {
  return { bridge: session, front: 'front', credential: credentialOf(headers) };
}

describe('BridgeSessions', () => {
  const options = { max: 2, idleMs: 60_000 };

  it('counts sessions being opened against the bound, and gives their room back when they fail', () => {
    const sessions = new BridgeSessions<string>(options);
    slotOf(sessions.reserve('a'));
    const second = slotOf(sessions.reserve('b'));
    expect(sessions.reserve('c')).toEqual({ refused: 'too_many_sessions' });
    second.release();
    expect(isRefusal(sessions.reserve('c'))).toBe(false);
  });

  it('registers a filled slot once, finds it by id and credential, and forgets it when it ends', async () => {
    const sessions = new BridgeSessions<string>(options);
    const session = new RecordedSession();
    const slot = slotOf(sessions.reserve(ALICE));
    expect(slot.fill('a', entry(session))).toBe(true);
    expect(slot.fill('a', entry(session))).toBe(false);
    expect(sessions.get('a', headers)?.bridge).toBe(session);
    expect(sessions.get('a', { authorization: 'Bearer mallory' })).toBeUndefined();
    await session.close();
    expect(sessions.get('a', headers)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('closes a session whose opening outlived closeAll instead of keeping it', async () => {
    const sessions = new BridgeSessions<string>(options);
    const live = new RecordedSession();
    slotOf(sessions.reserve(ALICE)).fill('live', entry(live));
    const opening = slotOf(sessions.reserve(ALICE));
    await sessions.closeAll();
    expect(live.closed).toBe(1);
    const late = new RecordedSession();
    expect(opening.fill('late', entry(late))).toBe(false);
    expect(late.closed).toBe(1);
    expect(sessions.size).toBe(0);
    expect(sessions.reserve(ALICE)).toEqual({ refused: 'closing' });
  });

  it("bounds each client's sessions across fronts sharing a quota, and gives a session back when it ends or fails to open", async () => {
    const quota = new ClientQuota(2);
    const streams = new BridgeSessions<string>({ max: 10, idleMs: 60_000, quota });
    const legacy = new BridgeSessions<string>({ max: 10, idleMs: 60_000, quota });
    const first = new RecordedSession();
    slotOf(streams.reserve(ALICE)).fill('one', entry(first));
    const failing = slotOf(legacy.reserve(ALICE));
    expect(streams.reserve(ALICE)).toEqual({ refused: 'client_quota' });
    expect(legacy.reserve(ALICE)).toEqual({ refused: 'client_quota' });
    // Another client is not touched by alice's quota.
    expect(isRefusal(streams.reserve('address:127.0.0.2'))).toBe(false);
    failing.release();
    failing.release();
    expect(quota.held(ALICE)).toBe(1);
    await first.close();
    expect(quota.held(ALICE)).toBe(0);
    slotOf(legacy.reserve(ALICE)).fill('two', entry(new RecordedSession()));
    slotOf(streams.reserve(ALICE)).fill('three', entry(new RecordedSession()));
    expect(streams.reserve(ALICE)).toEqual({ refused: 'client_quota' });
    await Promise.all([streams.closeAll(), legacy.closeAll()]);
    expect(quota.held(ALICE)).toBe(0);
  });

  it('tells a refused client to retry after the idle time, within 1 to 60 seconds', () => {
    expect(new BridgeSessions<string>({ max: 1, idleMs: 300_000 }).retryAfterSeconds).toBe(60);
    expect(new BridgeSessions<string>({ max: 1, idleMs: 1500 }).retryAfterSeconds).toBe(2);
    expect(new BridgeSessions<string>({ max: 1, idleMs: 10 }).retryAfterSeconds).toBe(1);
  });
});
