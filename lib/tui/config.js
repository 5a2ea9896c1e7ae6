'use strict';
// Where the chat connects: flags, then the environment (with a `.env` file of the current
// folder filling in what the real environment lacks), then Ollama's defaults.

const fs = require('node:fs');
const path = require('node:path');

const DEFAULT_BASE_URL = 'http://127.0.0.1:11434/v1';
const DEFAULT_MODEL = 'gpt-oss:20b';
/** Ollama ignores the key, but the client needs one. */
const PLACEHOLDER_API_KEY = 'ollama';

/**
 * Parses a `.env` file: `KEY=value` lines, `export KEY=value`, `#` comments, values in single
 * quotes (taken as they are) or double quotes (`\n`, `\t`, `\"`, `\\` unescaped), and unquoted
 * values ending at ` #`. Lines that are not assignments are skipped.
 * @param {string} text
 * @returns {Record<string, string>}
 */
function parseDotEnv(text) {
  /** @type {Record<string, string>} */
  const vars = {};
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(raw);
    if (!m) continue;
    const [, key, rest] = m;
    let value;
    if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      value = end === -1 ? rest.slice(1) : rest.slice(1, end);
    } else if (rest.startsWith('"')) {
      const q = /^"((?:[^"\\]|\\.)*)"?/.exec(rest);
      value = (q ? q[1] : '').replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
    } else {
      value = rest.replace(/\s+#.*$/, '').trim();
    }
    vars[key] = value;
  }
  return vars;
}

/**
 * The environment with `<dir>/.env` filling in variables the real environment does not set.
 * @param {string} dir
 * @param {Record<string, string | undefined>} env
 * @returns {{ env: Record<string, string | undefined>, dotEnvFile: string | null }}
 */
function environmentWithDotEnv(dir, env) {
  const file = path.join(dir, '.env');
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { env, dotEnvFile: null };
  }
  return { env: { ...parseDotEnv(text), ...stripUndefined(env) }, dotEnvFile: file };
}

/**
 * @param {Record<string, string | undefined>} env
 * @returns {Record<string, string>}
 */
function stripUndefined(env) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Ollama's OpenAI-compatible URL from OLLAMA_HOST (`host`, `host:port`, `http://host:port`;
 * port 11434 unless given or https; `0.0.0.0`, which Ollama listens on, is reached at 127.0.0.1).
 * @param {string} host
 */
function ollamaBaseURL(host) {
  let url = host.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) url = `http://${url}`;
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  const portGiven = /:\d+(\/|$)/.test(url.replace(/^[a-z]+:\/\//i, ''));
  if (parsed.protocol === 'http:' && parsed.port === '' && !portGiven) parsed.port = '11434';
  const base = parsed.toString().replace(/\/+$/, '');
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

/**
 * @param {{ baseURL?: string, model?: string }} flags
 * @param {Record<string, string | undefined>} env
 * @returns {{ baseURL: string, apiKey: string, model: string }}
 */
function resolveEndpoint(flags, env) {
  const nonEmpty = (/** @type {string | undefined} */ v) => (v !== undefined && v.trim() !== '' ? v.trim() : undefined);
  const fromOllama = nonEmpty(env.OLLAMA_HOST);
  const baseURL =
    nonEmpty(flags.baseURL) ??
    nonEmpty(env.OPENAI_BASE_URL) ??
    (fromOllama !== undefined ? ollamaBaseURL(fromOllama) : DEFAULT_BASE_URL);
  return {
    baseURL: baseURL.replace(/\/+$/, ''),
    apiKey: nonEmpty(env.OPENAI_API_KEY) ?? PLACEHOLDER_API_KEY,
    model: nonEmpty(flags.model) ?? DEFAULT_MODEL,
  };
}

module.exports = {
  parseDotEnv,
  environmentWithDotEnv,
  ollamaBaseURL,
  resolveEndpoint,
  DEFAULT_BASE_URL,
  DEFAULT_MODEL,
};
