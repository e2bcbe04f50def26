import {
  BridgeSessions,
  ClientQuota,
  credentialOf,
  isRefusal,
  type EndableSession,
  type SessionRefusal,
  type SessionSlot,
} from '../../src/ingress/bridgeSessions.js';
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
const HOME = 'address:127.0.0.1';

/** The slot reserve() gave, failing the test when it refused. */
function slotOf(reserved: SessionSlot<string> | SessionRefusal): SessionSlot<string> {
  if (isRefusal(reserved)) throw new Error(`refused: ${reserved.refused}`);
  return reserved;
}

function entry(session: RecordedSession): { carrier: RecordedSession; handler: string; credential: string } {
  return { carrier: session, handler: 'handler', credential: credentialOf(headers) };
}

describe('BridgeSessions', () => {
  const options = { max: 2, idleMs: 60_000 };

  it('counts sessions being opened against the bound, and gives their room back when they fail', () => {
    const sessions = new BridgeSessions<string>(options);
    slotOf(sessions.reserve('a', HOME));
    const second = slotOf(sessions.reserve('b', HOME));
    expect(sessions.reserve('c', HOME)).toEqual({ refused: 'too_many_sessions' });
    second.release();
    expect(isRefusal(sessions.reserve('c', HOME))).toBe(false);
  });

  it('registers a filled slot once, finds it by id and credential, and forgets it when it ends', async () => {
    const sessions = new BridgeSessions<string>(options);
    const session = new RecordedSession();
    const slot = slotOf(sessions.reserve(ALICE, HOME));
    expect(slot.fill('a', entry(session))).toBe(true);
    expect(slot.fill('a', entry(session))).toBe(false);
    expect(sessions.get('a', headers)?.carrier).toBe(session);
    expect(sessions.get('a', { authorization: 'Bearer mallory' })).toBeUndefined();
    await session.close();
    expect(sessions.get('a', headers)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('closes a session whose opening outlived closeAll instead of keeping it', async () => {
    const sessions = new BridgeSessions<string>(options);
    const live = new RecordedSession();
    slotOf(sessions.reserve(ALICE, HOME)).fill('live', entry(live));
    const opening = slotOf(sessions.reserve(ALICE, HOME));
    await sessions.closeAll();
    expect(live.closed).toBe(1);
    const late = new RecordedSession();
    expect(opening.fill('late', entry(late))).toBe(false);
    expect(late.closed).toBe(1);
    expect(sessions.size).toBe(0);
    expect(sessions.reserve(ALICE, HOME)).toEqual({ refused: 'closing' });
  });

  it("bounds each client's sessions across fronts sharing a quota, and gives a session back when it ends or fails to open", async () => {
    const quota = new ClientQuota(2);
    const streams = new BridgeSessions<string>({ max: 10, idleMs: 60_000, quota });
    const legacy = new BridgeSessions<string>({ max: 10, idleMs: 60_000, quota });
    const first = new RecordedSession();
    slotOf(streams.reserve(ALICE, HOME)).fill('one', entry(first));
    const failing = slotOf(legacy.reserve(ALICE, HOME));
    expect(streams.reserve(ALICE, HOME)).toEqual({ refused: 'client_quota' });
    expect(legacy.reserve(ALICE, HOME)).toEqual({ refused: 'client_quota' });
    // Another client is not touched by alice's quota.
    expect(isRefusal(streams.reserve('address:127.0.0.2', 'address:127.0.0.2'))).toBe(false);
    failing.release();
    failing.release();
    expect(quota.held(ALICE)).toBe(1);
    await first.close();
    expect(quota.held(ALICE)).toBe(0);
    slotOf(legacy.reserve(ALICE, HOME)).fill('two', entry(new RecordedSession()));
    slotOf(streams.reserve(ALICE, HOME)).fill('three', entry(new RecordedSession()));
    expect(streams.reserve(ALICE, HOME)).toEqual({ refused: 'client_quota' });
    await Promise.all([streams.closeAll(), legacy.closeAll()]);
    expect(quota.held(ALICE)).toBe(0);
  });

  it('bounds the sessions of one address whatever credentials it sends, and gives its room back', async () => {
    const quota = new ClientQuota(2);
    const addressQuota = new ClientQuota(3);
    const streams = new BridgeSessions<string>({ max: 10, idleMs: 60_000, quota, addressQuota });
    const legacy = new BridgeSessions<string>({ max: 10, idleMs: 60_000, quota, addressQuota });
    const first = new RecordedSession();
    slotOf(streams.reserve(credentialOf({ authorization: 'Bearer one' }), HOME)).fill('one', entry(first));
    slotOf(legacy.reserve(credentialOf({ authorization: 'Bearer two' }), HOME));
    slotOf(streams.reserve(credentialOf({ authorization: 'Bearer three' }), HOME));
    // A fourth credential from the same address: its own quota is untouched, the address's is used up.
    const fourth = credentialOf({ authorization: 'Bearer four' });
    expect(streams.reserve(fourth, HOME)).toEqual({ refused: 'address_quota' });
    expect(legacy.reserve(fourth, HOME)).toEqual({ refused: 'address_quota' });
    // The refusal took nothing of the client's quota.
    expect(quota.held(fourth)).toBe(0);
    // Another address is not touched.
    expect(isRefusal(streams.reserve(fourth, 'address:127.0.0.2'))).toBe(false);
    await first.close();
    expect(addressQuota.held(HOME)).toBe(2);
    expect(isRefusal(streams.reserve(fourth, HOME))).toBe(false);
  });

  it('tells a refused client to retry after the idle time, within 1 to 60 seconds', () => {
    expect(new BridgeSessions<string>({ max: 1, idleMs: 300_000 }).retryAfterSeconds).toBe(60);
    expect(new BridgeSessions<string>({ max: 1, idleMs: 1500 }).retryAfterSeconds).toBe(2);
    expect(new BridgeSessions<string>({ max: 1, idleMs: 10 }).retryAfterSeconds).toBe(1);
  });
});
