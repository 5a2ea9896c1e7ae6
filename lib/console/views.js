'use strict';
// The console's pages, rendered on the server: the sessions list, one session (approvals,
// proposals, turns), its audit trail, and error pages. Model-written text only enters through
// `html` interpolation (escaped); no inline script or style, so the Content-Security-Policy can
// refuse both.

const { html } = require('./html.js');
const { approvalsOf, proposalsOf, codeOf } = require('./review.js');

const STATUSES = ['active', 'paused', 'completed', 'aborted', 'budget-exceeded'];

/**
 * @typedef {{ base: string, csrf: string | null, canAct: boolean, notice?: string | null }} PageContext
 */

/** @param {number | null | undefined} ms */
function when(ms) {
  return typeof ms === 'number' && Number.isFinite(ms)
    ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19)
    : '—';
}

/** @param {number | null | undefined} n */
function num(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

/**
 * @param {PageContext} ctx
 * @param {string} title
 * @param {unknown} body
 */
function page(ctx, title, body) {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · quickrealm review</title>
<link rel="stylesheet" href="${ctx.base}/assets/console.css"><script src="${ctx.base}/assets/console.js" defer></script>
</head><body><header><a class="brand" href="${ctx.base}/">quickrealm review</a>${
    ctx.canAct ? '' : html`<span class="badge readonly">read-only</span>`
  }</header>
<main>${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : ''}${body}</main></body></html>`.text;
}

/**
 * @param {PageContext} ctx
 * @param {{ sessions: import('./source.js').SessionSummary[], next: string | null }} result
 * @param {{ status?: string, tenant?: string }} filter
 */
function listPage(ctx, result, filter) {
  const query = (/** @type {string} */ after) => {
    const q = new URLSearchParams();
    if (filter.status) q.set('status', filter.status);
    if (filter.tenant) q.set('tenant', filter.tenant);
    q.set('after', after);
    return `?${q}`;
  };
  const rows = result.sessions.map(
    (s) => html`<tr><td><a class="session-link" href="${ctx.base}/sessions/${encodeURIComponent(s.id)}">${s.id}</a></td>
<td><span class="status status-${s.status}">${s.status}</span></td><td>${s.tenant ?? '—'}</td><td class="n">${s.turnNumber}</td>
<td class="n">${num(s.usage.tokens)}</td><td class="n">${num(s.usage.cost)}</td><td>${when(s.updatedAt)}</td></tr>`,
  );
  return page(
    ctx,
    'Sessions',
    html`<h1>Sessions</h1>
<form class="filter" method="get" action="${ctx.base}/"><label>Status <select name="status" class="auto-submit"><option value="">any</option>${STATUSES.map(
      (s) => html`<option value="${s}"${filter.status === s ? html` selected` : ''}>${s}</option>`,
    )}</select></label> <label>Tenant <input name="tenant" value="${filter.tenant ?? ''}" maxlength="128"></label> <button type="submit">Filter</button></form>
<table class="sessions"><thead><tr><th>Session</th><th>Status</th><th>Tenant</th><th>Turns</th><th>Tokens</th><th>Cost</th><th>Last activity (UTC)</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="7" class="empty">No sessions.</td></tr>`}</tbody></table>
${result.next ? html`<p><a class="next" href="${query(result.next)}">Next page</a></p>` : ''}`,
  );
}

/** @param {string} diff */
function diffLines(diff) {
  return diff.split('\n').map((line, i, all) => {
    if (i === all.length - 1 && line === '') return '';
    const kind = line.startsWith('@@')
      ? 'hunk'
      : line.startsWith('+++') || line.startsWith('---')
        ? 'file'
        : line.startsWith('+')
          ? 'add'
          : line.startsWith('-')
            ? 'del'
            : 'ctx';
    return html`<span class="d-${kind}">${line}\n</span>`;
  });
}

/**
 * @param {PageContext} ctx
 * @param {string} id
 * @param {string} action
 * @param {unknown} fields
 * @param {string} label
 * @param {string} [cls]
 */
function actionForm(ctx, id, action, fields, label, cls = '') {
  return html`<form method="post" class="action ${cls}" action="${ctx.base}/sessions/${encodeURIComponent(id)}/${action}"><input type="hidden" name="csrf" value="${ctx.csrf ?? ''}">${fields}<button type="submit" name="action" value="${action}">${label}</button></form>`;
}

/**
 * @param {PageContext} ctx
 * @param {any} view an inspected session (lib/session/inspect.js) with its store version
 */
