//! The simulated service's side of HTTP: reading a request, the checks both operations make
//! first (content type, token, a JSON object naming a known model), and writing an answer,
//! whole or cut short.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelLog } from './store.js';

/** An answer to one request. */
export interface Answer {
  status: number;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Side effects of a complete answer; skipped when the answer is cut short. */
  commit?: () => void;
}

/** The token a request must carry in `Authorization`, and how a request for an unknown model is answered. */
export interface RequestRules {
  token: string;
  /** Also accept `Bearer <token>`. */
  acceptBearer: boolean;
  unknownModelStatus: UnknownModelStatus;
}

const MAX_BODY_BYTES = 1 << 20;

/** The service's error answer: `{"status":"error","details":…}`. */
export function errorAnswer(status: number, details: string, headers?: Record<string, string>): Answer {
  return { status, body: JSON.stringify({ status: 'error', details }), ...(headers ? { headers } : {}) };
}

/** The request body as text, or the 413 answer for one over 1 MiB (the connection is then closed). */
export async function readBody(req: IncomingMessage, res: ServerResponse): Promise<string | Answer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      res.setHeader('connection', 'close');
      return errorAnswer(413, 'Request body too large');
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

/** How the service answers a `model_id` it does not know: 404 `Model not found`, or 400 with details naming the id. */
export type UnknownModelStatus = 400 | 404;

/**
 * The checks both operations make first (JSON content type, the token, a JSON object as
 * body, a known model in `model_id`): the body and its model, or the answer that says what
 * is wrong.
 */
export function checkRequest(req: IncomingMessage, raw: string, rules: RequestRules, models: ReadonlyMap<string, ModelLog>): { body: Record<string, unknown>; model: ModelLog } | Answer {
  const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/json') return errorAnswer(415, 'Content-Type must be application/json');
  const auth = req.headers.authorization;
  if (auth !== rules.token && !(rules.acceptBearer && auth === `Bearer ${rules.token}`)) return errorAnswer(401, 'Invalid token');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return errorAnswer(400, 'Request body must be valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return errorAnswer(400, 'Request body must be a JSON object');
  const id = body.model_id;
  if (typeof id !== 'string' || id === '') return errorAnswer(400, 'model_id must be a non-empty string');
  const model = models.get(id);
  if (model) return { body, model };
  return rules.unknownModelStatus === 404 ? errorAnswer(404, 'Model not found') : errorAnswer(400, `Model ${id} does not exist in this workspace`);
}

/** Writes an answer whole; `truncated`: announces it whole, writes half of it, then destroys the socket. */
export function send(res: ServerResponse, a: Answer, truncated = false): void {
  // Encoding once is cheaper than measuring the string and then encoding it on write.
  const buf = Buffer.from(a.body);
  res.writeHead(a.status, { 'content-type': a.contentType ?? 'application/json', 'content-length': buf.length, ...a.headers });
  if (truncated) res.write(buf.subarray(0, Math.floor(buf.length / 2)), () => res.socket?.destroy());
  else res.end(buf);
}
