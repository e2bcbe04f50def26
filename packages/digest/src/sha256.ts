import { createHash } from 'node:crypto';

/** `sha256:` followed by the lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Digest(text: string): string {
  return 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
