// Stateful components: public states a model edits by writing scripts. Render → the model
// writes a script → executeScript → render again.

import type { ErrorCode, SandboxErrorInfo } from '../native/binding.js';
import type { ToolSet } from '../tools/index.js';

/** The Standard Schema v1 interface (zod, valibot, arktype, ...), as far as components use it. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** Whether a state is shown to the model (`public`) or kept for the component's own logic (`private`). */
export declare const StateType: { readonly public: 'public'; readonly private: 'private' };
export type StateType = 'public' | 'private';

/**
 * What a script may do with a public state: `r` read (any write throws a TypeError naming the
 * state and "read-only"), `w` write (any read throws, naming the state and "write-only"; assign
 * whole top-level properties), `rw` both. The long names are aliases for ported code.
 */
export declare const Permission: {
  readonly r: 'r';
  readonly w: 'w';
  readonly rw: 'rw';
  readonly READ_ONLY: 'r';
  readonly WRITE_ONLY: 'w';
  readonly READ_AND_WRITE: 'rw';
};
export type Permission = 'r' | 'w' | 'rw';

/** A state the model sees as a global named after its key. */
export interface PublicState<T extends object = object> {
  type?: 'public';
  permission: Permission;
  /** Checks the state after a script changed it. Transforms and defaults are not applied: the state becomes what the script wrote. */
  schema: StandardSchemaV1;
  /** What happens when the state changes, told to the model. */
  sideEffectsDesc?: string;
  /** The state object itself (a valtio proxy, or any plain object or array); changes are applied to it in place. */
  state: T;
}

/** A state for the component's own logic; never visible to scripts. */
export interface PrivateState<T extends object = object> {
  type: 'private';
  schema?: StandardSchemaV1;
  state: T;
}

/** Limits and checks for scripts. */
export interface SecurityConfig {
  /** Wall clock per script in ms (`limits.timeoutMs`). Default 5000. */
  maxExecutionTime?: number;
  /** Heap cap in MiB (`limits.memoryBytes`). Default 100. */
  maxMemoryUsage?: number;
  /**
   * Deterministic step budget (`limits.steps`: loop iterations and function calls, counted by the
   * engine; `STEP_LIMIT`): the same script stops at the same point every time. The permission
   * checks of `r` and `w` states run as guest code and count too. Default 1,000,000.
   */
  maxIterations?: number;
  /**
   * The most values a state may hold after a script (`STATE_TOO_LARGE` past it): the state itself,
   * each array index, property value, Map key and value and Set item, counted as a tree, so an
   * object reached through several references counts at each place it is reached and a cycle
   * never fits. A state the host made larger may be edited but not grown. Default 100,000.
   */
  maxStateValues?: number;
  /**
   * The most bytes of text and binary data a state may hold after a script, counted like
   * `maxStateValues` (strings and keys at two bytes per UTF-16 unit, binary data at its length).
   * Default 16 MiB. Nesting is capped at 256 levels, the copy's own cap.
   */
  maxStateBytes?: number;
  /**
   * Text patterns (RegExp, or strings matched literally) that add a warning naming the pattern
   * when a script contains them. Text matching is not a boundary: the script still runs.
   */
  blockedPatterns?: (RegExp | string)[];
  /**
   * May refuse a script before it runs (`SCRIPT_REFUSED`): answer `false`, a reason string or
   * `{ ok: false, reason }` to refuse; `true`/`undefined`/`{ ok: true }` to accept. A validator
   * that throws refuses.
   */
  customValidator?: (script: string) => unknown;
  /** Accepted for ported code; only `false` is allowed (the realm has none of these). */
  allowNetwork?: false;
  allowFileSystem?: false;
  allowProcess?: false;
}

/**
 * `SCRIPT_REFUSED`: a customValidator refused the script. `WRITE_REFUSED`: a write-only state's
 * writes went past what a script may write (100,000 writes, 100,000 added array elements per
 * state) or could not apply (`list.length = -1`, a named key on an array); nothing changed.
 * `STATE_TOO_LARGE`: a state after the script went past `maxStateValues` or `maxStateBytes`
 * (shared references and cycles counted at each place they are reached) or 256 levels of
 * nesting; it is refused before any schema or diff walks it, and nothing changed.
 */
export type ComponentErrorCode = ErrorCode;

/** Why a script failed, located in the model's script. */
export interface ComponentErrorInfo extends Omit<SandboxErrorInfo, 'code'> {
  code: ComponentErrorCode;
}

/** One change to a state; `path` is the keys below the state (`['tags', 1]`). */
export interface StateChange {
  state: string;
  path: (string | number)[];
  before: unknown;
  after: unknown;
  op: 'add' | 'replace' | 'remove';
}

/** One schema issue; `path` comes from the Standard Schema issue path. */
export interface ValidationIssue {
  state: string;
  path: (string | number)[];
  message: string;
}

