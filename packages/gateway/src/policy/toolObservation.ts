/** One tool definition as the gateway observed it: its digest, or why it has none. */
export interface ToolObservation {
  readonly name: string | undefined;
  readonly key: string;
  /** `sha256:…`, absent when the definition cannot be digested. */
  readonly digest?: string;
  /**
   * The members outside the six the digest covers (`_meta`, `icons`…), non-null ones, values as
   * served; absent when there are none. The pin records some of them by value (policy/pinnedMembers).
   */
  readonly extras?: Readonly<Record<string, unknown>>;
  /** Why the definition is unverifiable (not canonicalizable, not an object, duplicate name). */
  readonly problem?: string;
}
