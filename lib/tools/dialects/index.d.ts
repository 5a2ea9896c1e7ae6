// The editor dialects' module; its declarations live with the other tool sets' in ../index.d.ts.
import type { EditorDialect } from '../index.js';

export type { EditorDialect, EditorToolsOptions } from '../index.js';
export { editorTools } from '../index.js';

/** The dialect names, in a frozen array. */
export const DIALECTS: readonly EditorDialect[];
