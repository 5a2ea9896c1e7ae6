#!/usr/bin/env node
'use strict';
// quickrealm command-line tool.
//
//   quickrealm run   < request.json   deny-by-default snippet runner (JSON on stdin)
//
// `run` reads {"source", "input", "limits": {"wall_ms", "output_kb"}} and answers with
// {"output"} on stdout (exit 0), or a one-line {"code","message"} on stderr (exit 1; exit 2 for
// malformed requests). On OUTPUT_LIMIT stdout still carries the truncated output; on TIMEOUT
// stdout stays empty.

const { runSync } = require('..');

const USAGE = 'usage: quickrealm run < request.json';
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

function describe(error) {
  if (error.code === 'EVAL_ERROR' && error.line) {
    return `${error.name}: ${error.message} (line ${error.line}, column ${error.column})`;
  }
  if (error.code === 'EVAL_ERROR') return `${error.name}: ${error.message}`;
  return error.message;
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
  return fail(code, describe(result.error), code === 'INVALID_INPUT' ? EXIT_INVALID : EXIT_FAILED);
}

function main(argv) {
  const [command] = argv;
  if (command === 'run') return commandRun();
  if (command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  fail('INVALID_INPUT', command ? `unknown command '${command}'. ${USAGE}` : USAGE, EXIT_INVALID);
}

main(process.argv.slice(2));
