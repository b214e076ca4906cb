//! A real OTLP logs receiver for tests, on 127.0.0.1 with an ephemeral port: HTTP
//! `/v1/logs` (protobuf or JSON, plain or gzip) or gRPC `LogsService/Export`. Requests are
//! decoded with protobufjs and @grpc/proto-loader from the OTLP `.proto` definitions in
//! test/fixtures/otlp-proto, independently of the exporters' own serializers (otlp-records.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { PROTO_ROOT, SERVICE_PROTO, TO_OBJECT, flatten, hexIdsToBase64, loadRoot, type Json, type ReceivedLogRecord } from './otlp-records.js';

/** One export request as received (failed ones included). */
export interface ReceivedRequest {
  /** Request headers (HTTP) or metadata (gRPC), names in lower case. */
  headers: Record<string, string>;
  /** `protobuf`, `json` or `grpc`. */
  encoding: 'protobuf' | 'json' | 'grpc';
  /** Whether the body was gzip-compressed (HTTP). */
  gzip: boolean;
  /** HTTP status (or the HTTP status a gRPC failure stands for) answered. */
  status: number;
  /** Number of `ResourceLogs` in the request (0 for failed requests). */
  resourceLogs: number;
  /** Number of log records in the request (0 for failed requests). */
  records: number;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** Base URL to configure as the sink's `endpoint` (`http://127.0.0.1:<port>`). */
  endpoint: string;
  /** Every record accepted so far, in arrival order. */
  logRecords(): ReceivedLogRecord[];
  /** Every request seen so far, accepted or failed. */
  requests(): ReceivedRequest[];
  /**
   * The next `count` requests fail with HTTP `status` (or the matching gRPC code) and are
   * not stored. With `retryAfterSeconds`, HTTP answers carry `Retry-After` and gRPC ones a
   * `google.rpc.RetryInfo`.
   */
  failNext(status: number, count: number, retryAfterSeconds?: number): void;
  /** Stops listening (connections are refused) or listens again on the same port. */
  setDown(down: boolean): Promise<void>;
  close(): Promise<void>;
}

/** HTTP status → gRPC status code used by `failNext` on the gRPC receiver. */
export function grpcCodeForHttpStatus(status: number): grpc.status {
  switch (status) {
    case 400:
    case 413:
      return grpc.status.INVALID_ARGUMENT;
    case 401:
      return grpc.status.UNAUTHENTICATED;
    case 403:
      return grpc.status.PERMISSION_DENIED;
    case 404:
      return grpc.status.NOT_FOUND;
    case 408:
    case 504:
      return grpc.status.DEADLINE_EXCEEDED;
    case 429:
      return grpc.status.RESOURCE_EXHAUSTED;
    case 500:
      return grpc.status.INTERNAL;
    case 501:
      return grpc.status.UNIMPLEMENTED;
    case 502:
    case 503:
      return grpc.status.UNAVAILABLE;
    default:
      return status >= 500 ? grpc.status.UNKNOWN : grpc.status.FAILED_PRECONDITION;
  }
}

const RPC_STATUS = protobuf.parse(`
  syntax = "proto3";
  package google.rpc;
  message Any { string type_url = 1; bytes value = 2; }
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }
`).root;

function retryInfoStatus(code: number, message: string, seconds: number): Buffer {
  const RetryInfo = RPC_STATUS.lookupType('google.rpc.RetryInfo');
  const Status = RPC_STATUS.lookupType('google.rpc.Status');
  const info = RetryInfo.encode(RetryInfo.fromObject({ retryDelay: { seconds, nanos: 0 } })).finish();
  return Buffer.from(Status.encode(Status.fromObject({ code, message, details: [{ typeUrl: 'type.googleapis.com/google.rpc.RetryInfo', value: info }] })).finish());
}

