//! Severity from the text: a corpus of lines as Python model servers write them, user rules,
//! JSON objects, and properties (a level is read only from the start of the line).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  compileLevelRules,
  detectLevel,
  levelFromJsonObject,
  levelFromPythonNumber,
  levelFromWord,
  severityNumber,
} from '../../src/processing/levels.js';
import { LEVELS, type Level } from '../../src/processing/types.js';

type Expected = readonly [line: string, level: Level | undefined, text?: string];

/** Lines with their expected level and text as written; `undefined` means no level. */
const CORPUS: readonly Expected[] = [
  // Python logging's default format
  ['WARNING:root:CUDA_VISIBLE_DEVICES is not set, using all visible GPUs', 'warn', 'WARNING'],
  ['ERROR:uvicorn.error:Exception in ASGI application', 'error', 'ERROR'],
  ['INFO:__main__:Loading tokenizer from /models/mistral-7b-instruct', 'info', 'INFO'],
  ['DEBUG:urllib3.connectionpool:Starting new HTTPS connection (1): huggingface.co:443', 'debug', 'DEBUG'],
  ['CRITICAL:root:out of GPU memory while allocating the KV cache, shutting down', 'fatal', 'CRITICAL'],
  ['NOTICE:scheduler:draining before shutdown', 'info', 'NOTICE'],
  ['FATAL: could not open /dev/nvidia0', 'fatal', 'FATAL'],
  ['ERROR: failed to load model info', 'error', 'ERROR'],
  ['INFO     Started server process [1]', 'info', 'INFO'],
  // uvicorn
  ['INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK', 'info', 'INFO'],
  ['INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)', 'info', 'INFO'],
  ['INFO:     10.12.0.4:51234 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error', 'info', 'INFO'],
  ['\x1b[32mINFO\x1b[0m:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK', 'info', 'INFO'],
  // asctime formats
  ['2026-11-25 16:30:01,123 - app - ERROR - Failed to decode request body', 'error', 'ERROR'],
  ['2026-11-25 16:30:01,123 - transformers.modeling_utils - WARNING - Some weights were not initialized', 'warn', 'WARNING'],
  ['2026-11-25 16:30:01,123 - INFO - model loaded in 12.4s', 'info', 'INFO'],
  ['2026-11-25 16:30:02,007 - httpx - INFO - HTTP Request: POST http://localhost:8000/v1/chat/completions "HTTP/1.1 200 OK"', 'info', 'INFO'],
  ['2026-11-25 16:30:01,123 ERROR app: generation failed for request 8f2c', 'error', 'ERROR'],
  ['2026-11-25 16:30:01,123 [ERROR] worker: batch 12 failed', 'error', 'ERROR'],
  ['[2026-11-25 16:30:01,123] ERROR in app: Exception on /predict [POST]', 'error', 'ERROR'],
  ['2026-11-25T16:30:01.123456Z  INFO text_generation_router: router/src/main.rs:312: Connected', 'info', 'INFO'],
  ['2026-11-25 16:30:01 Error while serving request', undefined],
  // loguru
  ['2026-11-25 16:30:01.123 | WARNING  | server.batching:flush:42 - queue is 90% full', 'warn', 'WARNING'],
  ['2026-11-25 16:30:01.456 | SUCCESS  | server.main:startup:17 - ready to serve', 'info', 'SUCCESS'],
  ['2026-11-25 16:30:01.789 | DEBUG    | server.main:startup:18 - tokenizer cache warm', 'debug', 'DEBUG'],
  // vLLM
  ['INFO 11-25 16:30:01 [metrics.py:455] Avg prompt throughput: 512.3 tokens/s, Running: 4 reqs', 'info', 'INFO'],
  ['WARNING 11-25 16:30:02 [scheduler.py:1089] Sequence group 17 is preempted by PreemptionMode.RECOMPUTE', 'warn', 'WARNING'],
  ['ERROR 11-25 16:30:03 [engine.py:160] AsyncLLMEngine background task failed', 'error', 'ERROR'],
  ['(VllmWorker rank=1 pid=4242) INFO 11-25 16:30:01 [custom_all_reduce.py:224] Registering 1234 cuda graph addresses', 'info', 'INFO'],
  ['\x1b[1;36m(VllmWorker rank=0 pid=4241)\x1b[0;0m WARNING 11-25 16:30:04 [utils.py:88] Using a slow tokenizer', 'warn', 'WARNING'],
  // bracketed
  ['[ERROR] model weights not found at /models/llama/model.safetensors', 'error', 'ERROR'],
  ['[2026-11-25 16:30:01] [warning] slow request: 3.2s', 'warn', 'warning'],
  ['[2026-11-25 16:30:01 +0000] [7] [INFO] Booting worker with pid: 7', 'info', 'INFO'],
  ['[2026-11-25 16:30:31 +0000] [1] [CRITICAL] WORKER TIMEOUT (pid:7)', 'fatal', 'CRITICAL'],
  ['[WARNING|modeling_utils.py:4170] 2026-11-25 16:30:01,123 >> Some weights of the model checkpoint were not used', 'warn', 'WARNING'],
  ['INFO  [alembic.runtime.migration] Running upgrade  -> 3f2a, add runs table', 'info', 'INFO'],
  ['[1/4] Loading weights', undefined],
  // glog, torch's C++ logs, tornado
  ['E1125 16:30:01.123456  4242 tensor_util.cc:78] Dimension mismatch', 'error', 'E'],
  ['W1125 16:30:01.123456  4242 gpu_device.cc:2211] Cannot dlopen some GPU libraries.', 'warn', 'W'],
  ['[W1125 16:30:01.123456 4242 ProcessGroupNCCL.cpp:1234] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now', 'warn', 'W'],
  ['[rank0]:[W1125 16:30:05.000001 88 ProcessGroupNCCL.cpp:1250] Warning: WorkNCCL timed out', 'warn', 'W'],
  ['[rank1]: Traceback (most recent call last):', undefined],
  ['[I 251125 16:30:01 web:2271] 200 GET /metrics (10.0.0.3) 1.52ms', 'info', 'I'],
  // logfmt and Python's warnings
  ['time="2026-11-25T16:30:01Z" level=error msg="pull failed" image=vllm/vllm-openai', 'error', 'error'],
  ['level=warn msg="gpu memory low"', 'warn', 'warn'],
  ['/opt/venv/lib/python3.11/site-packages/transformers/generation/utils.py:1510: UserWarning: You have modified the pretrained model configuration', 'warn', 'UserWarning'],
  ['  warnings.warn(', undefined],
  // no level: print() output, progress bars, tracebacks, prose that mentions a level
  ['loaded model info', undefined],
  ['no errors found', undefined],
  ['Loading checkpoint shards:  50%|█████     | 2/4 [00:03<00:03,  1.52s/it]', undefined],
  ['100%|██████████| 4/4 [00:06<00:00,  1.48s/it]', undefined],
  ['Traceback (most recent call last):', undefined],
  ['  File "/app/server.py", line 42, in predict', undefined],
  ['RuntimeError: CUDA error: out of memory', undefined],
  ['Exception in thread Thread-3 (worker):', undefined],
  ['Some weights of BertForSequenceClassification were not initialized from the model checkpoint at bert-base-uncased', undefined],
  ['You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.', undefined],
  ['Error loading model, retrying in 5s', undefined],
  ['error: model not found', undefined],
  ['INFORMATION: server started', undefined],
  ['ERRORS: 0, WARNINGS: 3', undefined],
  ['{"level": "error", "msg": "JSON lines are read by levelFromJsonObject"}', undefined],
  ['', undefined],
];

