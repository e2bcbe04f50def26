import type { RestrictedTool } from '@toolpin/digest';
import type { ExtraMembers } from '../explain/extraMembers.js';
import type { OnDriftSetting, ValidateConfig } from '../config/types.js';

/** The pin of one listed surface besides tools: its catalog digest and its items by key. */
export interface SurfacePin {
  readonly catalog: string;
  readonly items: Readonly<Record<string, string>>;
}

/** What the policy needs of a server's configuration; hot reload swaps the whole object. */
export interface PinView {
  readonly name: string;
  /** The pin file, named in refusals as the file to review (`toolpin approve <file>`). */
  readonly file?: string;
  readonly mode: 'enforce' | 'monitor';
  readonly profile: string;
  readonly onDrift: OnDriftSetting;
  readonly pin: {
    readonly catalog: string;
    readonly tools: Readonly<Record<string, string>>;
    /** Absent: prompts are not pinned (not enforced). */
    readonly prompts?: SurfacePin;
    /** Absent: resource templates are not pinned (not enforced). */
    readonly resourceTemplates?: SurfacePin;
    /** The digest of the server's instructions (of their absence too); absent: not pinned. */
    readonly instructions?: string;
  };
  readonly definitions: Readonly<Record<string, RestrictedTool>>;
  /** `prompt:` key -> the pinned prompt's hashed members (explains drift). */
  readonly promptDefinitions?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** `template:` key -> the pinned resource template's hashed members (explains drift). */
  readonly templateDefinitions?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** The pinned instructions text, when the pin holds it (explains their drift). */
  readonly instructions?: string;
  /** Key -> the members outside the six that the pin records by value (see explain/extraMembers). */
  readonly extraMembers: Readonly<Record<string, ExtraMembers>>;
  /** How calls and results are checked against the pinned schemas (read it with validationModeOf). */
  readonly validate?: ValidateConfig;
  /** A result that does not fit the pinned `outputSchema`: reported (`flag`) or replaced by an error. @default 'flag' */
  readonly onBadOutput?: 'flag' | 'block';
}
