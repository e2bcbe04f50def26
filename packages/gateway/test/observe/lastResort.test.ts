import { logUnhandledRejections } from '../../src/observe/lastResort.js';
import { createLogger } from '../../src/observe/logger.js';

describe('logUnhandledRejections', () => {
  it('logs a rejection nobody handled, with its summary, and keeps the process', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const before = new Set(process.listeners('unhandledRejection'));
    logUnhandledRejections(logger);
    const added = process.listeners('unhandledRejection').filter((listener) => !before.has(listener));
    expect(added).toHaveLength(1);
    try {
      // Emitted as node would for a rejection without a handler.
      process.emit('unhandledRejection', new Error('lost at http://u:s3cret@127.0.0.1/x'), Promise.resolve());
      expect(lines).toEqual([
        expect.objectContaining({
          event: 'process.unhandled_rejection',
          level: 50,
          err: expect.stringContaining('lost at') as unknown,
        }),
      ]);
      expect(JSON.stringify(lines)).not.toContain('s3cret');
    } finally {
      for (const listener of added) process.off('unhandledRejection', listener);
    }
  });
});
