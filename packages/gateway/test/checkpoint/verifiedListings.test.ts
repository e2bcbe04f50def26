import fc from 'fast-check';
import type { ServerConfig } from '../../src/config/index.js';
import type { PageInspection } from '../../src/policy/inspectToolsPage.js';
import { VerifiedListings, type VerifiedListing } from '../../src/checkpoint/verifiedListings.js';

const config = { name: 'demo' } as unknown as ServerConfig;

/** A remembered listing of this result text (the verification's products are not read here). */
function listing(input: string): VerifiedListing {
  return {
    config,
    input,
    inspection: {} as PageInspection,
    last: true,
    output: input,
    inputBytes: Buffer.from(input),
    outputBytes: Buffer.from(input),
    result: JSON.parse(input) as unknown,
  };
}

describe('VerifiedListings', () => {
  it('says an answer shorter than every listing it remembers cannot carry one, in characters and in bytes', () => {
    const listings = new VerifiedListings();
    expect(listings.mayCarryText(1e9)).toBe(false);
    expect(listings.mayCarryBytes(1e9)).toBe(false);
    const long = listing(JSON.stringify({ tools: [{ name: 'é'.repeat(40) }] }));
    const short = listing(JSON.stringify({ tools: [] }));
    listings.remember(long);
    // 'é' is one character and two bytes.
    expect(listings.mayCarryText(long.input.length - 1)).toBe(false);
    expect(listings.mayCarryText(long.input.length)).toBe(true);
    expect(listings.mayCarryBytes(long.inputBytes.length - 1)).toBe(false);
    expect(listings.mayCarryBytes(long.inputBytes.length)).toBe(true);
    listings.remember(short);
    expect(listings.mayCarryBytes(short.inputBytes.length)).toBe(true);
    expect(listings.findBytes(config, [short.inputBytes], 0, short.inputBytes.length)).toBe(short);
    listings.clear();
    expect(listings.mayCarryBytes(1e9)).toBe(false);
    expect(listings.find(config, short.input)).toBeUndefined();
  });

  // The byte path of a replay (serverCheckpoint.knownListingBytes): a listing arrives in the chunks
  // the network made, inside an envelope. Every cut, anywhere (in the envelope, at either end of the
  // result, inside it, inside a multi-byte character), several at once: found exactly when the
  // bytes between start and end are the remembered ones. The end-to-end test (redteam11) runs a
  // subset of cut positions through a real gateway; this is where every position is run.
  it('finds a remembered listing in bytes cut anywhere into any number of slices, and only those bytes', () => {
    const input = JSON.stringify({ tools: [{ name: 'echo', description: 'Échoe — ü 🙂 tel quel' }] });
    const remembered = listing(input);
    const listings = new VerifiedListings();
    listings.remember(remembered);
    const prefix = Buffer.from('{"result":');
    const suffix = Buffer.from(',"jsonrpc":"2.0","id":"i-1"}');
    const whole = Buffer.concat([prefix, remembered.inputBytes, suffix]);
    const [start, end] = [prefix.length, prefix.length + remembered.inputBytes.length];
    const slicesAt = (bytes: Buffer, cuts: readonly number[]): Buffer[] => {
      const at = [...new Set(cuts)].sort((a, b) => a - b);
      return [...at, bytes.length].map((cut, i) => bytes.subarray(i === 0 ? 0 : at[i - 1], cut));
    };
    const cutsOf = fc.uniqueArray(fc.integer({ min: 1, max: whole.length - 1 }), { maxLength: 6 });
    // Each single cut position, then random sets of cuts.
    for (let cut = 1; cut < whole.length; cut++)
      expect(listings.findBytes(config, slicesAt(whole, [cut]), start, end)).toBe(remembered);
    fc.assert(
      fc.property(cutsOf, fc.integer({ min: start, max: end - 1 }), (cuts, flip) => {
        expect(listings.findBytes(config, slicesAt(whole, cuts), start, end)).toBe(remembered);
        // One byte of the result changed: never found, wherever the cuts are.
        const changed = Buffer.from(whole);
        changed[flip] = (changed[flip] as number) ^ 0x20;
        expect(listings.findBytes(config, slicesAt(changed, cuts), start, end)).toBeUndefined();
      }),
    );
  });
});
