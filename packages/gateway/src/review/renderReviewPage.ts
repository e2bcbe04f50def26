import type { AdminUiMode } from '../config/index.js';
import { showJson, showText, showWordDiff } from './html.js';
import { shownFingerprint } from './liveItemPlan.js';
import type { ReviewItem, ReviewServer } from './reviewModel.js';

/** What the page may offer: the actions, or why they are not shown. */
export interface ReviewActions {
  readonly mode: AdminUiMode;
  /** The per-session CSRF token of the forms; absent when this reader cannot write. */
  readonly csrf?: string;
  /** Why the actions are not offered (read-only mode, no admin token configured). */
  readonly readOnlyBecause?: string;
}

/** The page's one stylesheet (served under the page's CSP nonce). */
const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1b1f24;color:#fff;padding:10px 20px;display:flex;gap:16px;align-items:baseline}
header h1{font-size:18px;margin:0}#live{color:#9fb3c8;font-size:12px}
main{padding:12px 20px}.notice{margin:12px 20px;padding:8px 12px;border-radius:4px;background:#e6f4ea}
.notice.error{background:#fdecea}.ro{color:#555;font-style:italic}.approved{color:#1e6b34;font-weight:600}
section.server{background:#fff;border:1px solid #d8dde3;border-radius:6px;margin:0 0 16px;padding:12px 16px}
h2{font-size:16px;margin:0 0 8px}h3{font-size:14px;margin:0 0 6px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 10px}dt{color:#555}dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceff2;vertical-align:top}
th{font-weight:600;color:#444;background:#fafbfc}td.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600}
.s-verified{background:#e6f4ea;color:#1e6b34}.s-drifted{background:#fdecea;color:#a1261b}
.s-unpinned,.s-unverifiable{background:#fff4e0;color:#8a5300}.s-not-seen-yet{background:#eceff2;color:#555}
.sev-high{color:#a1261b;font-weight:600}.sev-low{color:#8a5300}
article.drift{border-left:4px solid #d93025;background:#fffafa;padding:8px 12px;margin:10px 0}
code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#f6f8fa;padding:8px;overflow:auto;margin:4px 0;white-space:pre-wrap;word-break:break-all}
.worddiff{background:#f6f8fa;padding:6px 8px;margin:4px 0;font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap}
del{background:#eceff2;color:#555;text-decoration:line-through}ins{text-decoration:none}
ins.warning{background:#ffe1a6;outline:1px solid #c77700;color:#5c2f00}ins.warning::before{content:"\\26A0 "}
mark{background:#fff1a8}.sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}
form{display:inline}button{font:inherit;padding:3px 10px;margin:6px 6px 0 0;cursor:pointer}
.actions a{margin-right:10px}`;

// Reads the page with JavaScript off; with it on, the servers section is replaced live (SSE).
const SCRIPT = `(() => {
  const live = document.getElementById('live');
  if (!('EventSource' in window)) return;
  const events = new EventSource('/ui/events');
  events.addEventListener('servers', (event) => {
    document.getElementById('servers').innerHTML = event.data;
    live.textContent = 'live: updated ' + new Date().toLocaleTimeString();
  });
  events.onopen = () => { live.textContent = 'live'; };
  events.onerror = () => { live.textContent = 'live updates paused (reconnecting)'; };
})();`;

/** The page's Content-Security-Policy: nothing but its own nonce'd style and script, and same-origin SSE and forms. */
export function reviewCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** A whole page around `body`; with `live`, the SSE script. */
export function renderShell(title: string, body: string, nonce: string, live = false): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${showText(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><header><h1>toolpin review</h1><span id="live">${live ? 'static page (JavaScript off: reload to refresh)' : ''}</span></header>
${body}
${live ? `<script nonce="${nonce}">${SCRIPT}</script>` : ''}</body></html>
`;
}

function query(params: Readonly<Record<string, string>>): string {
  return showText(new URLSearchParams(params).toString());
}

function hidden(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${showText(value)}">`)
    .join('');
}

function stateBadge(state: string): string {
  return `<span class="badge s-${state.replace(/ /g, '-')}">${showText(state)}</span>`;
}

/** What an item approved since its last listing shows instead of its actions. */
const APPROVED_WAITING = 'approved, waiting for the next listing';

/** The forms of one drifted item: approve (tools), keep blocked. */
function itemForms(server: string, item: ReviewItem, actions: ReviewActions): string {
  if (item.approved) return `<p class="approved">${APPROVED_WAITING}</p>`;
  if (actions.csrf === undefined)
    return `<p class="ro">${showText(actions.readOnlyBecause ?? 'read-only')}</p>`;
  const fields = {
    server,
    key: item.key,
    observed: item.finding?.observed ?? '',
    shown: item.finding === undefined ? '' : shownFingerprint(item.finding),
    csrf: actions.csrf,
  };
  const approve =
    item.surface === 'tools'
      ? `<form method="post" action="/ui/approve">${hidden(fields)}<button type="submit" name="action" value="approve">Approve</button></form>`
      : '';
  const keep = item.acknowledged
    ? '<span class="ro">kept blocked (acknowledged)</span>'
    : `<form method="post" action="/ui/acknowledge">${hidden(fields)}<button type="submit" name="action" value="keep-blocked">Keep blocked</button></form>`;
  return `<div class="forms">${approve}${keep}</div>`;
}

/** The explanation of one finding: members, pointers with severities, word diffs, digests, first seen. */
function renderFinding(server: string, item: ReviewItem, actions: ReviewActions): string {
  const finding = item.finding;
  if (finding === undefined) return '';
  const severities = new Map((finding.severities ?? []).map((entry) => [entry.path, entry]));
  const paths = (finding.paths ?? [])
    .map((path) => {
      const judged = severities.get(path);
      const sev =
        judged === undefined
          ? ''
          : ` <span class="sev-${judged.severity}">${judged.severity}</span> <small>${showText(judged.rule)}</small>`;
      return `<li><code>${showText(path)}</code>${sev}</li>`;
    })
    .join('');
  const text = (finding.text ?? [])
    .map(
      (change) =>
        `<div class="worddiff"><code>${showText(change.path)}</code>: ${showWordDiff(change.ops)}</div>`,
    )
    .join('');
  const members = (finding.members ?? []).map((member) => `<mark>${showText(member)}</mark>`).join(', ');
  const link = query({
    server,
    key: item.key,
    observed: finding.observed ?? '',
    shown: shownFingerprint(finding),
  });
  const actionsHtml =
    item.surface === 'tools'
      ? `<p class="actions"><a href="/ui/item?${link}">Pinned and observed side by side</a><a href="/ui/patch?${link}">Download patch</a></p>`
      : '';
  return `<article class="drift" data-key="${showText(item.key)}">
<h3>${showText(item.name)}: ${showText(finding.kind)} <span class="sev-${finding.severity}">severity ${finding.severity}</span></h3>
<p>pinned <code>${showText(finding.pinned ?? '-')}</code> → observed <code>${showText(finding.observed ?? '-')}</code>${item.firstSeen === undefined ? '' : `; first seen ${showText(item.firstSeen)}`}</p>
${finding.problem === undefined ? '' : `<p>why: ${showText(finding.problem)}</p>`}
${members === '' ? '' : `<p>changed members: ${members}</p>`}
${paths === '' ? '' : `<ul class="paths">${paths}</ul>`}
${text}${actionsHtml}${itemForms(server, item, actions)}
</article>`;
}

function itemRow(item: ReviewItem): string {
  return `<tr data-key="${showText(item.key)}" data-state="${item.state}"><td><code>${showText(item.name)}</code></td><td>${showText(item.surface)}</td><td>${stateBadge(item.state)}${item.acknowledged ? ' <small>kept blocked</small>' : ''}${item.approved ? ` <small>${APPROVED_WAITING}</small>` : ''}</td><td>${showText(item.lastSeen ?? '-')}</td><td class="n">${item.calls.allowed}</td><td class="n">${item.calls.refused}</td></tr>`;
}

/** The scope of each principal on the server, and its catalogs per principal (docs/scopes.md). */
function scopeRows(server: ReviewServer): string {
  const scope =
    server.scope === undefined
      ? ''
      : `<dt>scope</dt><dd>${server.scope.length === 0 ? 'no principal' : server.scope.map((line) => showText(line)).join('<br>')}</dd>`;
  const catalogs =
    server.principalCatalogs === undefined
      ? ''
      : `<dt>catalogs per principal</dt><dd>${Object.entries(server.principalCatalogs)
          .map(([principal, catalog]) => `${showText(principal)}: <code>${showText(catalog)}</code>`)
          .join('<br>')}</dd>`;
  return scope + catalogs;
}

function renderServer(server: ReviewServer, actions: ReviewActions): string {
  const findings = server.items
    .filter((item) => item.finding !== undefined)
    .map((item) => renderFinding(server.name, item, actions))
    .join('\n');
  return `<section class="server" id="server-${showText(server.name)}" data-state="${server.state}">
<h2>${showText(server.name)} ${stateBadge(server.state)}</h2>
<dl><dt>mode</dt><dd>${showText(server.mode)}</dd><dt>upstream</dt><dd>${showText(server.upstream)}</dd>
<dt>pin file</dt><dd>${showText(server.file)}</dd><dt>pinned catalog</dt><dd>${showText(server.pinnedCatalog)}</dd>
${server.approvedBy === undefined ? '' : `<dt>first approval</dt><dd>${showText(server.approvedBy)}</dd>\n`}<dt>last listing</dt><dd>${showText(server.observedAt ?? 'not seen yet')}</dd>${scopeRows(server)}</dl>
<table class="items"><thead><tr><th>item</th><th>surface</th><th>state</th><th>last seen</th><th>calls allowed</th><th>refused</th></tr></thead>
<tbody>${server.items.map(itemRow).join('')}</tbody></table>
${findings}
</section>`;
}

/** The servers section: what the page shows first and what each live update replaces. */
export function renderServers(servers: readonly ReviewServer[], actions: ReviewActions): string {
  if (servers.length === 0) return '<p>No servers are routed (no pin files in the servers folder).</p>';
  return servers.map((server) => renderServer(server, actions)).join('\n');
}

/** A definition pair side by side, with every changed pointer's old and new value. */
export function renderSides(
  pinned: unknown,
  observed: unknown,
  changes: readonly { path: string; before: unknown; after: unknown; severity?: string }[],
): string {
  const rows = changes
    .map(
      (change) =>
        `<tr><td><code>${showText(change.path)}</code></td><td>${change.severity === undefined ? '' : `<span class="sev-${change.severity}">${change.severity}</span>`}</td><td><pre>${showJson(change.before)}</pre></td><td><pre>${showJson(change.after)}</pre></td></tr>`,
    )
    .join('');
  return `<table class="changes"><thead><tr><th>pointer</th><th>severity</th><th>old</th><th>new</th></tr></thead><tbody>${rows}</tbody></table>
<div class="sides"><div><h3>pinned</h3><pre>${showJson(pinned)}</pre></div><div><h3>observed</h3><pre>${showJson(observed)}</pre></div></div>`;
}
