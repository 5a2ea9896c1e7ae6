/** How quickrealm reports to OpenTelemetry (see `configureTelemetry`). */
export interface TelemetryOptions {
  /**
   * Report spans and metrics while a tracer or meter provider is registered with
   * `@opentelemetry/api`. `false` switches quickrealm's instrumentation off.
   * @defaultValue true
   */
  enabled?: boolean;
  /**
   * Also record what models wrote and read: a run's source, a turn's code, error messages, the
   * arguments and results of host operations and tool calls (`gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). Off by default: spans then carry only kinds, codes, limits and stats.
   * @defaultValue false
   */
  recordContent?: boolean;
}

/**
 * Sets how quickrealm reports to OpenTelemetry and returns the settings in force; options left
 * out keep their value. Spans and metrics go to the providers registered with
 * `@opentelemetry/api` (an optional peer dependency); without the package, or while no provider
 * is registered, nothing is recorded. Unknown options or values that are not booleans throw a
 * TypeError with code INVALID_INPUT.
 */
export function configureTelemetry(options?: TelemetryOptions): Required<TelemetryOptions>;