const WORDS: readonly (readonly [string, Level])[] = [
  ['TRACE', 'trace'], ['DEBUG', 'debug'], ['INFO', 'info'], ['NOTICE', 'info'], ['WARN', 'warn'], ['WARNING', 'warn'],
  ['ERROR', 'error'], ['ERR', 'error'], ['EXCEPTION', 'error'], ['CRITICAL', 'fatal'], ['FATAL', 'fatal'], ['PANIC', 'fatal'],
];

describe('detectLevel on the corpus', () => {
  it.each(CORPUS.map(([line, level, text]) => [JSON.stringify(line), line, level, text] as const))(
    '%s',
    (_name, line, level, text) => {
      expect(detectLevel(line)).toEqual(level === undefined ? undefined : { level, text });
    },
  );

  it('holds at least 40 lines, with and without a level', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(40);
    expect(CORPUS.filter(([, level]) => level === undefined).length).toBeGreaterThanOrEqual(15);
  });
});

describe('detectLevel properties', () => {
  const withMessage = CORPUS.filter(([line]) => line !== '');

  it('reads the level from the start of the line: whatever follows changes nothing, in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...withMessage), fc.string({ unit: 'binary' })), { maxLength: 20 }), (cases) => {
        for (const [[line, level, text], tail] of cases) {
          expect(detectLevel(line + tail)).toEqual(level === undefined ? undefined : { level, text });
        }
      }),
    );
  });

  it('never finds a level word that comes after the start of the line', () => {
    const start = fc.constantFrom('request ', 'no ', '  ', 'Loading checkpoint shards: ', '>>> ', 'model said: ', 'Error ');
    const later = fc.constantFrom('ERROR: ', '[ERROR] ', 'WARNING:root:', ' | CRITICAL | ', 'E1125 16:30:01 ', 'level=error ', '');
    fc.assert(
      fc.property(start, fc.string(), later, fc.string(), (a, b, c, d) => {
        expect(detectLevel(a + b + c + d)).toBeUndefined();
      }),
    );
  });

  it('maps every level word in the known prefixes, keeping the word as written', () => {
    fc.assert(
      fc.property(fc.constantFrom(...WORDS), fc.string(), ([word, level], message) => {
        const lower = word.toLowerCase();
        const lines = [
          [`${word}:${message}`, word],
          [`${word} ${message}`, word],
          [`[${lower}] ${message}`, lower],
          [`2026-11-25 16:30:01,123 - app - ${word} - ${message}`, word],
        ] as const;
        for (const [line, text] of lines) expect(detectLevel(line), line).toEqual({ level, text });
      }),
    );
  });
});

