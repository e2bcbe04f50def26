import { parseServerConfig } from '../../src/config/index.js';
import { findSilentWeakening } from '../../src/config/silentWeakening.js';
import { validPin } from './fixtures.js';

function configWith(onDrift: unknown): ReturnType<typeof parseServerConfig> {
  const pin = validPin() as Record<string, unknown>;
  return parseServerConfig(onDrift === undefined ? pin : { ...pin, onDrift }, '/pins/demo.yaml');
}

describe('findSilentWeakening: onDrift per severity', () => {
  it('refuses a reload that leaves onDrift out while either severity in force is stronger than filter', () => {
    const defaulted = configWith(undefined);
    const document = validPin();
    expect(
      findSilentWeakening(configWith({ high: 'block-server', low: 'flag' }), document, defaulted),
    ).toEqual({
      field: 'onDrift',
      inForce: '{ high: block-server, low: flag }',
      defaulted: 'filter',
    });
    expect(findSilentWeakening(configWith('block-server'), document, defaulted)?.field).toBe('onDrift');
  });

  it('lets the default (filter) replace a weaker policy in force: flagging low drift is weaker', () => {
    const inForce = configWith({ high: 'filter', low: 'flag' });
    expect(findSilentWeakening(inForce, validPin(), configWith(undefined))).toBeUndefined();
  });
});

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

describe('findSilentWeakening: auth', () => {
  const auth = {
    mode: 'resource-server',
    resource: 'https://gateway.example/demo/mcp',
    issuer: 'https://idp.example',
    upstreamCredential: { kind: 'forward' },
  };

  it('refuses a reload that leaves auth out while the route is a resource server', () => {
    const inForce = parseServerConfig({ ...validPin(), auth }, '/pins/demo.yaml');
    const document = validPin();
    const next = parseServerConfig(document, '/pins/demo.yaml');
    expect(findSilentWeakening(inForce, document, next)).toEqual({
      field: 'auth',
      inForce: 'resource-server',
      defaulted: 'transparent',
    });
  });

  it('applies an explicit auth: {mode: transparent}, and a route that was transparent', () => {
    const inForce = parseServerConfig({ ...validPin(), auth }, '/pins/demo.yaml');
    const document = { ...validPin(), auth: { mode: 'transparent' } };
    expect(
      findSilentWeakening(inForce, document, parseServerConfig(document, '/pins/demo.yaml')),
    ).toBeUndefined();
    const plain = parseServerConfig(validPin(), '/pins/demo.yaml');
    expect(findSilentWeakening(plain, validPin(), plain)).toBeUndefined();
  });
});
