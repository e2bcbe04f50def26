import vm from 'node:vm';
import {
  fullCollection,
  IdleHeapRelease,
  type HeapRelease,
  type IdleHeapReleaseOptions,
  type ProcessSample,
} from '../../src/observe/idleHeapRelease.js';

const MB = 2 ** 20;

/**
 * A process whose event loop and heap the test moves by hand: `work(ms)` is busy time before the
 * next check; a collection halves what is above the `live` heap and takes 80 ms of the event
 * loop, which the release reads as its own pause.
 */
function fakeProcess(
  heapMb: number,
  liveMb: number,
  firstReturnsNothing = false,
  options: IdleHeapReleaseOptions = {},
) {
  const state = { activeMs: 0, heapBytes: heapMb * MB, collections: 0 };
  const releases: HeapRelease[] = [];
  const release = new IdleHeapRelease({
    sample: (): ProcessSample => ({ activeMs: state.activeMs, heapBytes: state.heapBytes }),
    collect: () => {
      state.collections++;
      state.activeMs += 80;
      if (firstReturnsNothing && state.collections === 1) return;
      state.heapBytes = liveMb * MB + Math.floor((state.heapBytes - liveMb * MB) / 2);
    },
    onRelease: (done) => releases.push(done),
    ...options,
  });
  return {
    state,
    releases,
    release,
    grow: (mb: number) => void (state.heapBytes += mb * MB),
    checks: (count: number, busyMs = 0) => {
      for (let i = 0; i < count; i++) {
        state.activeMs += busyMs;
        release.check();
      }
    },
  };
}

describe('IdleHeapRelease', () => {
  it('collects once the gateway has been quiet for three checks after a burst grew the heap', () => {
    const gateway = fakeProcess(70, 40);
    gateway.grow(100);
    gateway.checks(5, 500);
    expect(gateway.state.collections).toBe(0);
    gateway.checks(2);
    expect(gateway.state.collections).toBe(0);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(1);
  });

  it('never collects a heap that did not grow by 16 MiB, however long the gateway is idle', () => {
    const gateway = fakeProcess(70, 40);
    gateway.grow(15);
    gateway.checks(100);
    expect(gateway.state.collections).toBe(0);
    expect(gateway.releases).toEqual([]);
  });

  it('collects again at the next quiet checks while each collection returns a tenth of the heap, at most three times, then reports once', () => {
    const gateway = fakeProcess(70, 40);
    gateway.grow(100);
    gateway.checks(3);
    expect(gateway.state.collections).toBe(1);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(2);
    expect(gateway.releases).toEqual([]);
    gateway.checks(10);
    expect(gateway.state.collections).toBe(3);
    expect(gateway.releases).toHaveLength(1);
    expect(gateway.releases[0]).toMatchObject({
      heapBefore: 170 * MB,
      heapAfter: gateway.state.heapBytes,
      collections: 3,
    });
  });

  it('always collects twice: the first collection may return nothing, the second moves live objects out of mixed pages', () => {
    const gateway = fakeProcess(70, 40, true);
    gateway.grow(100);
    gateway.checks(3);
    expect(gateway.state.heapBytes).toBe(170 * MB);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(2);
    expect(gateway.state.heapBytes).toBe(105 * MB);
  });

  it('reports the heap read at the quiet check after the last collection (V8 returns swept pages later)', () => {
    const gateway = fakeProcess(70, 40);
    gateway.grow(100);
    gateway.checks(5);
    gateway.state.heapBytes -= 10 * MB;
    gateway.checks(1);
    expect(gateway.releases).toEqual([expect.objectContaining({ heapAfter: 46.25 * MB, collections: 3 })]);
  });

  it('stops collecting after the second when a collection returned less than a tenth of the heap', () => {
    const gateway = fakeProcess(70, 69);
    gateway.grow(33);
    gateway.checks(10);
    // 103 -> 86 MB (16.5 % returned), then 86 -> 77.5 (9.9 %): no third one.
    expect(gateway.state.collections).toBe(2);
    expect(gateway.releases).toEqual([expect.objectContaining({ collections: 2 })]);
  });

  it('does not count its own collections as the gateway being busy', () => {
    const gateway = fakeProcess(70, 40);
    gateway.grow(100);
    gateway.checks(3);
    expect(gateway.state.activeMs).toBe(80);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(2);
  });

  it('ends a release when traffic comes back, and waits for the next quiet spell and the next growth', () => {
    const gateway = fakeProcess(70, 40, false, { minIntervalMs: 0 });
    gateway.grow(100);
    gateway.checks(3);
    gateway.checks(1, 41);
    expect(gateway.state.collections).toBe(1);
    expect(gateway.releases).toEqual([expect.objectContaining({ collections: 1 })]);
    gateway.checks(20);
    expect(gateway.state.collections).toBe(1);
    gateway.grow(40);
    gateway.checks(1, 500);
    gateway.checks(2);
    expect(gateway.state.collections).toBe(1);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(2);
  });

  it('starts the next release a minute after the last one at the earliest, however often bursts come', () => {
    const gateway = fakeProcess(70, 40);
    gateway.grow(100);
    gateway.checks(3);
    expect(gateway.state.collections).toBe(1);
    gateway.checks(1, 500);
    // Bursts every 8 s for the rest of the minute: quiet spells of 3 checks, the heap grown each time.
    for (let check = 4; check < 28; check += 4) {
      gateway.grow(40);
      gateway.checks(1, 500);
      gateway.checks(3);
    }
    expect(gateway.state.collections).toBe(1);
    gateway.grow(40);
    gateway.checks(1, 500);
    gateway.checks(3);
    // 29 checks of 2 s since the release started: 58 s.
    expect(gateway.state.collections).toBe(1);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(2);
  });

  it('measures growth from the smallest heap seen while idle, not from start-up', () => {
    const gateway = fakeProcess(120, 40);
    gateway.state.heapBytes = 60 * MB;
    gateway.checks(3);
    // 93 MB: 33 above the idle low of 60, though below the 120 of start-up.
    gateway.grow(33);
    gateway.checks(1);
    expect(gateway.state.collections).toBe(1);
  });
});

describe('fullCollection', () => {
  it('runs a full collection: an object only a WeakRef points to is gone after it', async () => {
    const collect = fullCollection();
    const weak = new WeakRef({ payload: new Array(1000).fill('x') });
    // A WeakRef keeps its target alive until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(weak.deref()).toBeUndefined();
  });

  it('sets --expose-gc for its own context only: a context made after it has no gc', () => {
    fullCollection();
    expect(vm.runInNewContext('typeof gc')).toBe('undefined');
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
