//! Sinks loaded from a JavaScript module (`type: module`): the module is imported from its
//! resolved path, its factory is called within the sink's timeout, and what it returns is
//! checked to be a sink before the daemon uses it.
import { pathToFileURL } from 'node:url';
import { ConfigError, describeError } from '../../errors.js';
import type { Sink, SinkContext, SinkFactory } from '../contract.js';
import { TIMED_OUT, within } from '../../time/bounded.js';
import { formatDuration } from '../../time/duration.js';

/**
 * Imports the module at `path` and builds its sink with `options` and `context`. Throws a
 * ConfigError naming the sink when the module cannot be loaded, exports no factory, or its
 * factory does not return a sink within `timeoutMs`.
 */
export async function buildModuleSink(path: string, options: Record<string, unknown>, context: SinkContext, timeoutMs: number): Promise<Sink> {
  let mod: { default?: unknown; createSink?: unknown };
  try {
    mod = (await import(pathToFileURL(path).href)) as typeof mod;
  } catch (err) {
    throw new ConfigError(`sink ${context.name}: cannot load module ${path}: ${describeError(err)}`, [`sinks.${context.name}.path: cannot load ${path}`], { cause: err });
  }
  const factory = (typeof mod.default === 'function' ? mod.default : mod.createSink) as SinkFactory | undefined;
  if (typeof factory !== 'function') {
    throw new ConfigError(`sink ${context.name}: module ${path} exports no sink factory`, [
      `sinks.${context.name}.path: ${path} must export a default function (or createSink) returning { healthcheck, send, flush, close }`,
    ]);
  }
  // Bounded like the sink's calls: a factory that never returns would hold a reload forever.
  const sink = await within(() => factory(options, context), timeoutMs);
  if (sink === TIMED_OUT) {
    throw new ConfigError(`sink ${context.name}: module ${path} did not return a sink within ${formatDuration(timeoutMs)}`, [
      `sinks.${context.name}.path: the factory of ${path} did not return a sink within ${formatDuration(timeoutMs)} (sinks[].timeout); make it return, or raise the timeout`,
    ]);
  }
  if (sink === null || typeof sink !== 'object') {
    throw new ConfigError(`sink ${context.name}: module ${path} returned no sink object`, [`sinks.${context.name}.path: the factory of ${path} must return { healthcheck, send, flush, close }`]);
  }
  for (const method of ['healthcheck', 'send', 'flush', 'close'] as const) {
    if (typeof (sink as unknown as Record<string, unknown>)[method] !== 'function') {
      throw new ConfigError(`sink ${context.name}: module ${path} returned a sink without ${method}()`, [`sinks.${context.name}.path: the sink must implement ${method}()`]);
    }
  }
  return sink;
}