function headerMap(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Starts a receiver. */
export async function startOtlpReceiver(options: { protocol: 'http' | 'grpc' }): Promise<OtlpReceiver> {
  const root = await loadRoot();
  const state = {
    records: [] as ReceivedLogRecord[],
    requests: [] as ReceivedRequest[],
    failures: [] as Array<{ status: number; retryAfterSeconds: number | undefined }>,
  };
  const common = {
    logRecords: () => [...state.records],
    requests: () => [...state.requests],
    failNext(status: number, count: number, retryAfterSeconds?: number) {
      for (let i = 0; i < count; i++) state.failures.push({ status, retryAfterSeconds });
    },
  };
  return options.protocol === 'grpc' ? startGrpc(state, common) : startHttp(root, state, common);
}

type State = {
  records: ReceivedLogRecord[];
  requests: ReceivedRequest[];
  failures: Array<{ status: number; retryAfterSeconds: number | undefined }>;
};
type Common = Pick<OtlpReceiver, 'logRecords' | 'requests' | 'failNext'>;

async function startHttp(root: protobuf.Root, state: State, common: Common): Promise<OtlpReceiver> {
  const Request = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = headerMap(req.headers);
    const gzip = headers['content-encoding'] === 'gzip';
    const json = (headers['content-type'] ?? '').startsWith('application/json');
    const seen: ReceivedRequest = { headers, encoding: json ? 'json' : 'protobuf', gzip, status: 200, resourceLogs: 0, records: 0 };
    state.requests.push(seen);
    if (req.method !== 'POST' || req.url !== '/v1/logs') {
      seen.status = 404;
      res.writeHead(404).end();
      return;
    }
    const failure = state.failures.shift();
    if (failure) {
      seen.status = failure.status;
      res.writeHead(failure.status, failure.retryAfterSeconds !== undefined ? { 'Retry-After': String(failure.retryAfterSeconds) } : {}).end('receiver told to fail');
      return;
    }
    let decoded: Json;
    try {
      const raw = Buffer.concat(chunks);
      const body = gzip ? gunzipSync(raw) : raw;
      let message: protobuf.Message;
      if (json) {
        const request = JSON.parse(body.toString('utf8')) as Json;
        hexIdsToBase64(request);
        message = Request.fromObject(request);
      } else message = Request.decode(body);
      decoded = Request.toObject(message, TO_OBJECT) as Json;
    } catch (err) {
      seen.status = 400;
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`cannot decode: ${(err as Error).message}`);
      return;
    }
    const { records, resourceLogs } = flatten(decoded);
    seen.records = records.length;
    seen.resourceLogs = resourceLogs;
    state.records.push(...records);
    if (json) res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    else res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let down = false;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    ...common,
    endpoint: `http://127.0.0.1:${port}`,
    async setDown(value: boolean) {
      if (value === down) return;
      down = value;
      if (value) await stop();
      else await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    },
    async close() {
      if (!down) {
        down = true;
        await stop();
      }
    },
  };
}

async function startGrpc(state: State, common: Common): Promise<OtlpReceiver> {
  const definition = protoLoader.loadSync(SERVICE_PROTO, { includeDirs: [PROTO_ROOT], keepCase: false, longs: String, enums: Number, bytes: String, defaults: false, oneofs: true });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    opentelemetry: { proto: { collector: { logs: { v1: { LogsService: grpc.ServiceClientConstructor } } } } };
  };
  const service = pkg.opentelemetry.proto.collector.logs.v1.LogsService.service;
  const impl: grpc.UntypedServiceImplementation = {
    Export(call: grpc.ServerUnaryCall<Json, Json>, callback: grpc.sendUnaryData<Json>) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(call.metadata.getMap())) headers[k.toLowerCase()] = Buffer.isBuffer(v) ? v.toString('base64') : String(v);
      const seen: ReceivedRequest = { headers, encoding: 'grpc', gzip: false, status: 200, resourceLogs: 0, records: 0 };
      state.requests.push(seen);
      const failure = state.failures.shift();
      if (failure) {
        seen.status = failure.status;
        const code = grpcCodeForHttpStatus(failure.status);
        const metadata = new grpc.Metadata();
        if (failure.retryAfterSeconds !== undefined) metadata.set('grpc-status-details-bin', retryInfoStatus(code, 'receiver told to fail', failure.retryAfterSeconds));
        callback({ code, details: 'receiver told to fail', metadata });
        return;
      }
      const { records, resourceLogs } = flatten(call.request);
      seen.records = records.length;
      seen.resourceLogs = resourceLogs;
      state.records.push(...records);
      callback(null, {});
    },
  };
  const bind = async (port: number): Promise<{ server: grpc.Server; port: number }> => {
    const server = new grpc.Server();
    server.addService(service, impl);
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    return { server, port: bound };
  };
  let current: grpc.Server | undefined;
  const first = await bind(0);
  current = first.server;
  const port = first.port;
  const stop = () => {
    current?.forceShutdown();
    current = undefined;
  };
  return {
    ...common,
    endpoint: `http://127.0.0.1:${port}`,
    async setDown(value: boolean) {
      if (value) stop();
      else if (!current) current = (await bind(port)).server;
    },
    async close() {
      stop();
    },
  };
}
