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
});
