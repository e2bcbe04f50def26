import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { isMap, parseDocument } from 'yaml';
import { GatewayError } from '../errors.js';
import { isObject } from '../wire/isObject.js';
import { parsePinFile } from './pinFile.js';
import type { ServerConfig } from './types.js';
import { writeFileAtomic } from './writeFileAtomic.js';

function updateYaml(text: string, issuer: string): string {
  const doc = parseDocument(text);
  const auth = doc.get('auth');
  // A pin without an auth block gets `auth: { mode: client, issuer }`; an existing block keeps its comments.
  if (!isMap(auth)) doc.set('auth', doc.createNode({ mode: 'client', issuer }));
  else auth.set('issuer', issuer);
  return doc.toString({ lineWidth: 0 });
}

function updateJson(text: string, issuer: string): string {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const auth = isObject(parsed.auth) ? { ...parsed.auth, issuer } : { mode: 'client', issuer };
  return `${JSON.stringify({ ...parsed, auth }, null, 2)}\n`;
}

/**
 * Records the authorization server of a client-mode server in its pin file (`auth.issuer`, and
 * `auth.mode: client` when the file has no auth block), the rest of the file as it was (YAML
 * comments kept). Only when the file still holds `expected`; the result is parsed as the gateway
 * would load it before it is written. Rejects with GW_PIN_FILE_CHANGED or GW_PIN_FILE_INVALID.
 */
export async function recordAuthIssuer(
  file: string,
  issuer: string,
  expected: string,
): Promise<ServerConfig> {
  const text = await readFile(file, 'utf8');
  if (text !== expected)
    throw new GatewayError(
      'GW_PIN_FILE_CHANGED',
      `Pin file ${file} changed since it was read; nothing was written`,
      {
        file,
      },
    );
  const next = extname(file).toLowerCase() === '.json' ? updateJson(text, issuer) : updateYaml(text, issuer);
  const server = parsePinFile(next, file);
  if (server.auth?.mode !== 'client' || server.auth.issuer !== issuer)
    throw new GatewayError('GW_PIN_FILE_INVALID', `Rewriting ${file} did not record auth.issuer ${issuer}`, {
      file,
      field: 'auth.issuer',
    });
  await writeFileAtomic(file, next);
  return server;
}
