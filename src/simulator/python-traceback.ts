//! A traceback episode of a Python model server, one entry per line as a container's log
//! driver splits it: the `logger.exception` line at ERROR level, `Traceback (most recent call
//! last):`, the frames (3.11 caret lines under some), the exception line, sometimes a chained
//! exception before it (blank lines around the joiner), and sometimes uvicorn's 500 access line
//! after it (not part of the episode). The frames are real stacks of uvicorn, FastAPI,
//! transformers, torch and vLLM, so their text is fixed; only messages vary. The exceptions are
//! the mix such a server raises: CUDA out of memory most often, then a request without
//! `input_ids`, a body that is not JSON, bad inputs, with a `KeyError`, a `JSONDecodeError`
//! or a connection error chained before some.
import { decimal, hex, int, next, pick, reseed } from './content-rng.js';
import { accessLine, asctime, loguruTime, vllmTime } from './python-lines.js';

interface Frame {
  file: string;
  code: string;
  caret: string | undefined;
}

interface Stack {
  frames: readonly Frame[];
  /** Fewest innermost frames shown (a handler may catch higher up). */
  minFrames: number;
  /** The exception line; draws from the content generator. */
  exception: () => string;
}

const SITE = '/usr/local/lib/python3.11/site-packages';
const LIB = '/usr/local/lib/python3.11';

/** A frame; `under` is the expression 3.11 underlines with carets (the code's text from it to the end when `true`). */
function frame(path: string, line: number, fn: string, code: string, under?: string | true, marks?: string): Frame {
  let caret: string | undefined;
  if (under !== undefined) {
    const expr = under === true ? code : under;
    const at = code.indexOf(expr);
    if (at < 0) throw new Error(`caret expression not in ${code}`);
    caret = `    ${' '.repeat(at)}${marks ?? '^'.repeat(expr.length)}`;
  }
  return { file: `  File "${path}", line ${line}, in ${fn}`, code: `    ${code}`, caret };
}

const TORCH_CALL = [
  frame(`${SITE}/torch/nn/modules/module.py`, 1736, '_wrapped_call_impl', 'return self._call_impl(*args, **kwargs)', 'self._call_impl(*args, **kwargs)'),
  frame(`${SITE}/torch/nn/modules/module.py`, 1747, '_call_impl', 'return forward_call(*args, **kwargs)', 'forward_call(*args, **kwargs)'),
];

