import type { RestrictedTool } from '@toolpin/digest';
import type { ExtraMembers } from '../explain/extraMembers.js';
import type { OnDriftSetting } from '../config/types.js';

/** What the policy needs of a server's configuration; hot reload swaps the whole object. */
export interface PinView {
  readonly name: string;
  readonly mode: 'enforce' | 'monitor';
  readonly profile: string;
  readonly onDrift: OnDriftSetting;
  readonly pin: { readonly catalog: string; readonly tools: Readonly<Record<string, string>> };
  readonly definitions: Readonly<Record<string, RestrictedTool>>;
  /** Key -> the members outside the six that the pin records by value (see explain/extraMembers). */
  readonly extraMembers: Readonly<Record<string, ExtraMembers>>;
}
