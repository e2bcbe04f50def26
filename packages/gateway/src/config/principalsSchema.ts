import { z } from 'zod';

/** A principal's name: what logs, metrics, the review page and `toolpin pin --as` call it. */
export const principalNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'letters, digits, "_", ".", "@" or "-" (at most 64)');

/** One name or glob (picomatch: `*` stops at `/`, `**` crosses it), matched case-sensitively. */
const patternSchema = z.string().min(1).max(256);

/** The items of one surface a principal may see and use: `'*'` (every one) or names and globs. */
const surfaceItemsSchema = z.union([z.literal('*'), z.array(patternSchema)]);

/**
 * The items of one server a principal may see and use: `'*'` (every item of every surface), a list
 * of names and globs (matched against the tools', prompts' and resource templates' names alike; a
 * template is named by its `uriTemplate`), or one list per surface (a surface left out: none).
 */
export const serverItemsSchema = z.union([
  z.literal('*'),
  z.array(patternSchema),
  z.strictObject({
    tools: surfaceItemsSchema.optional(),
    prompts: surfaceItemsSchema.optional(),
    resourceTemplates: surfaceItemsSchema.optional(),
  }),
]);

/** A static API key, sent in the `X-Toolpin-Key` header: its SHA-256 (hex), or the variable that holds it. */
const apiKeySchema = z.union([
  z.strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the SHA-256 of the key, 64 lowercase hex digits'),
  }),
  z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name') }),
]);

/** What a verified token must say (resource-server routes): every member written must match. */
const oauthMatchSchema = z
  .strictObject({
    issuer: z.string().min(1).optional(),
    sub: z.string().min(1).optional(),
    // The client the token was issued to: its `azp`, else its `client_id` claim.
    clientId: z.string().min(1).optional(),
    // Scopes the token must all carry.
    scopes: z.array(z.string().min(1)).min(1).optional(),
  })
  .refine((match) => Object.keys(match).length > 0, 'at least one of issuer, sub, clientId, scopes');

/** One principal of the `principals` block (docs/scopes.md). */
const principalSchema = z
  .strictObject({
    name: principalNameSchema,
    apiKey: apiKeySchema.optional(),
    oauth: oauthMatchSchema.optional(),
    // The stdio front's local user (`toolpin wrap --principals`): true for whoever runs it, or a user name.
    local: z.union([z.literal(true), z.string().min(1)]).optional(),
    // Server names or globs, each with the items the principal may see and use there.
    servers: z.record(patternSchema, serverItemsSchema),
  })
  .refine(
    (principal) =>
      [principal.apiKey, principal.oauth, principal.local].filter((way) => way !== undefined).length === 1,
    { message: 'exactly one of apiKey, oauth, local: how the principal is recognized' },
  );

/**
 * The `principals` block: who a request speaks for, and what each may see and use. Absent: every
 * client sees every pinned item (the behaviour without scopes).
 */
export const principalsSchema = z
  .array(principalSchema)
  .min(1, 'at least one principal')
  .superRefine((principals, context) => {
    const seen = new Set<string>();
    for (const [index, { name }] of principals.entries()) {
      if (seen.has(name))
        context.addIssue({
          code: 'custom',
          message: `a second principal named ${name}`,
          path: [index, 'name'],
        });
      seen.add(name);
    }
  });

/** The `principals` block as parsed. */
export type PrincipalsData = z.output<typeof principalsSchema>;
