import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** The default tool set every test peer serves unless `tools` is given. */
export function defaultTools(): Tool[] {
  return [
    {
      name: 'echo',
      description: 'Echoes the given text back unchanged.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string', description: 'Text to echo back' } },
        required: ['text'],
      },
    },
    {
      name: 'add',
      description: 'Adds two numbers and returns the sum.',
      inputSchema: {
        type: 'object',
        properties: {
          a: { type: 'number', description: 'First addend' },
          b: { type: 'number', description: 'Second addend' },
        },
        required: ['a', 'b'],
      },
    },
    {
      name: 'slow',
      description:
        'Waits `steps` times `delayMs` milliseconds, sending a progress notification per step when the request carries a progressToken.',
      inputSchema: {
        type: 'object',
        properties: {
          steps: { type: 'number', description: 'Number of progress steps (default 3)' },
          delayMs: { type: 'number', description: 'Delay per step in milliseconds (default 10)' },
        },
      },
    },
  ];
}
