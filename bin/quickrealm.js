#!/usr/bin/env node
'use strict';
// quickrealm command-line tool.
//
//   quickrealm run   < request.json   deny-by-default snippet runner (JSON on stdin)
//   quickrealm exec  < request.json   run a file of a zipped workspace (JSON on stdin)
//
// `run` reads {"source", "input", "limits": {"wall_ms", "output_kb"}} and answers with
// {"output"} on stdout (exit 0), or a one-line {"code","message"} on stderr (exit 1; exit 2 for
// malformed requests). On OUTPUT_LIMIT stdout still carries the truncated output; on TIMEOUT
// stdout stays empty.
//
// `exec` reads {"zipBase64", "entryPath", "argv"?, "env"?, "timeoutMs"?}, runs the entry file of
// that workspace (see ZipWorkspace.exec) and answers on stdout with
// {"ok", "stdout", "stderr", "exitCode", "zipBase64"} (plus "error" when the run failed), where
// zipBase64 is the workspace after the run: changed only if the run succeeded. Exit 0 when the
// run succeeded, 1 when it failed; a malformed request (bad JSON, fields, base64 or archive, or
// an entry that cannot run) is a one-line {"code":"INVALID_INPUT","message"} on stderr, exit 2.

const { runSync, ZipWorkspace } = require('../lib/index.js');
const { formatForModel } = require('../lib/errors.js');

const USAGE = 'usage: quickrealm run < request.json | quickrealm exec < request.json';
const EXIT_FAILED = 1;
const EXIT_INVALID = 2;