function oom(): string {
  if (next() < 0.3) {
    return `RuntimeError: CUDA out of memory. Tried to allocate ${int(1, 8)}.${int(10, 99)} GiB (GPU ${int(0, 3)}; 23.69 GiB total capacity; ${int(18, 22)}.${int(10, 99)} GiB already allocated; ${int(100, 999)}.${int(10, 99)} MiB free; ${int(20, 23)}.${int(10, 50)} GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF`;
  }
  return (
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${int(1, 8)}.${int(10, 99)} GiB. GPU ${int(0, 3)} has a total capacity of 23.64 GiB of which ${int(100, 999)}.${int(10, 99)} MiB is free. ` +
    `Including non-PyTorch memory, this process has ${int(20, 23)}.${int(10, 50)} GiB memory in use. Of the allocated memory ${int(18, 22)}.${int(10, 99)} GiB is allocated by PyTorch, and ${decimal(900)} MiB is reserved by PyTorch but unallocated. ` +
    'If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)'
  );
}

/** `json.loads` down to where it raises. */
const JSON_LOADS = [
  frame(`${LIB}/json/__init__.py`, 346, 'loads', 'return _default_decoder.decode(s)', '_default_decoder.decode(s)'),
  frame(`${LIB}/json/decoder.py`, 337, 'decode', 'obj, end = self.raw_decode(s, idx=_w(s, 0).end())', 'self.raw_decode(s, idx=_w(s, 0).end())'),
  frame(`${LIB}/json/decoder.py`, 355, 'raw_decode', 'raise JSONDecodeError("Expecting value", s, err.value) from None'),
];

function jsonDecodeError(): string {
  const at = int(0, 79);
  return `json.decoder.JSONDecodeError: Expecting value: line 1 column ${at + 1} (char ${at})`;
}

const ASGI_GENERATE: Stack = {
  frames: [
    frame(`${SITE}/uvicorn/protocols/http/httptools_impl.py`, 409, 'run_asgi', 'result = await app(  # type: ignore[func-returns-value]', 'await app(  # type: ignore[func-returns-value]'),
    frame(`${SITE}/uvicorn/middleware/proxy_headers.py`, 60, '__call__', 'return await self.app(scope, receive, send)', 'await self.app(scope, receive, send)'),
    frame(`${SITE}/fastapi/applications.py`, 1054, '__call__', 'await super().__call__(scope, receive, send)'),
    frame(`${SITE}/starlette/routing.py`, 74, 'app', 'response = await f(request)', 'await f(request)'),
    frame(`${SITE}/fastapi/routing.py`, 212, 'run_endpoint_function', 'return await dependant.call(**values)', 'await dependant.call(**values)'),
    frame('/app/main.py', 57, 'generate', 'out = pipe(req.prompt, max_new_tokens=req.max_tokens)', 'pipe(req.prompt, max_new_tokens=req.max_tokens)'),
    frame(`${SITE}/transformers/pipelines/text_generation.py`, 272, '__call__', 'return super().__call__(text_inputs, **kwargs)', 'super().__call__(text_inputs, **kwargs)'),
    frame(`${SITE}/transformers/generation/utils.py`, 2215, 'generate', 'result = self._sample(', 'self._sample('),
    ...TORCH_CALL,
    frame('/app/model.py', 41, 'forward', 'scores = torch.matmul(q, k.transpose(-2, -1)) / self.scale', 'torch.matmul(q, k.transpose(-2, -1))'),
  ],
  minFrames: 3,
  exception: oom,
};

const VLLM_ENGINE: Stack = {
  frames: [
    frame(`${SITE}/vllm/engine/async_llm_engine.py`, 845, 'run_engine_loop', 'result = task.result()', 'task.result()'),
    frame(`${SITE}/vllm/engine/async_llm_engine.py`, 768, 'engine_step', 'request_outputs = await self.engine.step_async(virtual_engine)', 'await self.engine.step_async(virtual_engine)'),
    frame(`${SITE}/vllm/engine/async_llm_engine.py`, 354, 'step_async', 'outputs = await self.model_executor.execute_model_async(', 'await self.model_executor.execute_model_async('),
    frame(`${SITE}/vllm/worker/worker_base.py`, 343, 'execute_model', 'output = self.model_runner.execute_model(', 'self.model_runner.execute_model('),
    frame(`${SITE}/torch/utils/_contextlib.py`, 116, 'decorate_context', 'return func(*args, **kwargs)', 'func(*args, **kwargs)'),
    frame(`${SITE}/vllm/worker/model_runner.py`, 1547, 'execute_model', 'hidden_or_intermediate_states = model_executable(', 'model_executable('),
    ...TORCH_CALL,
    frame(`${SITE}/vllm/model_executor/models/llama.py`, 566, 'forward', 'model_output = self.model(input_ids, positions, kv_caches,', 'self.model(input_ids, positions, kv_caches,'),
  ],
  minFrames: 4,
  exception: oom,
};

const APP_STACKS: readonly Stack[] = [
  {
    frames: [
      frame('/app/server.py', 88, 'predict', 'scores = model.score(batch)', 'model.score(batch)'),
      frame('/app/model.py', 41, 'score', 'raise ValueError(f"batch too large: {len(batch)} > {self.max_batch}")'),
    ],
    minFrames: 2,
    exception: () => `ValueError: batch too large: ${int(33, 128)} > 32`,
  },
  {
    frames: [
      frame('/app/server.py', 102, 'predict', 'tps = tokens_per_second(stats)', 'tokens_per_second(stats)'),
      frame('/app/metrics.py', 14, 'tokens_per_second', 'return stats["tokens"] / stats["elapsed"]', 'stats["tokens"] / stats["elapsed"]', '~~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~'),
    ],
    minFrames: 1,
    exception: () => 'ZeroDivisionError: division by zero',
  },
  {
    frames: [
      frame('/app/server.py', 71, 'predict', 'inputs = tokenizer(req.prompt, return_tensors="pt").to(device)', 'tokenizer(req.prompt, return_tensors="pt")'),
      frame(`${SITE}/transformers/tokenization_utils_base.py`, 2877, '__call__', 'encodings = self._call_one(text=text, text_pair=text_pair, **all_kwargs)', 'self._call_one(text=text, text_pair=text_pair, **all_kwargs)'),
      frame(`${SITE}/transformers/tokenization_utils_base.py`, 2937, '_call_one', 'raise ValueError('),
    ],
    minFrames: 2,
    exception: () =>
      'ValueError: text input must be of type `str` (single example), `List[str]` (batch or single pretokenized example) or `List[List[str]]` (batch of pretokenized examples).',
  },
  {
    frames: [
      frame('/app/server.py', 64, 'predict', 'ids = features["input_ids"].to(device)', 'features["input_ids"]', '~~~~~~~~^^^^^^^^^^^^^'),
      frame(`${SITE}/transformers/tokenization_utils_base.py`, 255, '__getitem__', 'return self.data[item]', 'self.data[item]', '~~~~~~~~~^^^^^^'),
    ],
    minFrames: 1,
    exception: () => "KeyError: 'input_ids'",
  },
  {
    frames: [frame('/app/server.py', 51, 'predict', 'payload = json.loads(await request.body())', 'json.loads(await request.body())'), ...JSON_LOADS],
    minFrames: 2,
    exception: jsonDecodeError,
  },
];

const DIRECT_CAUSE = 'The above exception was the direct cause of the following exception:';
const DURING_HANDLING = 'During handling of the above exception, another exception occurred:';

/** Chained causes, each with the joiner Python prints after it. */
const CAUSES: readonly (Stack & { joiner: string })[] = [
  {
    frames: [frame('/app/cache.py', 30, 'get', 'return self._store[key]', 'self._store[key]', '~~~~~~~~~~~^^^^^')],
    minFrames: 1,
    exception: () => `KeyError: '${pick(['llama-3-8b', 'mistral-7b', 'qwen2-7b'])}'`,
    joiner: DURING_HANDLING,
  },
  {
    frames: [frame('/app/tokenizer.py', 19, 'load', 'return json.loads(raw)', 'json.loads(raw)'), ...JSON_LOADS],
    minFrames: 2,
    exception: jsonDecodeError,
    joiner: DIRECT_CAUSE,
  },
  {
    frames: [
      frame('/app/client.py', 22, 'embed', 'r = self.http.post(self.url, json={"input": texts}, timeout=5)', 'self.http.post(self.url, json={"input": texts}, timeout=5)'),
      frame(`${SITE}/httpx/_transports/default.py`, 118, 'map_httpcore_exceptions', 'raise mapped_exc(message) from exc'),
    ],
    minFrames: 1,
    exception: () => 'httpx.ConnectError: [Errno 111] Connection refused',
    joiner: DIRECT_CAUSE,
  },
];

/** The heading kinds: uvicorn, logging's default format, asctime format, loguru, vLLM. */
const HEADINGS = 5;
const VLLM_HEADING = 4;

/** The shape of the episode last laid out; reused, so that laying out allocates nothing. */
export const episode = {
  heading: 0,
  /** Index in CAUSES, or -1. */
  cause: -1,
  causeFrames: 0,
  main: undefined as Stack | undefined,
  mainFrames: 0,
  trailer: false,
  /** Lines of the episode itself (heading to the last exception line). */
  lines: 0,
};

function tracebackLines(stack: Stack, frames: number): number {
  let n = 2;
  for (let i = stack.frames.length - frames; i < stack.frames.length; i++) n += stack.frames[i]!.caret === undefined ? 2 : 3;
  return n;
}

/** Draws the shape of an episode from the content generator; returns its lines including the trailer. */
export function layoutEpisode(): number {
  const e = episode;
  e.heading = int(0, HEADINGS - 1);
  if (e.heading === VLLM_HEADING) {
    e.main = VLLM_ENGINE;
    e.cause = -1;
  } else {
    e.main = e.heading !== 3 && next() < 0.4 ? ASGI_GENERATE : pick(APP_STACKS);
    e.cause = next() < 0.3 ? int(0, CAUSES.length - 1) : -1;
  }
  e.mainFrames = int(e.main.minFrames, e.main.frames.length);
  e.lines = 1 + tracebackLines(e.main, e.mainFrames);
  if (e.cause >= 0) {
    const c = CAUSES[e.cause]!;
    e.causeFrames = int(c.minFrames, c.frames.length);
    e.lines += tracebackLines(c, e.causeFrames) + 3;
  }
  e.trailer = e.heading === 0 || (e.heading <= 2 && next() < 0.5);
  return e.lines + (e.trailer ? 1 : 0);
}

/** stdout for vLLM (its handler's stream), stderr for the others. */
export function episodeStream(): string {
  return episode.heading === VLLM_HEADING ? 'stdout' : 'stderr';
}

/** Line `part` of the episode last laid out for `seed`. */
export function episodeLine(seed: number, part: number, ms: number): string {
  const e = episode;
  if (part === 0) {
    reseed(seed + 0x51ed27);
    return headingLine(e.heading, ms);
  }
  let p = part - 1;
  if (e.cause >= 0) {
    const c = CAUSES[e.cause]!;
    const n = tracebackLines(c, e.causeFrames);
    if (p < n) return tracebackLine(c, e.causeFrames, p, seed + 0xca05e);
    p -= n;
    if (p < 3) return p === 1 ? c.joiner : '';
    p -= 3;
  }
  const n = tracebackLines(e.main!, e.mainFrames);
  if (p < n) return tracebackLine(e.main!, e.mainFrames, p, seed + 0xe4ce97);
  reseed(seed + 0x7a11e4);
  return accessLine('500 Internal Server Error');
}

function headingLine(heading: number, ms: number): string {
  switch (heading) {
    case 0:
      return 'ERROR:    Exception in ASGI application';
    case 1:
      return `ERROR:app.handlers:request ${hex(8)} failed`;
    case 2:
      return `${asctime(ms)} - app.model - ERROR - generation failed for request ${hex(8)}`;
    case 3:
      return `${loguruTime(ms)} | ERROR    | app.worker:run:88 - batch ${int(1, 99_999)} failed`;
    default:
      return `ERROR ${vllmTime(ms)} [engine.py:160] Engine background loop failed`;
  }
}

function tracebackLine(stack: Stack, frames: number, p: number, exceptionSeed: number): string {
  if (p === 0) return 'Traceback (most recent call last):';
  p--;
  for (let i = stack.frames.length - frames; i < stack.frames.length; i++) {
    const f = stack.frames[i]!;
    if (p === 0) return f.file;
    if (p === 1) return f.code;
    if (f.caret !== undefined) {
      if (p === 2) return f.caret;
      p -= 3;
    } else p -= 2;
  }
  reseed(exceptionSeed);
  return stack.exception();
}
