import { parseServerConfig } from '../../src/config/index.js';
import { findSilentWeakening } from '../../src/config/silentWeakening.js';
import { validPin } from './fixtures.js';

describe('findSilentWeakening: onBadOutput', () => {
  it('refuses a reload that leaves onBadOutput out while block is in force', () => {
    const inForce = parseServerConfig({ ...validPin(), onBadOutput: 'block' }, '/pins/demo.yaml');
    const document = validPin();
    const next = parseServerConfig(document, '/pins/demo.yaml');
    expect(findSilentWeakening(inForce, document, next)).toEqual({
      field: 'onBadOutput',
      inForce: 'block',
      defaulted: 'flag',
    });
  });

  it('applies an explicit onBadOutput: flag, and a config built without the field reads as flag', () => {
    const inForce = parseServerConfig({ ...validPin(), onBadOutput: 'block' }, '/pins/demo.yaml');
    const document = { ...validPin(), onBadOutput: 'flag' };
    expect(
      findSilentWeakening(inForce, document, parseServerConfig(document, '/pins/demo.yaml')),
    ).toBeUndefined();
    const { onBadOutput: _omitted, ...bare } = inForce;
    const plain = parseServerConfig(validPin(), '/pins/demo.yaml');
    expect(findSilentWeakening(bare, validPin(), plain)).toBeUndefined();
  });
});