function readStdin() {
  const chunks = [];
  const fs = require('node:fs');
  const buf = Buffer.alloc(65536);
  for (;;) {
    let n;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN') continue;
      if (e.code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function fail(code, message, exitCode) {
  process.stderr.write(JSON.stringify({ code, message }) + '\n');
  process.exitCode = exitCode;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Validates a `run` request; returns an error message or null. */
function checkRunRequest(req) {
  if (!isPlainObject(req)) return 'the request must be a JSON object';
  for (const key of Object.keys(req)) {
    if (!['source', 'input', 'limits'].includes(key)) return `unknown request field '${key}'`;
  }
  if (typeof req.source !== 'string') return 'source must be a string';
  if (typeof req.input !== 'string') return 'input must be a string';
  if (!isPlainObject(req.limits)) return 'limits must be an object';
  for (const key of Object.keys(req.limits)) {
    if (!['wall_ms', 'output_kb'].includes(key)) return `unknown limits field '${key}'`;
    const v = req.limits[key];
    if (!Number.isInteger(v) || v < 0) return `limits.${key} must be a non-negative integer`;
  }
  if (req.limits.wall_ms === 0) return 'limits.wall_ms must be at least 1';
  if (req.limits.wall_ms > 86_400_000) return 'limits.wall_ms must be at most 86400000';
  if (req.limits.output_kb > 262_144) return 'limits.output_kb must be at most 262144';
  return null;
}

function commandRun() {
  let req;
  try {
    req = JSON.parse(readStdin());
  } catch (e) {
    return fail('INVALID_INPUT', `stdin is not valid JSON: ${e.message}`, EXIT_INVALID);
  }
  const problem = checkRunRequest(req);
  if (problem) return fail('INVALID_INPUT', problem, EXIT_INVALID);

  const wallMs = req.limits.wall_ms ?? 1000;
  const outputKb = req.limits.output_kb ?? 64;
  const result = runSync(req.source, {
    mode: 'script',
    input: req.input,
    console: 'none',
    limits: { timeoutMs: wallMs, outputBytes: outputKb * 1024 },
  });
  if (result.ok) {
    process.stdout.write(JSON.stringify({ output: result.output }) + '\n');
    return;
  }
  const { code } = result.error;
  if (code === 'OUTPUT_LIMIT') {
    process.stdout.write(JSON.stringify({ output: result.output }) + '\n');
    return fail(code, `output exceeded ${outputKb} KB`, EXIT_FAILED);
  }
  if (code === 'TIMEOUT') return fail(code, `execution exceeded ${wallMs} ms`, EXIT_FAILED);
  return fail(code, formatForModel(result.error, { frame: false }), code === 'INVALID_INPUT' ? EXIT_INVALID : EXIT_FAILED);
}

const EXEC_FIELDS = ['zipBase64', 'entryPath', 'argv', 'env', 'timeoutMs'];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Validates an `exec` request; returns an error message or null. */
function checkExecRequest(req) {
  if (!isPlainObject(req)) return 'the request must be a JSON object';
  for (const key of Object.keys(req)) {
    if (!EXEC_FIELDS.includes(key)) return `unknown request field '${key}' (expected: ${EXEC_FIELDS.join(', ')})`;
  }
  if (typeof req.zipBase64 !== 'string' || req.zipBase64.length === 0) return 'zipBase64 must be a non-empty string';
  const compact = req.zipBase64.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return 'zipBase64 is not valid base64';
  if (typeof req.entryPath !== 'string' || req.entryPath.length === 0) return 'entryPath must be a non-empty string';
  if (req.argv !== undefined && (!Array.isArray(req.argv) || !req.argv.every((a) => typeof a === 'string'))) {
    return 'argv must be an array of strings';
  }
  if (req.env !== undefined) {
    if (!isPlainObject(req.env)) return 'env must be an object of strings';
    for (const [k, v] of Object.entries(req.env)) {
      if (typeof v !== 'string') return `env.${k} must be a string`;
    }
  }
  if (req.timeoutMs !== undefined && (!Number.isInteger(req.timeoutMs) || req.timeoutMs < 1 || req.timeoutMs > 86_400_000)) {
    return 'timeoutMs must be an integer between 1 and 86400000';
  }
  return null;
}

async function commandExec() {
  let req;
  try {
    req = JSON.parse(readStdin());
  } catch (e) {
    return fail('INVALID_INPUT', `stdin is not valid JSON: ${e.message}`, EXIT_INVALID);
  }
  const problem = checkExecRequest(req);
  if (problem) return fail('INVALID_INPUT', problem, EXIT_INVALID);
  let ws;
  try {
    ws = ZipWorkspace.fromZip(Buffer.from(req.zipBase64, 'base64'));
  } catch (e) {
    return fail('INVALID_INPUT', `zipBase64 is not a usable workspace archive: ${e.code ?? 'ERROR'}: ${e.message}`, EXIT_INVALID);
  }
  const options = {};
  if (req.argv !== undefined) options.argv = req.argv;
  if (req.env !== undefined) options.env = req.env;
  if (req.timeoutMs !== undefined) options.timeoutMs = req.timeoutMs;
  let result;
  try {
    result = await ws.exec(req.entryPath, options);
  } catch (e) {
    return fail('INVALID_INPUT', e.message, EXIT_INVALID);
  }
  if (!result.ok && result.error && result.error.code === 'INVALID_INPUT') {
    return fail('INVALID_INPUT', result.error.message, EXIT_INVALID);
  }
  const out = {
    ok: result.ok,
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: result.exitCode,
    zipBase64: ws.toZip().toString('base64'),
  };
  if (result.error) out.error = result.error;
  process.stdout.write(JSON.stringify(out) + '\n');
  if (!result.ok) process.exitCode = EXIT_FAILED;
}

function main(argv) {
  const [command] = argv;
  if (command === 'run') return commandRun();
  if (command === 'exec') return commandExec();
  if (command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  fail('INVALID_INPUT', command ? `unknown command '${command}'. ${USAGE}` : USAGE, EXIT_INVALID);
}

Promise.resolve(main(process.argv.slice(2))).catch((e) => {
  fail('INTERNAL', `quickrealm bug: ${e && e.message ? e.message : String(e)}`, EXIT_FAILED);
});
