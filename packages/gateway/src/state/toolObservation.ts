/** One tool definition as the gateway observed it: its digest, or why it has none. */
export interface ToolObservation {
  readonly name: string | undefined;
  readonly key: string;
  /** `sha256:…`, absent when the definition cannot be digested. */
  readonly digest?: string;
  /** Why the definition is unverifiable (not canonicalizable, not an object, duplicate name). */
  readonly problem?: string;
}
