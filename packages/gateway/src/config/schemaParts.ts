import { z } from 'zod';

// The small pieces the config schemas share (pin files, auth blocks, alerts), each written once.

/** A POSIX environment variable name. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True for an absolute http:// or https:// URL with a host. */
export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** An absolute http:// or https:// URL. */
export const httpUrlSchema = z.string().refine(isHttpUrl, 'an absolute http:// or https:// URL');
