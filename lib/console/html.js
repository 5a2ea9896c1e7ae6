'use strict';
// HTML built from tagged templates: every interpolated value is escaped unless it is markup made
// by this same tag. File names, contents, arguments and code are written by models, so nothing
// reaches the page without passing through here.

class Markup {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
  }
  toString() {
    return this.text;
  }
}

/** @type {Record<string, string>} */
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** @param {unknown} value */
function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** @param {unknown} value @returns {string} */
function piece(value) {
  if (value instanceof Markup) return value.text;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(piece).join('');
  return escapeHtml(value);
}

/**
 * @param {TemplateStringsArray} strings
 * @param {...unknown} values
 */
function html(strings, ...values) {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1];
  return new Markup(out);
}

module.exports = { html, escapeHtml, Markup };
