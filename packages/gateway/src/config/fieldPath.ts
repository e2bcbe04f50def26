/** Formats a path into a parsed document as a dotted field: `pin.tools["tool:echo"]`, `command[0]`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let field = '';
  for (const segment of path) {
    if (typeof segment === 'number') field += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment))
      field += field === '' ? segment : `.${segment}`;
    else field += `[${JSON.stringify(String(segment))}]`;
  }
  return field;
}
