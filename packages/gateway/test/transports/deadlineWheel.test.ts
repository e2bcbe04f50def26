import { DeadlineWheel, newDeadline, type Deadline } from '../../src/transports/deadlineWheel.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A deadline that records when it fired: ms after `start`, or the time `clock` reads. */
function recorder(
  start: number,
  clock = (): number => performance.now() - start,
): Deadline & { fired: number[] } {
  const fired: number[] = [];
  return Object.assign(
    newDeadline(() => void fired.push(clock())),
    { fired },
  );
}

describe('DeadlineWheel', () => {
  it('fires an armed deadline once, no sooner than its time', async () => {
    const wheel = new DeadlineWheel(80);
    const start = performance.now();
    const deadline = recorder(start);
    wheel.arm(deadline, 40);
    await sleep(150);
    expect(deadline.fired).toHaveLength(1);
    expect(deadline.fired[0]).toBeGreaterThanOrEqual(40);
  });

  it('never fires a disarmed deadline, and a re-armed one counts from the last arming', async () => {
    // The wheel's clock is the test's: a re-arming's time is exactly the one the test sets, not
    // whenever a timer of its own happened to run (setTimeout may run a fraction early against
    // performance.now()).
    let now = 0;
    const wheel = new DeadlineWheel(80, () => now);
    const disarmed = recorder(0, () => now);
    const rearmed = recorder(0, () => now);
    wheel.arm(disarmed, 30);
    wheel.arm(rearmed, 30);
    wheel.disarm(disarmed);
    now = 20;
    await sleep(20);
    // A chunk arrived: the silence counts again from here.
    wheel.arm(rearmed, 30);
    now = 49;
    await sleep(40);
    expect(rearmed.fired).toEqual([]);
    now = 50;
    await sleep(40);
    expect(disarmed.fired).toEqual([]);
    expect(rearmed.fired).toEqual([50]);
  });

  it('keeps every deadline of a server on one wheel and fires each at its own time', async () => {
    // The wheel's clock is the test's: what has fired at a given time does not depend on how late
    // the machine runs the wheel's ticks.
    let now = 0;
    const wheel = new DeadlineWheel(80, () => now);
    const early = recorder(0, () => now);
    const late = recorder(0, () => now);
    wheel.arm(late, 90);
    wheel.arm(early, 20);
    now = 60;
    await sleep(40);
    expect(early.fired).toEqual([60]);
    expect(late.fired).toEqual([]);
    now = 89;
    await sleep(40);
    expect(late.fired).toEqual([]);
    now = 90;
    await sleep(40);
    expect(late.fired).toEqual([90]);
    expect(early.fired).toEqual([60]);
  });

  it('does not fire a due deadline that another one disarmed in the same tick', async () => {
    let now = 0;
    const wheel = new DeadlineWheel(80, () => now);
    const fired: string[] = [];
    const second = newDeadline(() => void fired.push('second'));
    const first = newDeadline(() => {
      fired.push('first');
      wheel.disarm(second);
    });
    // Newest first: the wheel meets `first` before `second`, both due.
    wheel.arm(second, 10);
    wheel.arm(first, 10);
    now = 20;
    await sleep(40);
    expect(fired).toEqual(['first']);
    expect(second.listed).toBe(false);
  });
});
