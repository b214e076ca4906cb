//! Turns journal entries into OpenTelemetry log records, exact to the nanosecond, with
//! one shared `Resource` object per model so the exporter groups a mixed batch into one
//! `ResourceLogs` per model.
import { SeverityNumber, type HrTime } from '@opentelemetry/api';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { SeverityText } from './config.js';
import type { SinkEntry } from '../contract.js';

/** Attribute carrying the stream (`stdout`, `stderr`, …), from the semantic conventions. */
export const ATTR_LOG_IOSTREAM = 'log.iostream';
/** Attribute carrying the model id. */
export const ATTR_MODEL_ID = 'mls.model_id';
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
  /** Severity text per stream; streams not listed carry no severity. */
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

  /** One record per entry, in order. */
  toRecords(entries: readonly SinkEntry[]): ReadableLogRecord[] {
    return entries.map((e) => this.toRecord(e));
  }

  private toRecord(entry: SinkEntry): ReadableLogRecord {
    const severityText = this.options.severity?.[entry.stream];
    return {
      hrTime: nsToHrTime(entry.timeNs),
      hrTimeObserved: msToHrTime(entry.fetchedAtMs),
      body: entry.log,
      severityText,
      severityNumber: severityText === undefined ? undefined : SEVERITY_NUMBERS[severityText],
      attributes: { [ATTR_LOG_IOSTREAM]: entry.stream, [ATTR_MODEL_ID]: entry.modelId },
      droppedAttributesCount: 0,
      resource: this.resourceOf(entry.modelId),
      instrumentationScope: this.scope,
    };
  }
}
