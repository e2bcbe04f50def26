/** RFC 2152 UTF-7 of `text`, every character base64-encoded (so `"` and `{` hide from a UTF-8 reader). */
export function encodeUtf7(text: string): string {
  const le = Buffer.from(text, 'utf16le');
  const be = Buffer.alloc(le.length);
  for (let index = 0; index < le.length; index += 2) {
    be[index] = le[index + 1]!;
    be[index + 1] = le[index]!;
  }
  return `+${be.toString('base64').replace(/=+$/, '')}-`;
}

/**
 * A JSON-RPC body that reads as `visible` (a method and params, tools/call of echo or a ping) when
 * decoded as UTF-8, and as a tools/call of `hidden` when decoded as UTF-7: the UTF-7 part ends
 * the visible string early, then repeats `method`/`params` (JSON.parse keeps the last).
 */
export function utf7SmuggledBody(visible: 'echo' | 'ping', hidden: string): string {
  const head =
    visible === 'echo'
      ? '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
      : '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"note":"';
  const tail = visible === 'echo' ? '"}}}' : '"}}';
  const injected =
    visible === 'echo'
      ? `"},"name":${JSON.stringify(hidden)},"arguments":{"cmd":"id"},"x":{"y":"`
      : `"},"method":"tools/call","params":{"name":${JSON.stringify(hidden)},"arguments":{"cmd":"id"},"x":"`;
  return `${head}${encodeUtf7(injected)}${tail}`;
}
