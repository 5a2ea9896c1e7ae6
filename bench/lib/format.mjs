// Markdown formatting helpers. (No toLocaleString: SES lockdown() tames it.)

function group3(n) {
  const s = String(Math.round(Math.abs(n)));
  return (n < 0 ? '-' : '') + s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function fmtUs(x) {
  if (x == null || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  if (a >= 1000) return group3(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  if (a >= 0.01) return x.toFixed(3);
  return x.toPrecision(2);
}

export const fmtPct = (f) => `±${(f * 100).toFixed(f < 0.1 ? 1 : 0)}%`;

export function fmtBytes(b) {
  if (b == null || !Number.isFinite(b)) return '–';
  const a = Math.abs(b);
  if (a >= 1024 * 1024) return `${(b / 1024 / 1024).toFixed(1)} MiB`;
  if (a >= 1024) return `${(b / 1024).toFixed(1)} KiB`;
  return `${Math.round(b)} B`;
}

export const fmtRatio = (r) => (r == null || !Number.isFinite(r) ? '–' : `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`);

export const fmtInt = (n) => group3(n);

/** Text safe for a markdown table cell, single line, bounded length. */
export function cell(s, max = 90) {
  let t = String(s).replace(/\s+/g, ' ').replace(/\|/g, '/').trim();
  if (t.length > max) t = t.slice(0, max - 1) + '…';
  return t;
}

export const na = (reason) => `n/a (${cell(reason)})`;

export function table(header, rows) {
  const out = [`| ${header.join(' | ')} |`, `|${header.map((h, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const r of rows) out.push(`| ${r.join(' | ')} |`);
  return out.join('\n');
}

/**
 * Standard timing table. rows: [{ impl, stats?, error?, note? }].
 * Ratio column: each row's time divided by the baseline row (quickrealm when
 * it was measured, else the fastest row).
 */
export function timingTable(rows, { baseline = 'quickrealm', unit = 'µs/op', extra } = {}) {
  const measured = rows.filter((r) => r.stats);
  let base = measured.find((r) => r.impl.startsWith(baseline));
  if (!base && measured.length) base = measured.reduce((a, b) => (a.stats.median <= b.stats.median ? a : b));
  const baseName = base ? base.impl : null;
  const header = ['implementation', `median ${unit}`, 'spread (min–max)', baseName ? `vs ${baseName}` : 'ratio'];
  if (extra) header.push(extra.title);
  const body = rows.map((r) => {
    const line = r.stats
      ? [
          r.impl,
          fmtUs(r.stats.median),
          `${fmtPct(r.stats.spread)} (${fmtUs(r.stats.min)}–${fmtUs(r.stats.max)})`,
          base ? fmtRatio(r.stats.median / base.stats.median) : '–',
        ]
      : [r.impl, na(r.error), '', ''];
    if (extra) line.push(r.stats ? extra.value(r) : '');
    return line;
  });
  return table(header, body);
}
