import fc from 'fast-check';

/** A tool definition with the six hashed members, some absent, plus _meta. */
export const toolArbitrary = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 12 }),
    title: fc.string(),
    description: fc.string(),
    inputSchema: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })),
    outputSchema: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })),
    annotations: fc.record({ readOnlyHint: fc.boolean() }, { requiredKeys: [] }),
    _meta: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: ['name'] },
);

/** A catalog of tools with distinct names. */
export const catalogArbitrary = fc.uniqueArray(toolArbitrary, {
  minLength: 1,
  maxLength: 8,
  selector: (tool) => tool.name,
});