function sessionPage(ctx, view) {
  const id = view.id;
  const intact = view.audit.verification.ok && view.integrity === null;
  const act = ctx.canAct && intact;
  const approvals = approvalsOf(view);
  const proposals = proposalsOf(view.proposals);
  const budget = Object.entries(view.budget).map(
    ([kind, b]) =>
      html`<tr><th>${kind}</th><td class="n">${num(b.used)}</td><td class="n">${b.limit === null ? '∞' : num(b.limit)}</td></tr>`,
  );
  const approvalItems = approvals.map(
    (
      a,
    ) => html`<li class="approval" data-request="${a.id}"><h3><code class="operation">${a.operation}</code> <small>request ${a.id}, turn ${a.turnNumber}</small></h3>
<pre class="args">${a.argsText}${a.argsCut ? `\n… ${a.argsCut} more characters` : ''}</pre>
${
  a.askedAt.length
    ? html`<p>Asked at ${a.askedAt.length === 1 ? 'line' : 'lines'} ${a.askedAt.map((l) => l.line).join(', ')} of turn ${a.turnNumber}:</p><pre class="asked">${a.askedAt.map(
        (l) => html`<span class="ln">${l.line}</span>${l.text}\n`,
      )}</pre>`
    : html`<p class="muted">The turn's code does not call ${a.operation} by name.</p>`
}
${act ? html`<div class="actions">${actionForm(ctx, id, 'approve', html`<input type="hidden" name="request" value="${a.id}">`, 'Approve', 'approve')}${actionForm(ctx, id, 'reject', html`<input type="hidden" name="request" value="${a.id}"><input name="reason" placeholder="reason (optional)" maxlength="500">`, 'Reject', 'reject')}</div>` : ''}</li>`,
  );
  const files = proposals.files.map(
    (f) =>
      html`<section class="file"><h3><span class="kind kind-${f.kind}">${f.kind}</span> <code class="path">${f.path}</code></h3>${
        f.diff !== null
          ? html`<pre class="diff">${diffLines(f.diff)}${f.diffCut ? html`<span class="cut">… ${f.diffCut} more characters not shown</span>` : ''}</pre>`
          : f.dir
            ? html`<p class="muted">directory</p>`
            : html`<p class="muted">binary: ${f.beforeBytes ?? 0} → ${f.afterBytes ?? 0} bytes</p>`
      }</section>`,
  );
  const turns = [...view.turns].reverse().map((/** @type {any} */ t) => {
    const code = codeOf(t.code);
    const e = t.error;
    return html`<li class="turn outcome-${t.outcome}"><h3>Turn ${t.turnNumber} <span class="outcome">${t.outcome}</span> <small>${when(t.startedAt)} · ${num(t.wallMs)} ms</small></h3>
<pre class="code">${code.text}${code.cut ? `\n… ${code.cut} more characters` : ''}</pre>${
      e
        ? html`<div class="error"><p><strong class="code">${e.code}</strong>${e.name ? html` <span>${e.name}</span>` : ''}: <span class="message">${e.message}</span>${
            typeof e.line === 'number'
              ? html` <small>at line ${e.line}${typeof e.column === 'number' ? `:${e.column}` : ''}</small>`
              : ''
          }${e.budget ? html` <small>budget ${e.budget}</small>` : ''}</p>${e.frame ? html`<pre class="frame">${e.frame}</pre>` : ''}</div>`
        : ''
    }</li>`;
  });
  const verification = view.audit.verification;
  return page(
    ctx,
    `Session ${id}`,
    html`<nav class="crumbs"><a href="${ctx.base}/">Sessions</a> / <span>${id}</span></nav>
<h1>Session <code>${id}</code> <span class="status status-${view.status}">${view.status}</span></h1>
${
  view.integrity
    ? html`<p class="alert" role="alert">The stored snapshot does not verify: ${view.integrity}. Shown unverified and read-only.</p>`
    : ''
}${
  verification.ok
    ? ''
    : html`<p class="alert audit-broken" role="alert">The audit chain is broken at entry ${verification.brokenAt ?? '?'}: ${verification.error}. This session is shown read-only.</p>`
}
<dl class="facts"><dt>Tenant</dt><dd>${view.tenant ?? '—'}</dd><dt>Turns</dt><dd>${view.turnNumber}</dd><dt>Store version</dt><dd>${view.version}</dd>
<dt>Audit</dt><dd><a class="audit-link" href="${ctx.base}/sessions/${encodeURIComponent(id)}/audit">${verification.ok ? `intact (${verification.entries} entries)` : `broken at entry ${verification.brokenAt ?? '?'}`}</a></dd>
<dt>Snapshot</dt><dd><a class="download" href="${ctx.base}/sessions/${encodeURIComponent(id)}/snapshot" download>download (${view.bytes} bytes)</a></dd>${
      view.state
        ? html`<dt>Kept state</dt><dd class="kept-state">${view.state.bytes} bytes of top-level bindings (persistState)</dd>`
        : ''
    }</dl>
<section class="approvals"><h2>Waiting for approval (${approvals.length})</h2>${approvals.length ? html`<ul>${approvalItems}</ul>` : html`<p class="muted">Nothing is waiting.</p>`}</section>
<section class="proposals"><h2>Proposals (${view.proposals.length})</h2>${files.length ? files : html`<p class="muted">No staged changes.</p>`}${
      proposals.more ? html`<p class="muted">${proposals.more} more files not shown.</p>` : ''
    }${
      act && view.proposals.length
        ? html`<div class="actions">${actionForm(ctx, id, 'commit', '', 'Commit', 'commit')}${actionForm(ctx, id, 'rollback', '', 'Roll back', 'rollback')}</div>`
        : ''
    }</section>
<section class="turns"><h2>Turns</h2>${turns.length ? html`<ol reversed>${turns}</ol>` : html`<p class="muted">No turns yet.</p>`}</section>
<section class="budget"><h2>Budget</h2><table><thead><tr><th></th><th>used</th><th>limit</th></tr></thead><tbody>${budget}</tbody></table></section>`,
  );
}

/**
 * @param {PageContext} ctx
 * @param {any} view
 * @param {{ entries: any[], from: number, next: number | null }} slice
 */
function auditPage(ctx, view, slice) {
  const v = view.audit.verification;
  const rows = slice.entries.map(
    (
      e,
    ) => html`<tr class="${!v.ok && v.brokenAt === e.seq ? 'broken' : ''}"><td class="n">${e.seq}</td><td class="n">${e.turnNumber}</td><td>${when(e.timestamp)}</td>
<td><code>${e.operation}</code></td><td><code class="args">${e.args}</code></td><td>${
      e.error !== undefined ? html`<span class="err">${e.error}</span>` : html`<code>${e.result ?? ''}</code>`
    }</td><td class="n">${num(e.durationMs)}</td><td><code class="hash" title="${e.hash}">${String(e.hash).slice(0, 12)}</code></td></tr>`,
  );
  return page(
    ctx,
    `Audit of ${view.id}`,
    html`<nav class="crumbs"><a href="${ctx.base}/">Sessions</a> / <a href="${ctx.base}/sessions/${encodeURIComponent(view.id)}">${view.id}</a> / <span>audit</span></nav>
<h1>Audit trail</h1>
${
  v.ok
    ? html`<p class="verified intact" role="status">Chain intact: ${v.entries} entries verified.</p>`
    : html`<p class="alert audit-broken" role="alert">Chain broken at entry ${v.brokenAt ?? '?'}: ${v.error}</p>`
}
<table class="audit"><thead><tr><th>#</th><th>Turn</th><th>Time (UTC)</th><th>Operation</th><th>Arguments</th><th>Result</th><th>ms</th><th>Hash</th></tr></thead><tbody>${rows}</tbody></table>
${slice.next !== null ? html`<p><a class="next" href="?from=${slice.next}">More entries</a></p>` : ''}`,
  );
}

/**
 * @param {PageContext} ctx
 * @param {number} status
 * @param {string} message
 */
function errorPage(ctx, status, message) {
  return page(
    ctx,
    `Error ${status}`,
    html`<h1>Error ${status}</h1><p class="error-message">${message}</p><p><a href="${ctx.base}/">Sessions</a></p>`,
  );
}

/**
 * The sign-in page of a console served with a token (`quickrealm console --token-env`).
 * @param {string} base
 * @param {string | null} message
 */
function loginPage(base, message) {
  return page(
    { base, csrf: null, canAct: false, notice: null },
    'Sign in',
    html`<h1>Sign in</h1>${message ? html`<p class="alert" role="alert">${message}</p>` : ''}
<form method="post" action="${base}/login" class="login"><label>Token <input type="password" name="token" autocomplete="current-password" required></label> <button type="submit">Sign in</button></form>`,
  );
}

module.exports = { loginPage, listPage, sessionPage, auditPage, errorPage, STATUSES };
