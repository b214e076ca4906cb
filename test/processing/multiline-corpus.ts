// Realistic Python output, each case with the records it must give, in the order they close
// (described by kind, closedBy and how many consecutive lines of the case each record takes).
export interface CorpusCase {
  name: string;
  lines: string[];
  records: Array<[kind: 'single' | 'traceback' | 'custom', closedBy: 'next_line' | 'gap' | 'flush', lines: number]>;
}

const SITE = '/usr/local/lib/python3.12/site-packages';

const simple = [
  'Traceback (most recent call last):',
  '  File "/app/server.py", line 88, in predict',
  '    scores = model.score(batch)',
  '  File "/app/model.py", line 41, in score',
  '    raise ValueError(f"batch too large: {len(batch)} > {self.max_batch}")',
  'ValueError: batch too large: 64 > 32',
];

const chainedFrom = [
  'Traceback (most recent call last):',
  '  File "/app/tokenizer.py", line 19, in load',
  '    return json.loads(raw)',
  '           ^^^^^^^^^^^^^^^',
  '  File "/usr/lib/python3.12/json/__init__.py", line 346, in loads',
  '    return _default_decoder.decode(s)',
  '           ^^^^^^^^^^^^^^^^^^^^^^^^^^',
  'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
  '',
  'The above exception was the direct cause of the following exception:',
  '',
  'Traceback (most recent call last):',
  '  File "/app/server.py", line 12, in <module>',
  '    tok = load("/models/tok.json")',
  '  File "/app/tokenizer.py", line 21, in load',
  '    raise RuntimeError("tokenizer config unreadable") from err',
  'RuntimeError: tokenizer config unreadable',
];

const duringHandling = [
  'Traceback (most recent call last):',
  '  File "/app/cache.py", line 30, in get',
  '    return self._store[key]',
  '           ~~~~~~~~~~~^^^^^',
  "KeyError: 'llama-3-8b'",
  '',
  'During handling of the above exception, another exception occurred:',
  '',
  'Traceback (most recent call last):',
  '  File "/app/cache.py", line 33, in get',
  '    path = self.fetch(key)',
  '  File "/app/cache.py", line 48, in fetch',
  '    raise FileNotFoundError(f"no weights for {key}")',
  'FileNotFoundError: no weights for llama-3-8b',
];

const carets = [
  'Traceback (most recent call last):',
  '  File "/app/metrics.py", line 14, in tokens_per_second',
  '    return stats["tokens"] / stats["elapsed"]',
  '           ~~~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~',
  'ZeroDivisionError: division by zero',
];

const vllmOom = [
  'ERROR 03-01 12:00:05 [engine.py:160] Engine background loop failed',
  'Traceback (most recent call last):',
  `  File "${SITE}/vllm/worker/model_runner.py", line 1547, in execute_model`,
  '    hidden_or_intermediate_states = model_executable(',
  '                                    ^^^^^^^^^^^^^^^^^',
  `  File "${SITE}/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl`,
  '    return self._call_impl(*args, **kwargs)',
  '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
  `  File "${SITE}/torch/nn/modules/module.py", line 1747, in _call_impl`,
  '    return forward_call(*args, **kwargs)',
  '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.12 GiB is free. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 180.25 MiB is reserved by PyTorch but unallocated.',
];

const transformersWorker = [
  'Process SpawnProcess-1:',
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
  '    self.run()',
  '  File "/app/worker.py", line 27, in run',
  '    out = self.model.generate(**inputs, max_new_tokens=512)',
  `  File "${SITE}/transformers/generation/utils.py", line 2215, in generate`,
  '    result = self._sample(',
  '             ^^^^^^^^^^^^^',
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of 15.77 GiB of which 802.31 MiB is free.',
];

const asgi = [
  'ERROR:    Exception in ASGI application',
  'Traceback (most recent call last):',
  `  File "${SITE}/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi`,
  '    result = await app(  # type: ignore[func-returns-value]',
  '             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
  `  File "${SITE}/fastapi/routing.py", line 212, in run_endpoint_function`,
  '    return await dependant.call(**values)',
  '  File "/app/main.py", line 57, in generate',
  '    out = pipe(req.prompt, max_new_tokens=req.max_tokens)',
  "TypeError: '<=' not supported between instances of 'NoneType' and 'int'",
  'INFO:     10.0.3.7:51544 - "POST /v1/generate HTTP/1.1" 500 Internal Server Error',
];

const exceptionGroup = [
  'ERROR:    Exception in ASGI application',
  '  + Exception Group Traceback (most recent call last):',
  `  |   File "${SITE}/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi`,
  '  |     result = await app(  # type: ignore[func-returns-value]',
  `  |   File "${SITE}/anyio/_backends/_asyncio.py", line 767, in __aexit__`,
  '  |     raise BaseExceptionGroup(',
  '  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)',
  '  +-+---------------- 1 ----------------',
  '    | Traceback (most recent call last):',
  '    |   File "/app/main.py", line 40, in stream_tokens',
  '    |     async for tok in engine.generate(prompt):',
  '    | RuntimeError: engine is dead',
  '    +------------------------------------',
  'INFO:     10.0.3.7:51560 - "POST /v1/stream HTTP/1.1" 500 Internal Server Error',
];

