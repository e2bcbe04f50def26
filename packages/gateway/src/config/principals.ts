import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { invalidField, fromZodError } from './configError.js';
import { deepFreeze } from './deepFreeze.js';
import { principalsSchema, type PrincipalsData } from './principalsSchema.js';
import { readDocumentFile } from './readDocument.js';
import type { PrincipalConfig, ScopeItems, ServerScopeConfig } from './types.js';

type ServerItems = PrincipalsData[number]['servers'][string];

/** A server's items per surface: a list or `'*'` stands for every surface; a surface left out of the object form is none. */
function serverScopeOf(items: ServerItems): ServerScopeConfig {
  if (items === '*' || Array.isArray(items))
    return { tools: items, prompts: items, resourceTemplates: items };
  const none: ScopeItems = [];
  return {
    tools: items.tools ?? none,
    prompts: items.prompts ?? none,
    resourceTemplates: items.resourceTemplates ?? none,
  };
}

/**
 * The `principals` block as the gateway holds it: each API key as its SHA-256 only (a key named by
 * `env` is read now and hashed; a variable that is not set is refused, naming the field), each
 * server's items per surface. Throws GatewayError GW_CONFIG_INVALID.
 */
export function principalsOf(
  block: PrincipalsData,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): readonly PrincipalConfig[] {
  return block.map((principal, index): PrincipalConfig => {
    const servers = Object.fromEntries(
      Object.entries(principal.servers).map(([server, items]) => [server, serverScopeOf(items)]),
    );
    const { name, apiKey, oauth, local } = principal;
    let apiKeySha256: string | undefined;
    if (apiKey !== undefined && 'sha256' in apiKey) apiKeySha256 = apiKey.sha256;
    else if (apiKey !== undefined) {
      const key = env[apiKey.env];
      if (key === undefined || key === '')
        throw invalidField(
          'GW_CONFIG_INVALID',
          file,
          `principals[${index}].apiKey.env`,
          `${apiKey.env} set`,
          {
            note: '(the variable is not set)',
          },
        );
      apiKeySha256 = createHash('sha256').update(key).digest('hex');
    }
    return {
      name,
      servers,
      ...(apiKeySha256 === undefined ? {} : { apiKeySha256 }),
      ...(oauth === undefined ? {} : { oauth: writtenMembers(oauth) }),
      ...(local === undefined ? {} : { local }),
    };
  });
}

/**
 * Reads the gateway file again for its `principals` block alone (a reload: scopes apply to the
 * next request); undefined when it has none. Throws GatewayError GW_CONFIG_INVALID.
 */
export async function loadPrincipals(file: string): Promise<readonly PrincipalConfig[] | undefined> {
  const path = resolve(file);
  const document = await readDocumentFile(path, 'GW_CONFIG_INVALID');
  const block = (document as { principals?: unknown } | null)?.principals;
  if (block === undefined) return undefined;
  const parsed = principalsSchema.safeParse(block);
  if (!parsed.success) throw fromZodError('GW_CONFIG_INVALID', path, prefixed(parsed.error), document);
  return deepFreeze(principalsOf(parsed.data, path));
}

/** The issues of the block, with their paths under `principals`. */
function prefixed<E extends { issues: { path: PropertyKey[] }[] }>(error: E): E {
  for (const issue of error.issues) issue.path = ['principals', ...issue.path];
  return error;
}

/** The members written (zod's output types an absent optional member as `undefined`). */
function writtenMembers(
  match: Record<string, string | string[] | undefined>,
): NonNullable<PrincipalConfig['oauth']> {
  return Object.fromEntries(Object.entries(match).filter(([, value]) => value !== undefined));
}