describe('user rules', () => {
  const server5xx = '^INFO: .*" 5\\d\\d ';

  it('come before the presets and give the level in capitals when they capture nothing', () => {
    const rules = compileLevelRules([{ match: server5xx, level: 'error' }]);
    expect(detectLevel('INFO:     10.12.0.4:51234 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error', rules)).toEqual({ level: 'error', text: 'ERROR' });
    expect(detectLevel('INFO:     10.12.0.4:51234 - "POST /v1/completions HTTP/1.1" 200 OK', rules)).toEqual({ level: 'info', text: 'INFO' });
    expect(detectLevel('no errors found', rules)).toBeUndefined();
  });

  it('are tried in order, first match wins, and a captured group is the text', () => {
    const rules = compileLevelRules([
      { match: '^<(?<level>crit)>', level: 'fatal' },
      { match: '^<(\\w+)>', level: 'warn' },
      { match: 'CUDA out of memory', level: 'error', ignoreCase: true },
    ]);
    expect(detectLevel('<crit> disk full', rules)).toEqual({ level: 'fatal', text: 'crit' });
    expect(detectLevel('<notice> disk 80%', rules)).toEqual({ level: 'warn', text: 'notice' });
    expect(detectLevel('torch.OutOfMemoryError: cuda OUT of memory. Tried to allocate 2.00 GiB', rules)).toEqual({ level: 'error', text: 'ERROR' });
    expect(detectLevel('WARNING:root:cuda out of memory, retrying with a smaller batch', rules)).toEqual({ level: 'error', text: 'ERROR' });
  });

  it.each([
    [{ match: '(unclosed', level: 'error' as const }, /level rule 0 \("\(unclosed"\): missing closing \)/],
    [{ match: '', level: 'error' as const }, /level rule 0 \(""\): match must be a non-empty/],
    [{ match: '^oops', level: 'severe' as unknown as Level }, /level rule 0 \("\^oops"\): level must be one of trace, debug, info, warn, error, fatal, got "severe"/],
  ])('rejects %j with an error naming the rule', (rule, message) => {
    expect(() => compileLevelRules([rule])).toThrow(message);
  });

  it('names the index of the bad rule among good ones, with the cause', () => {
    let error: unknown;
    try {
      compileLevelRules([{ match: '^ok', level: 'info' }, { match: '[z-a]', level: 'warn' }]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^level rule 1 \("\[z-a\]"\)/);
    expect((error as Error).message).toContain('invalid character class range');
    expect((error as Error).cause).toBeInstanceOf(Error);
  });
});

