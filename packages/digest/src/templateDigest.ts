import { TEMPLATE_PROFILE } from './profiles.js';
import { restrictMembers } from './restrictTool.js';
import {
  digestSurfaceItem,
  digestSurfaceItems,
  surfaceKey,
  type SurfaceDigestResult,
  type SurfaceProfile,
} from './surfaceDigest.js';

/** The members of a resource template that are hashed. */
export const TEMPLATE_MEMBERS = ['uriTemplate', 'name', 'title', 'description', 'mimeType'] as const;

/** One hashed resource template member. */
export type TemplateMember = (typeof TEMPLATE_MEMBERS)[number];

/** A resource template restricted to the hashed members. */
export type RestrictedTemplate = Partial<Record<TemplateMember, unknown>>;

/** Restricts a resource template to `uriTemplate`, `name`, `title`, `description`, `mimeType` (null and absent omitted). */
export function restrictTemplate(template: Readonly<Record<string, unknown>>): RestrictedTemplate {
  return restrictMembers(template, TEMPLATE_MEMBERS);
}

/** The fold's overflow key of this surface (entries beyond the first 500). */
export const TEMPLATES_OVERFLOW_KEY = 'templates:overflow';

const TEMPLATE_SURFACE: SurfaceProfile<RestrictedTemplate> = {
  noun: 'resource template',
  label: TEMPLATE_PROFILE,
  member: 'resourceTemplate',
  nameMember: 'uriTemplate',
  keyPrefix: 'template',
  overflowKey: TEMPLATES_OVERFLOW_KEY,
  restrict: restrictTemplate,
};

/** The fold key of a resource template: `template:` + its uriTemplate encoded as tool names are (`template:unnamed`). */
export function encodeTemplateKey(uriTemplate: unknown): string {
  return surfaceKey(TEMPLATE_SURFACE, { uriTemplate });
}

/** The per-template digest: `sha256:` + hex over JCS `{"profile":"toolpin.mcp-resource-template.v1","resourceTemplate":<restricted>}`. */
export function digestTemplate(template: unknown): string {
  return digestSurfaceItem(TEMPLATE_SURFACE, template);
}

/** Digests the `resourceTemplates` of a resources/templates/list result (every page): entries and the catalog digest. */
export function digestTemplateCatalog(templates: unknown): SurfaceDigestResult {
  return digestSurfaceItems(TEMPLATE_SURFACE, templates);
}
