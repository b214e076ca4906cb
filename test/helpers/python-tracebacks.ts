//! Tracebacks of every shape as CPython prints them: `python3` raises each exception and
//! prints it with `traceback.format_exc()`, and says from the exception objects themselves
//! what a reader of the text must find (the type as printed, the message, the chain).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One printed traceback and the exception it shows. */
export interface PythonTraceback {
  name: string;
  /** The traceback as printed, without its final newline. */
  text: string;
  type: string;
  /** Absent when the exception has no message. */
  message?: string;
  /** Absent when nothing is chained before it. */
  chain?: string[];
}

// A module named `torch` in the script's folder: its error is printed `torch.OutOfMemoryError`.
const TORCH = `
class OutOfMemoryError(RuntimeError):
    pass
`;

const SCRIPT = String.raw`
import json, sys, traceback
import torch

class NoMessage(Exception):
    pass

def printed_type(e):
    t = type(e)
    return t.__qualname__ if t.__module__ in ("__main__", "builtins") else t.__module__ + "." + t.__qualname__

def chain_of(e):
    out = []
    while True:
        if e.__cause__ is not None:
            e = e.__cause__
        elif e.__context__ is not None and not e.__suppress_context__:
            e = e.__context__
        else:
            return out[::-1]
        out.append(printed_type(e))

def message_of(e):
    text = e.msg if isinstance(e, SyntaxError) else str(e)
    return "\n".join([text, *getattr(e, "__notes__", [])]).rstrip()

def plain():
    raise ValueError("batch too large: 119 > 32")

def colon_in_message():
    raise ValueError("bad value: 'x': expected a number")

def unicode_message():
    raise ValueError("naïve input — 日本語 🦙")

def multi_line_message():
    raise ValueError("first line\n  indented second line\nthird line")

def with_note():
    e = KeyError("input_ids")
    e.add_note("while tokenizing request 5bec6593")
    raise e

def no_message():
    raise NoMessage()

def empty_message():
    raise ValueError()

def dotted():
    json.loads("{not json")

def torch_oom():
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity)")

def direct_cause():
    try:
        json.loads("")
    except json.JSONDecodeError as e:
        raise RuntimeError("config is not JSON") from e

def during_handling():
    try:
        {"attention_mask": 1}["input_ids"]
    except KeyError:
        raise torch.OutOfMemoryError("CUDA out of memory while handling a request")

def three_deep():
    try:
        try:
            {}["input_ids"]
        except KeyError:
            raise ValueError("no input ids")
    except ValueError as e:
        raise RuntimeError("request failed") from e

def suppressed():
    try:
        {}["x"]
    except KeyError:
        raise TypeError("context suppressed") from None

def group():
    raise ExceptionGroup("many", [ValueError("a\nb"), ExceptionGroup("inner", [TypeError("t")])])

def group_of_raised():
    def raised(e):
        try:
            raise e
        except BaseException as x:
            return x
    raise ExceptionGroup("raised ones", [raised(ValueError("v")), raised(KeyError("k"))])

def group_caused():
    try:
        group()
    except ExceptionGroup as e:
        raise KeyError("input_ids") from e

def group_during_handling():
    try:
        json.loads("")
    except ValueError:
        group_of_raised()

def syntax_error():
    compile("def f(:\n    pass\n", "model.py", "exec")

def deep_recursion():
    def down(n):
        return down(n + 1)
    down(0)

out = []
for f in [plain, colon_in_message, unicode_message, multi_line_message, with_note, no_message, empty_message, dotted, torch_oom,
          direct_cause, during_handling, three_deep, suppressed, group, group_of_raised, group_caused, group_during_handling,
          syntax_error, deep_recursion]:
    try:
        f()
    except BaseException as e:
        item = {"name": f.__name__, "text": traceback.format_exc().rstrip("\n"), "type": printed_type(e)}
        if message_of(e):
            item["message"] = message_of(e)
        if chain_of(e):
            item["chain"] = chain_of(e)
        out.append(item)
json.dump(out, sys.stdout)
`;

/** Runs python3 once and returns every traceback it printed. */
export function pythonTracebacks(): PythonTraceback[] {
  const dir = mkdtempSync(join(tmpdir(), 'mls-python-'));
  try {
    mkdirSync(join(dir, 'torch'));
    writeFileSync(join(dir, 'torch', '__init__.py'), TORCH);
    writeFileSync(join(dir, 'raise.py'), SCRIPT);
    const out = execFileSync('python3', [join(dir, 'raise.py')], { cwd: dir, encoding: 'utf8', env: { ...process.env, PYTHONIOENCODING: 'utf-8', PYTHONPATH: dir } });
    return JSON.parse(out) as PythonTraceback[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
