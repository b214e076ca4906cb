//! One-line outputs of a Python model server, as its libraries write them: uvicorn's access
//! log, Python logging's default and asctime formats, loguru, vLLM, structlog and
//! python-json-logger JSON, transformers' and `warnings` messages, print() output. Each
//! function draws from the content generator (content-rng.ts), which the caller has seeded;
//! times inside the text are the entry's own.
import { decimal, hex, int, next, pick } from './content-rng.js';

// --- Times as Python writes them (the container's clock is UTC). ---------------------------

/** logging's `%(asctime)s`: `2026-11-25 16:30:01,123`. */
export function asctime(ms: number): string {
  return loguruTime(ms).replace('.', ',');
}

/** loguru's default time: `2026-11-25 16:30:01.123`. */
export function loguruTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
}

/** vLLM's `%m-%d %H:%M:%S`: `11-25 16:30:01`. */
export function vllmTime(ms: number): string {
  return loguruTime(ms).slice(5, 19);
}

/** structlog's `TimeStamper(fmt="iso", utc=True)`: `2026-11-25T16:30:01.123456Z`. */
function isoMicros(ms: number, ns: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}${String(Math.floor(ns / 1000)).padStart(3, '0')}Z`;
}

// --- uvicorn --------------------------------------------------------------------------------

const POST_ROUTES = ['/predict', '/v1/completions', '/v1/chat/completions', '/v1/embeddings', '/generate'];
const GET_ROUTES = ['/health', '/metrics', '/v1/models'];

/** An uvicorn access line (`INFO:     10.0.3.7:52344 - "POST /predict HTTP/1.1" 200 OK`); a random status unless given. */
export function accessLine(status?: string): string {
  const get = status === undefined && next() < 0.15;
  const route = get ? pick(GET_ROUTES) : pick(POST_ROUTES);
  const address = `10.0.${int(0, 9)}.${int(2, 254)}:${int(32768, 60999)}`;
  if (get) status = '200 OK';
  else if (status === undefined) {
    const s = next();
    status = s < 0.92 ? '200 OK' : s < 0.96 ? '422 Unprocessable Entity' : s < 0.98 ? '400 Bad Request' : s < 0.99 ? '429 Too Many Requests' : '503 Service Unavailable';
  }
  return `INFO:     ${address} - "${get ? 'GET' : 'POST'} ${route} HTTP/1.1" ${status}`;
}

const UVICORN_STARTED = ['Waiting for application startup.', 'Application startup complete.', 'Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)'];

/** uvicorn's start-up lines, in order. */
export function uvicornStartLine(index: number, pid: number): string {
  return `INFO:     ${index === 0 ? `Started server process [${pid}]` : UVICORN_STARTED[Math.min(index, 3) - 1]}`;
}

// --- The application's own logging ------------------------------------------------------

type Message = () => string;
const INFO_MESSAGES: readonly Message[] = [
  () => `batch ${int(1, 99_999)} done: ${int(1, 64)} prompts in ${decimal(250)} ms`,
  () => `cache hit ratio ${decimal(99)}% over ${int(100, 5000)} requests`,
  () => `loaded adapter lora-${int(1, 12)} in ${int(0, 3)}.${int(10, 99)} s`,
  () => `request ${hex(8)} served: ${int(1, 1024)} tokens`,
];
const DEBUG_MESSAGES: readonly Message[] = [
  () => `tokenized ${int(1, 4096)} tokens for request ${hex(8)}`,
  () => `kv cache blocks free=${int(0, 4096)} used=${int(0, 4096)}`,
];
const WARNING_MESSAGES: readonly Message[] = [
  () => `slow request ${hex(8)}: ${int(1000, 9000)} ms`,
  () => `queue depth ${int(33, 256)} above 32, shedding load`,
  () => `GPU memory at ${int(85, 99)}% on cuda:${int(0, 3)}`,
  () => `prompt truncated from ${int(4097, 9000)} to 4096 tokens`,
];
const ERROR_MESSAGES: readonly Message[] = [
  () => `upstream timeout after 30s for request ${hex(8)}`,
  () => `tokenizer service unreachable (attempt ${int(1, 5)}/5)`,
  () => `embedding backend returned 503 for batch ${int(1, 99_999)}`,
];
const LOGGERS = ['root', 'app', 'app.model', 'app.batcher', 'app.handlers'];
const LOGURU_SITES = ['app.batcher:flush:42', 'app.worker:run:88', 'app.main:predict:57', 'app.cache:evict:63'];

/** A level and its message: INFO most often, then WARNING, then DEBUG (or ERROR when asked). */
function levelAndMessage(error: boolean, loguru: boolean): [string, string] {
  if (error) return ['ERROR', pick(ERROR_MESSAGES)()];
  const u = next();
  if (u < 0.6) return [loguru && u < 0.08 ? 'SUCCESS' : 'INFO', pick(INFO_MESSAGES)()];
  if (u < 0.85) return ['WARNING', pick(WARNING_MESSAGES)()];
  return ['DEBUG', pick(DEBUG_MESSAGES)()];
}

/** logging.basicConfig's default: `WARNING:root:slow request 7f3a9c01: 1200 ms`. */
export function loggingDefaultLine(error = false): string {
  const [level, message] = levelAndMessage(error, false);
  return `${level}:${pick(LOGGERS)}:${message}`;
}

/** `%(asctime)s - %(name)s - %(levelname)s - %(message)s`. */
export function asctimeLine(ms: number, error = false): string {
  const [level, message] = levelAndMessage(error, false);
  return `${asctime(ms)} - ${pick(LOGGERS)} - ${level} - ${message}`;
}

/** loguru's default format: `2026-11-25 16:30:01.123 | WARNING  | app.batcher:flush:42 - …`. */
export function loguruLine(ms: number, error = false): string {
  const [level, message] = levelAndMessage(error, true);
  return `${loguruTime(ms)} | ${level.padEnd(8)} | ${pick(LOGURU_SITES)} - ${message}`;
}

// --- vLLM (its handler writes to stdout) -------------------------------------------------

const PROMPTS = ['Translate to French: "good morning"', 'Summarize the following text:', 'What is the capital of Peru?', 'Write a haiku about GPUs'];

/** A vLLM line: mostly the periodic metrics, some request and preemption lines. */
export function vllmLine(ms: number): string {
  const t = vllmTime(ms);
  const u = next();
  if (u < 0.75) {
    return (
      `INFO ${t} [metrics.py:455] Avg prompt throughput: ${decimal(2000)} tokens/s, Avg generation throughput: ${decimal(400)} tokens/s, ` +
      `Running: ${int(0, 32)} reqs, Swapped: 0 reqs, Pending: ${int(0, 8)} reqs, GPU KV cache usage: ${decimal(99)}%, CPU KV cache usage: 0.0%.`
    );
  }
  if (u < 0.88) return `INFO ${t} [engine.py:267] Added request chatcmpl-${hex(32)}.`;
  if (u < 0.95) {
    return `INFO ${t} [logger.py:39] Received request cmpl-${hex(32)}-0: prompt: '${pick(PROMPTS)}', params: SamplingParams(n=1, temperature=0.7, top_p=0.95, max_tokens=${int(16, 1024)}), prompt_token_ids: None, lora_request: None.`;
  }
  return (
    `WARNING ${t} [scheduler.py:1560] Sequence group ${int(1, 9999)} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. ` +
    `This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=${int(1, 50)}`
  );
}

// --- JSON lines ---------------------------------------------------------------------------

/** structlog's JSONRenderer (stdout): `{"event": "request done", "level": "info", "timestamp": …, "latency_ms": 12.3}`. */
export function structlogLine(ms: number, ns: number): string {
  const ts = isoMicros(ms, ns);
  const u = next();
  if (u < 0.7) {
    return `{"event": "request done", "level": "info", "timestamp": "${ts}", "latency_ms": ${decimal(900)}, "route": "${pick(POST_ROUTES)}", "tokens": ${int(1, 2048)}}`;
  }
  if (u < 0.85) return `{"event": "batch flushed", "level": "debug", "timestamp": "${ts}", "size": ${int(1, 64)}, "queue": ${int(0, 32)}}`;
  return `{"event": "retrying upstream", "level": "warning", "timestamp": "${ts}", "attempt": ${int(1, 5)}, "upstream": "http://tokenizer:9000"}`;
}

const EXC_INFO = JSON.stringify(
  'Traceback (most recent call last):\n  File "/app/main.py", line 57, in generate\n    out = pipe(req.prompt, max_new_tokens=req.max_tokens)\nRuntimeError: CUDA error: device-side assert triggered',
);

/** python-json-logger (stderr), with the trace context an OpenTelemetry filter adds; an ERROR carries `exc_info` in one line. */
export function jsonLoggerLine(ms: number): string {
  const head = `{"asctime": "${asctime(ms)}", `;
  const ids = `"trace_id": "${hex(32)}", "span_id": "${hex(16)}"`;
  const u = next();
  if (u < 0.75) return `${head}"levelname": "INFO", "name": "app", "message": "prediction served", ${ids}, "latency_ms": ${decimal(900)}, "batch_size": ${int(1, 64)}}`;
  if (u < 0.93) return `${head}"levelname": "WARNING", "name": "app.budget", "message": "token budget exceeded, truncating prompt", ${ids}, "tokens": ${int(4097, 9000)}}`;
  return `${head}"levelname": "ERROR", "name": "app.handlers", "message": "request failed", "exc_info": ${EXC_INFO}, ${ids}}`;
}

// --- print(), transformers, warnings -----------------------------------------------------

const UNICODE = ['推理完成 ✓ tokens=', 'modèle chargé — température 0.7, essai ', 'Ответ готов, токенов: ', 'emoji check 🚀🔥 ok #'];

/** print() output (stdout): progress sentences, unicode, characters JSON must escape, rarely a 9 KB dump. */
export function printLine(): string {
  const u = next();
  if (u < 0.4) return `Generated ${int(1, 1024)} tokens in ${int(0, 9)}.${int(10, 99)}s (${decimal(120)} tok/s)`;
  if (u < 0.7) return `batch=${int(1, 64)} seq_len=${int(16, 4096)} padding=${pick(['left', 'right'])}`;
  if (u < 0.85) return `${pick(UNICODE)}${int(0, 9999)}`;
  if (u < 0.98) return `{'prompt': 'say "hi"', 'path': 'C:\\models\\v${int(1, 9)}'}\ttook=${int(1, 900)}ms`;
  const head = 'logits: [';
  const chunk = `${int(0, 9)}.${int(1000, 9999)}, -${int(0, 9)}.${int(1000, 9999)}, `;
  return head + chunk.repeat(Math.ceil((9 * 1024 - head.length) / chunk.length)) + '...]';
}

/** transformers' one-line warnings (stderr, no level: its handler writes the bare message). */
export function transformersLine(): string {
  const u = next();
  if (u < 0.6) return 'Setting `pad_token_id` to `eos_token_id`:128001 for open-end generation.';
  if (u < 0.85) {
    return "The attention mask and the pad token id were not set. As a consequence, you may observe unexpected behavior. Please pass your input's `attention_mask` to obtain reliable results.";
  }
  return 'Starting from v4.46, the `logits` model output will have the same type as the model (except at train time, where it will always be FP32)';
}

const UNINITIALIZED = [
  ['LlamaForSequenceClassification', '/models/llama-3-8b', "['score.weight']"],
  ['BertForSequenceClassification', 'bert-base-uncased', "['classifier.bias', 'classifier.weight']"],
  ['RobertaForTokenClassification', 'roberta-base', "['classifier.bias', 'classifier.weight']"],
] as const;

/** transformers' two-line warning about weights a checkpoint lacks; `which` from the layout. */
export function someWeightsLine(index: number, which: number): string {
  const [arch, path, names] = UNINITIALIZED[which % UNINITIALIZED.length]!;
  return index === 0
    ? `Some weights of ${arch} were not initialized from the model checkpoint at ${path} and are newly initialized: ${names}`
    : 'You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.';
}

const SITE = '/usr/local/lib/python3.11/site-packages';
const WARNINGS = [
  [
    `${SITE}/torch/cuda/__init__.py:61: FutureWarning: The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you.`,
    '  import pynvml  # type: ignore[import]',
  ],
  [
    `${SITE}/transformers/generation/configuration_utils.py:628: UserWarning: \`do_sample\` is set to \`False\`. However, \`temperature\` is set to \`0.6\` -- this flag is only used in sample-based generation modes. You should set \`do_sample=True\` or unset \`temperature\`.`,
    '  warnings.warn(',
  ],
] as const;

