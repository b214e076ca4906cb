//! Turns journal entries and processed records into OpenTelemetry log records, exact to
//! the nanosecond, with one shared `Resource` object per model so the exporter groups a
//! mixed batch into one `ResourceLogs` per model.
import { SeverityNumber, type HrTime } from '@opentelemetry/api';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { SeverityText } from './config.js';
import type { SinkEntry } from '../contract.js';
import { plainRecord } from '../../records/entry.js';
import { describeError } from '../../errors.js';
import { severityNumber } from '../../processing/level-words.js';
import { recordAttributes, spanContextOf } from './attributes.js';

export { ATTR_LOG_IOSTREAM, ATTR_MODEL_ID, ATTR_RECORD_LINES, ATTR_RECORD_TIME_END } from './attributes.js';

/** Resource attribute that names the service; defaults to the model id. */
export const ATTR_SERVICE_NAME = 'service.name';

const NS_PER_S = 1_000_000_000n;

const SEVERITY_NUMBERS: Readonly<Record<SeverityText, SeverityNumber>> = {
  TRACE: SeverityNumber.TRACE,
  DEBUG: SeverityNumber.DEBUG,
  INFO: SeverityNumber.INFO,
  WARN: SeverityNumber.WARN,
  ERROR: SeverityNumber.ERROR,
  FATAL: SeverityNumber.FATAL,
};

/** Splits epoch nanoseconds into `[seconds, nanoseconds]` without going through a `number` of ns. */
export function nsToHrTime(ns: bigint): HrTime {
  let seconds = ns / NS_PER_S;
  let nanos = ns % NS_PER_S;
  if (nanos < 0n) {
    seconds -= 1n;
    nanos += NS_PER_S;
  }
  return [Number(seconds), Number(nanos)];
}

/** Epoch milliseconds (possibly fractional) as `[seconds, nanoseconds]`. */
export function msToHrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.max(0, Math.round((ms - seconds * 1000) * 1e6)));
  return [seconds, nanos];
}

/** How entries become records: resource attributes and the stream → severity mapping. */
export interface RecordMappingOptions {
  /** Resource attributes of every record (over the default `service.name`). */
  resource: Readonly<Record<string, string>>;
  /** Per-model resource attributes, over `resource`. */
  modelResources?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Severity text per stream, for records without a detected level; streams not listed carry none. */
  severity?: Readonly<Record<string, SeverityText>>;
}

/** Builds log records; keeps one `Resource` object per model for the life of the sink. */
export class RecordMapper {
  private readonly resources = new Map<string, Resource>();
  private readonly scope: ReadableLogRecord['instrumentationScope'] = { name: 'model-log-shipper' };

  constructor(private readonly options: RecordMappingOptions) {}

  /** The resource of a model: `service.name` = model id, then the sink's, then the model's attributes. */
  resourceOf(modelId: string): Resource {
    let resource = this.resources.get(modelId);
    if (!resource) {
      resource = resourceFromAttributes({
        [ATTR_SERVICE_NAME]: modelId,
        ...this.options.resource,
        ...this.options.modelResources?.get(modelId),
      });
      this.resources.set(modelId, resource);
    }
    return resource;
  }

  /**
   * One record per entry, in order. An entry that cannot be mapped whole is mapped as plain
   * text (its JSON fields left out); one that cannot be mapped even so is left out and given
   * to `setAside` (without it, the error is thrown).
   */
  toRecords(entries: readonly SinkEntry[], setAside?: (entry: SinkEntry, reason: string) => void): ReadableLogRecord[] {
    const out: ReadableLogRecord[] = [];
    for (const e of entries) {
      try {
        out.push(this.toRecord(e));
      } catch {
        try {
          out.push(this.toRecord(plainRecord(e)));
        } catch (err) {
          if (setAside === undefined) throw err;
          setAside(e, `the record cannot be mapped to an OTLP log record: ${describeError(err)}`);
        }
      }
    }
    return out;
  }

  /**
   * A record with a level has its severity number and the level as written; one without
   * gets its stream's severity, if any. The body is a JSON line's message, or else `log`;
   * a lone surrogate in it becomes U+FFFD (OTLP strings are UTF-8, and a receiver refuses a
   * request holding bytes that are not).
   */
  private toRecord(entry: SinkEntry): ReadableLogRecord {
    let severityText: string | undefined;
    let severity: SeverityNumber | undefined;
    if (entry.level !== undefined) {
      severityText = entry.levelText ?? entry.level.toUpperCase();
      severity = severityNumber(entry.level) as SeverityNumber;
    } else {
      const byStream = this.options.severity?.[entry.stream];
      if (byStream !== undefined) {
        severityText = byStream;
        severity = SEVERITY_NUMBERS[byStream];
      }
    }
    const spanContext = spanContextOf(entry);
    return {
      hrTime: nsToHrTime(entry.timeNs),
      hrTimeObserved: msToHrTime(entry.fetchedAtMs),
      body: (entry.message ?? entry.log).toWellFormed(),
      severityText,
      severityNumber: severity,
      attributes: recordAttributes(entry),
      droppedAttributesCount: 0,
      resource: this.resourceOf(entry.modelId),
      instrumentationScope: this.scope,
      ...(spanContext ? { spanContext } : {}),
    };
  }
}
