// @toolpin/gateway/pin: the pin-file lifecycle (what `toolpin pin` and `approve` do), as functions.

/** Pins a listed catalog: the catalog digest, per-tool digests, and the definitions. */
export { pinFromCatalog } from '../config/pinFromCatalog.js';
export type { CatalogPin } from '../config/pinFromCatalog.js';
/** Plans the update that approves an observed catalog (all drift, or the named tools'), explained. */
export { planPinUpdate } from '../config/planPinUpdate.js';
export type { PinUpdatePlan, PinUpdatePlanResult } from '../config/planPinUpdate.js';
/** Writes an update into a pin file atomically, comments kept; refuses a file changed since it was read. */
export { rewritePinFile } from '../config/rewritePinFile.js';
export type { RewritePinFileOptions } from '../config/rewritePinFile.js';
export type { PinDocumentUpdate } from '../config/updatePinDocument.js';