/** An RFC 6902 operation; paths are `/<state>/<key>/...` with `~` and `/` escaped. */
export type JsonPatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export interface ScriptExecutionResult {
  /** The script finished, every changed state passed its schema, and the changes were applied. */
  success: boolean;
  error?: ComponentErrorInfo;
  /**
   * Present when the script finished but a changed state failed its schema; nothing was applied.
   * At most 100 issues per state, each message at most 1,000 characters (longer ones end with
   * `… (n more characters)`); past that, one more issue with path `[]` says how many were not
   * listed (`"49900 more issues in tags_state are not listed"`).
   */
  validationErrors?: ValidationIssue[];
  /**
   * What was applied (empty unless `success`): at most 1,000 changes per state. A script that
   * changes more places is reported as one change per top-level key or index that differs, and
   * past that as one `replace` of the whole state with path `[]` (applied key by key to the
   * same live object). Either way the list is exact, only coarser.
   */
  changes: StateChange[];
  /** `changes` as RFC 6902 operations (a whole-state replace is `{ op: 'replace', path: '/<state>' }`). */
  patch: JsonPatchOp[];
  /**
   * Set when the script called attempt_completion and succeeded: the last call's result, as JSON
   * data copied when it was called (a function, symbol, bigint or cycle is a TypeError at the call).
   */
  completion?: { result: unknown };
  warnings: string[];
  logs: { level: 'log' | 'info' | 'warn' | 'error' | 'debug'; message: string }[];
  /** The run's statistics, plus the time spent diffing and validating changed states. */
  stats: { wallMs: number; heapBytes: number; hostCalls: number; steps: number; validationMs: number };
}

export interface ExecuteScriptOptions {
  /** Stops the script (`CANCELLED`, or `TIMEOUT` for `AbortSignal.timeout()`); nothing changes. */
  signal?: AbortSignal;
}

/**
 * A utility with a description and a TypeScript signature (`(text: string) => string` is written `(text: string): string`).
 * Scripts call it with copied data (not functions) and receive a copy of its result (or of what its promise resolves to).
 */
export interface ScriptUtility {
  // biome-ignore lint/complexity/noBannedTypes: utilities are any host function, as in ported code
  fn: Function;
  description?: string;
  /** Parameters and return type as in a declaration, e.g. `(text: string): string`. */
  signature?: string;
}

/** The name component code commonly uses for what getCommonTools() returns. */
export type CommonTools = ToolSet;

/** What a component, or a group of them, offers a model: rendering, scripts, completion, tools. */
export interface ScriptedStates {
  /** Names, permissions, side effects and current values (never of `w` states). */
  render(): Promise<string>;
  /**
   * render() followed by the script section: declarations derived from the schemas, current
   * values as initialisation code (so the state list above omits them), utilities with their
   * parameters, examples and how to complete.
   */
  renderWithScriptSection(): Promise<string>;
  /**
   * Runs a model's script. Never rejects for the script's failures (they are in the result);
   * rejects with an INVALID_INPUT TypeError when the component's own definition is wrong.
   */
  executeScript(script: string, options?: ExecuteScriptOptions): Promise<ScriptExecutionResult>;
  /** Records completion, as the attempt_completion tool does. */
  attemptCompletion(result: unknown): Promise<void>;
  /** The last recorded completion. */
  getCompletion(): { result: unknown } | undefined;
  /** execute_script and attempt_completion in the neutral tool form (convert with toOpenAITools, toAnthropicTools, ...). */
  getCommonTools(): ToolSet;
}

/**
 * The base class of components whose public states a model edits with scripts. Declare
 * `publicStates`, `privateStates` and `securityConfig` as fields; they are read at each call.
 * @example
 * class Search extends StatefulComponent {
 *   publicStates = { search_box_state: { type: StateType.public, permission: Permission.rw,
 *     schema: z.object({ search_pattern: z.string().max(300) }), state: proxy({ search_pattern: '' }) } };
 * }
 * const r = await new Search().executeScript('search_box_state.search_pattern = "shoes"');
 */
export declare class StatefulComponent {
  protected publicStates?: Record<string, PublicState>;
  protected privateStates?: Record<string, PrivateState>;
  protected securityConfig?: SecurityConfig;
  /** Host functions scripts may call, by global name. */
  // biome-ignore lint/complexity/noBannedTypes: utilities are any host function, as in ported code
  protected getScriptUtilities(): Record<string, Function | ScriptUtility>;
  /** Extra example lines for the script section. */
  protected getScriptExamples(): string[];
}
export interface StatefulComponent extends ScriptedStates {}

/** Several components edited by one script, committed together or not at all. */
export declare class ComponentGroup {
  private constructor();
  readonly components: StatefulComponent[];
}
/** One script over every component's states; limits are the strictest of the components'. */
export interface ComponentGroup extends ScriptedStates {}

/**
 * Composes components so one script edits all their states (state and utility names must not clash).
 * @example
 * const group = compose(search, cart);
 * await group.executeScript('search_box_state.search_pattern = "tea"; cart_state.items.push("tea")');
 */
export declare function compose(...components: StatefulComponent[]): ComponentGroup;
