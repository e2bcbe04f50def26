import { SessionCatalog } from '../../src/state/sessionCatalog.js';
import { SessionStore } from '../../src/state/sessionStore.js';

function completedAt(at: number): SessionCatalog {
  const catalog = new SessionCatalog();
  catalog.completedAt = at;
  return catalog;
}

describe('SessionStore.needsRevalidation (replicas without sticky sessions)', () => {
  it('never asks for a new listing when no revalidation age is set (one replica, or sticky sessions)', () => {
    expect(new SessionStore().needsRevalidation(completedAt(0), 1e12)).toBe(false);
  });

  it('asks for a new listing before every call with revalidateMs 0', () => {
    const store = new SessionStore({ revalidateMs: 0 });
    expect(store.needsRevalidation(completedAt(5000), 5000)).toBe(true);
  });

  it('asks once the observation is older than revalidateMs', () => {
    const store = new SessionStore({ revalidateMs: 1000 });
    expect(store.needsRevalidation(completedAt(5000), 5999)).toBe(false);
    expect(store.needsRevalidation(completedAt(5000), 6000)).toBe(true);
    // A listing never completed (a page seen, or nothing) is as old as can be.
    expect(store.needsRevalidation(new SessionCatalog(), 6000)).toBe(true);
  });
});
