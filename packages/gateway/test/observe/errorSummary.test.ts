import { errorSummary } from '../../src/observe/errorSummary.js';

describe('errorSummary', () => {
  it('cuts an SDK message before the JSON-RPC message it embeds', () => {
    const late = new Error(
      'Received a response for an unknown message ID: {"result":{"content":[{"type":"text","text":"hunter2"}]},"jsonrpc":"2.0","id":4}',
    );
    expect(errorSummary(late)).toBe('Received a response for an unknown message ID: …');
    expect(errorSummary(new Error('progress for [1, 2]'))).toBe('progress for …');
  });

  it('keeps a plain message whole, and bounds a long one', () => {
    expect(errorSummary(new Error('SSE error: Non-200 status code (502)'))).toBe(
      'SSE error: Non-200 status code (502)',
    );
    expect(errorSummary('x'.repeat(1000))).toHaveLength(300);
  });
});
