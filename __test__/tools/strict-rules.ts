// OpenAI strict mode's rules for a function's parameters, as its structured outputs
// documentation states them, checked at every level of a converted schema.
import type { JsonSchema } from '../../lib/index.js';

/** Keywords OpenAI's strict mode accepts (its structured outputs documentation's list). */
const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'anyOf',
  '$ref',
  '$defs',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/** Checks the strict-mode rules at every level; returns the problems found. */
export function strictProblems(schema: JsonSchema, where: string, out: string[] = []): string[] {
  for (const key of Object.keys(schema)) {
    if (!STRICT_KEYWORDS.has(key)) out.push(`${where}: keyword ${key} is not allowed in strict mode`);
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.includes('object') || schema.properties) {
    if (schema.additionalProperties !== false) out.push(`${where}: additionalProperties must be false`);
    const keys = Object.keys(schema.properties ?? {});
    const required = schema.required ?? [];
    if (keys.length !== required.length || !keys.every((k) => required.includes(k))) {
      out.push(`${where}: every property must be required (${keys.join(',')} vs ${required.join(',')})`);
    }
    for (const [k, v] of Object.entries(schema.properties ?? {})) strictProblems(v, `${where}.${k}`, out);
  }
  if (schema.items) strictProblems(schema.items, `${where}[]`, out);
  for (const branch of schema.anyOf ?? []) strictProblems(branch, `${where}|`, out);
  return out;
}

/** Whether the schema allows null. */
export const nullable = (s: JsonSchema) =>
  (Array.isArray(s.type) && s.type.includes('null')) || (s.anyOf ?? []).some((b) => b.type === 'null');