export const CORPUS: CorpusCase[] = [
  { name: 'a simple traceback, closed by flush', lines: simple, records: [['traceback', 'flush', 6]] },
  {
    name: 'logger.exception in the basicConfig format, then the next log line',
    lines: ['INFO:app.handlers:request 7f3a started', 'ERROR:app.handlers:request 7f3a failed', ...simple, 'INFO:app.handlers:request 7f3b started'],
    records: [['single', 'next_line', 1], ['traceback', 'next_line', 7], ['single', 'next_line', 1]],
  },
  {
    name: 'logger.exception with asctime - name - level',
    lines: ['2026-03-01 12:00:00,123 - app.generate - ERROR - generation failed for prompt 91', ...carets, '2026-03-01 12:00:00,140 - app.generate - INFO - next prompt'],
    records: [['traceback', 'next_line', 6], ['single', 'next_line', 1]],
  },
  { name: 'raise … from … (direct cause)', lines: chainedFrom, records: [['traceback', 'flush', 17]] },
  { name: 'During handling of the above exception', lines: [...duringHandling, 'INFO:app:retrying'], records: [['traceback', 'next_line', 14], ['single', 'next_line', 1]] },
  { name: '3.11 carets (~~^~~)', lines: carets, records: [['traceback', 'flush', 5]] },
  { name: 'torch CUDA OOM from a vLLM engine, headed by its ERROR line', lines: [...vllmOom, 'INFO 03-01 12:00:06 [engine.py:170] Shutting down'], records: [['traceback', 'next_line', 12], ['single', 'next_line', 1]] },
  {
    name: 'CUDA OOM from a transformers worker process (the Process line is not error level)',
    lines: transformersWorker,
    records: [['single', 'next_line', 1], ['traceback', 'flush', 9]],
  },
  { name: 'a traceback followed at once by an uvicorn access line', lines: asgi, records: [['traceback', 'next_line', 10], ['single', 'next_line', 1]] },
  { name: 'an exception group from a task group', lines: exceptionGroup, records: [['traceback', 'next_line', 13], ['single', 'next_line', 1]] },
  {
    name: 'two tracebacks back to back',
    lines: [...carets, ...simple],
    records: [['traceback', 'next_line', 5], ['traceback', 'flush', 6]],
  },
  {
    name: 'a blank line inside the frames and one after the exception line',
    lines: [simple[0]!, simple[1]!, '', ...simple.slice(2), '', 'INFO:app:ok'],
    records: [['traceback', 'next_line', 8], ['single', 'next_line', 1]],
  },
  {
    name: 'an ERROR line no traceback follows',
    lines: ['ERROR:app:model llama-3 not found in /models', 'INFO:app:falling back to llama-2', 'CRITICAL:root:out of fallbacks'],
    records: [['single', 'next_line', 1], ['single', 'next_line', 1], ['single', 'flush', 1]],
  },
  {
    name: 'KeyboardInterrupt without a message, then uvicorn shutting down',
    lines: ['Traceback (most recent call last):', '  File "/app/serve.py", line 9, in <module>', '    uvicorn.run(app)', 'KeyboardInterrupt', 'INFO:     Shutting down'],
    records: [['traceback', 'next_line', 4], ['single', 'next_line', 1]],
  },
  {
    name: 'a cut traceback (no exception line) ends at the next log line',
    lines: ['Traceback (most recent call last):', '  File "/app/serve.py", line 9, in <module>', '2026-03-01 12:00:01,002 - app - INFO - restarted'],
    records: [['traceback', 'next_line', 2], ['single', 'next_line', 1]],
  },
  {
    name: 'a loguru traceback with its > File marker',
    lines: [
      '2026-03-01 12:00:00.512 | ERROR    | app.worker:run:42 - An error has been caught in function \'run\'',
      'Traceback (most recent call last):',
      '  File "/app/main.py", line 10, in <module>',
      '    run()',
      '> File "/app/worker.py", line 42, in run',
      '    1 / 0',
      'ZeroDivisionError: division by zero',
      '2026-03-01 12:00:00.600 | INFO     | app.worker:run:50 - worker restarted',
    ],
    records: [['traceback', 'next_line', 7], ['single', 'next_line', 1]],
  },
  {
    name: 'a multi-line exception message: indented details stay, unindented ones stand alone',
    lines: [
      'Traceback (most recent call last):',
      '  File "/app/schema.py", line 8, in parse',
      '    return Request.model_validate(body)',
      'pydantic_core._pydantic_core.ValidationError: 1 validation error for Request',
      'max_tokens',
      '  Input should be a valid integer [type=int_type, input_value=\'many\', input_type=str]',
    ],
    records: [['traceback', 'next_line', 4], ['single', 'next_line', 1], ['single', 'next_line', 1]],
  },
];