/** A `warnings` message and the source line Python prints under it (two entries). */
export function warningsLine(index: number, which: number): string {
  return WARNINGS[which % WARNINGS.length]![index === 0 ? 0 : 1];
}

const BAR_WIDTH = 10;
const PARTIAL = ' ▏▎▍▌▋▊▉';

/** A tqdm bar at step `i` of `total` on stderr: `Loading checkpoint shards:  50%|█████     | 1/2 [00:01<00:01,  1.20s/it]`. */
export function tqdmLine(i: number, total: number, secondsPerStep: number): string {
  const pct = Math.floor((100 * i) / total);
  const exact = (BAR_WIDTH * i) / total;
  const full = Math.floor(exact);
  const bar = full >= BAR_WIDTH ? '█'.repeat(BAR_WIDTH) : '█'.repeat(full) + PARTIAL[Math.floor((exact - full) * 8)] + ' '.repeat(BAR_WIDTH - full - 1);
  const head = `Loading checkpoint shards: ${String(pct).padStart(3)}%|${bar}| ${i}/${total} `;
  if (i === 0) return `${head}[00:00<?, ?it/s]`;
  const clockOf = (s: number): string => `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
  return `${head}[${clockOf(i * secondsPerStep)}<${clockOf((total - i) * secondsPerStep)}, ${secondsPerStep.toFixed(2).padStart(5)}s/it]`;
}