describe('levelFromJsonObject', () => {
  it.each([
    [{ level: 'warning', msg: 'slow' }, 'warn', 'warning'],
    [{ levelname: 'ERROR', message: 'generation failed' }, 'error', 'ERROR'],
    [{ severity: 'CRITICAL', message: 'gpu lost' }, 'fatal', 'CRITICAL'],
    [{ severity: 'ALERT' }, 'fatal', 'ALERT'],
    [{ lvl: 'dbug' }, undefined, undefined],
    [{ 'log.level': 'warn', message: 'ecs' }, 'warn', 'warn'],
    [{ log: { level: 'error', logger: 'app' } }, 'error', 'error'],
    [{ level: ' Warning ' }, 'warn', 'Warning'],
    [{ level: 'error', levelname: 'INFO' }, 'error', 'error'],
    [{ level: 'DEFAULT', levelname: 'INFO' }, 'info', 'INFO'],
    [{ levelno: 40, level: 30 }, 'warn', '30'],
    [{ level: 17 }, 'debug', '17'],
    [{ level: '40' }, 'error', '40'],
    [{ level: 25 }, 'info', '25'],
    [{ level: 0 }, undefined, undefined],
    [{ level: true }, undefined, undefined],
    [{ level: ['error'] }, undefined, undefined],
    [{ message: 'no level here', error: 'boom' }, undefined, undefined],
    [{ text: 'ready\n', record: { level: { icon: '⚠️', name: 'WARNING', no: 30 }, message: 'ready' } }, 'warn', 'WARNING'],
    [{ level: { no: 40 } }, 'error', '40'],
  ] as const)('%j', (obj, level, text) => {
    expect(levelFromJsonObject(obj)).toEqual(level === undefined ? undefined : { level, text });
  });

  it.each([null, 'ERROR', 40, ['level', 'error']])('has no level for the non-object %j', (value) => {
    expect(levelFromJsonObject(value)).toBeUndefined();
  });
});

describe('numbers and words', () => {
  it("reads Python's numbers, not OTLP's", () => {
    expect([5, 10, 19, 20, 30, 40, 50, 60].map(levelFromPythonNumber)).toEqual(['trace', 'debug', 'debug', 'info', 'warn', 'error', 'fatal', 'fatal']);
    expect([0, -10, Number.NaN, Number.POSITIVE_INFINITY].map(levelFromPythonNumber)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('never ranks a higher Python number as less severe', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 200 }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(LEVELS.indexOf(levelFromPythonNumber(lo)!)).toBeLessThanOrEqual(LEVELS.indexOf(levelFromPythonNumber(hi)!));
      }),
    );
  });

  it('maps each word in any case', () => {
    for (const [word, level] of WORDS) {
      expect([levelFromWord(word), levelFromWord(word.toLowerCase())]).toEqual([level, level]);
    }
    expect(levelFromWord('verbose')).toBeUndefined();
  });

  it('gives the OTLP severity numbers', () => {
    expect(LEVELS.map(severityNumber)).toEqual([1, 5, 9, 13, 17, 21]);
  });
});
