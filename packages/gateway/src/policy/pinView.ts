import type { RestrictedTool } from '@toolpin/digest';
import type { ExtraMembers } from '../explain/extraMembers.js';
import type { OnDriftSetting } from '../config/types.js';

/** What the policy needs of a server's configuration; hot reload swaps the whole object. */
export interface PinView {
  readonly name: string;
  /** The pin file, named in refusals as the file to review (`toolpin approve <file>`). */
  readonly file?: string;
  readonly mode: 'enforce' | 'monitor';
  readonly profile: string;
  readonly onDrift: OnDriftSetting;
  readonly pin: { readonly catalog: string; readonly tools: Readonly<Record<string, string>> };
  readonly definitions: Readonly<Record<string, RestrictedTool>>;
  /** Key -> the members outside the six that the pin records by value (see explain/extraMembers). */
  readonly extraMembers: Readonly<Record<string, ExtraMembers>>;
  /** Key -> false for a tool whose calls and results are not checked against its pinned schemas. */
  readonly validate?: Readonly<Record<string, boolean>>;
  /** A result that does not fit the pinned `outputSchema`: reported (`flag`) or replaced by an error. @default 'flag' */
  readonly onBadOutput?: 'flag' | 'block';
}
