import type { PrincipalConfig } from '../config/index.js';
import { PrincipalScopes } from '../policy/principalScopes.js';

/**
 * The `principals` block in force, shared by a gateway's fronts and checkpoints: swapped whole on
 * reload, read by every decision (a scope change applies to the next request). Empty: no scopes.
 */
export class ScopeTable {
  #scopes: PrincipalScopes | undefined;

  constructor(principals?: readonly PrincipalConfig[]) {
    this.replace(principals);
  }

  /** The scopes in force; undefined when the gateway file has no `principals` block. */
  get scopes(): PrincipalScopes | undefined {
    return this.#scopes;
  }

  /** Puts a new block in force (undefined: none) for the next request. */
  replace(principals: readonly PrincipalConfig[] | undefined): void {
    this.#scopes = principals === undefined ? undefined : new PrincipalScopes(principals);
  }
}
