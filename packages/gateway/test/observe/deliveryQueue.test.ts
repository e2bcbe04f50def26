import { DeliveryQueue } from '../../src/observe/deliveryQueue.js';

describe('DeliveryQueue', () => {
  it('takes high items first, each priority in order', () => {
    const queue = new DeliveryQueue<string>(10);
    for (const [item, priority] of [
      ['call-1', 'low'],
      ['drift-1', 'high'],
      ['call-2', 'low'],
      ['drift-2', 'high'],
    ] as const)
      expect(queue.push(item, priority)).toEqual({ queued: true });
    const order: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) order.push(queue.shift());
    expect(order).toEqual(['drift-1', 'drift-2', 'call-1', 'call-2', undefined]);
  });

  it('when full, lets a high item evict the newest low one, and refuses a low one', () => {
    const queue = new DeliveryQueue<string>(3);
    queue.push('call-1', 'low');
    queue.push('call-2', 'low');
    queue.push('drift-1', 'high');
    expect(queue.push('call-3', 'low')).toEqual({ queued: false });
    expect(queue.push('drift-2', 'high')).toEqual({ queued: true, evicted: 'call-2' });
    expect(queue.push('drift-3', 'high')).toEqual({ queued: true, evicted: 'call-1' });
    // Full of high items: a high item is refused rather than evicting one as important.
    expect(queue.push('drift-4', 'high')).toEqual({ queued: false });
    expect(queue.length).toBe(3);
    expect(queue.clear()).toEqual(['drift-1', 'drift-2', 'drift-3']);
    expect(queue.length).toBe(0);
  });
});
