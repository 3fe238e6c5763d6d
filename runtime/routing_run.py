"""The routing run: aevatar's step loop (the engine's kernel) and its primitives.

A generated module (backends/python/plan_codegen.py) holds a PLAN: the
steps as plain data (flowc.plan: nodes and edges by kind), with one
compiled function per step that evaluates the step's parameters from the
run's variables. :func:`run` executes the plan the
way the aevatar engine's kernel does (WorkflowExecutionKernel, c8db46d):

- the first step gets the run input; every step's output becomes the next
  step's input, ``vars[<step id>]``, ``vars["input"]`` and (newer kernel)
  ``steps.<id>.output`` / ``steps.<id>.json.<field>`` ...;
- routing: a guard's jump, else the ``branch`` edge labelled with the key,
  else the one labelled ``_default``, else the ``sequence`` edge (``next``),
  else the ``fallthrough`` edge (the following step in document order),
  else the run completes with the step's output;
- a failure: a timeout fails the run; else ``retry`` re-dispatches the same
  input (sleeping ``delay_ms``, doubled per attempt when exponential); else
  ``on_error`` skip continues to next/fall-through with ``default_output``,
  fallback dispatches the target of the ``error`` edge labelled
  ``fallback`` with the output (or the error text);
  else the run fails.

Every effect is a host call or a sleep, and the run performs neither: the
loop is a task of the sans-I/O kernel (:mod:`flowc.runtime.kernel`) that
yields :class:`Call` / :class:`Sleep` requests, and a driver answers them
(:func:`run`: the sync driver, ``host.call`` / ``host.sleep`` one at a
time; :func:`run_async`: asyncio; :func:`run_virtual`: a virtual clock).
A host call that fails with a message the engine reads as a timeout
(``TIMEOUT``, ``timed out after N ms``) is one. Deadlines are the engine's:
a top-level step's ``timeout_ms`` bounds each dispatch of it (every host
call and sub-step of that attempt; a retry is a new dispatch with a new
deadline, its pause is outside), and past it the step fails with ``TIMEOUT
after <n>ms``, which fails the run; ``wait_signal`` has its module's timer
and ``human_input`` / ``secure_input`` the suspension's timeout. Only a
driver with a clock fires them (:func:`flowc.runtime.kernel.with_deadline`).
Runs are bounded by ``max_steps`` dispatches (the engine has no bound:
loops are legal). See docs/runtime.md.

Standard library only, no typing at run time (MicroPython-compatible: the
VM runs this kernel there. MicroPython's dicts forget insertion order and
its json module neither keeps key order nor takes ensure_ascii, so there the
kernel builds the objects whose order shows (parameters, host arguments,
parsed JSON, variables) as OrderedDicts and reads and writes JSON with
:func:`flowc.runtime.json_text.json_loads` / ``json_dumps``, which give
CPython's json results).
"""

import json as _json
import sys as _sys

try:
    from flowc.runtime import aevatar_text as _rta
    from flowc.runtime import nfa as _rx
    from flowc.runtime.json_text import json_dumps, json_loads
except ImportError:  # copies side by side (MicroPython)
    import aevatar_text as _rta
    import nfa as _rx
    from json_text import json_dumps, json_loads

try:
    from flowc.runtime import drivers as _drivers
    from flowc.runtime.edges import Edges as _Edges
    from flowc.runtime.fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel
    from flowc.runtime.kernel import Call, Cancel, Kernel, Sleep, Spawn, Wait, with_deadline
except ImportError:  # copies side by side (MicroPython)
    import drivers as _drivers
    from edges import Edges as _Edges
    from fuel import DEFAULT_MAX_HOST_CALLS, DEFAULT_MAX_ITERATIONS, Fuel, OutOfFuel  # noqa: F401
    from kernel import Call, Cancel, Kernel, Sleep, Spawn, Wait, with_deadline

try:
    from collections import OrderedDict as _OrderedDict
except ImportError:  # pragma: no cover
    _OrderedDict = dict

_MICRO = _sys.implementation.name == "micropython"
# An object whose key order shows: a dict, or an OrderedDict where dicts are unordered.
_Obj = _OrderedDict if _MICRO else dict

__all__ = ["MAX_STEPS", "run", "run_async", "run_virtual"]

MAX_STEPS = 10000
SEP = "\n---\n"
# The dialect's step budget: MAX_STEPS dispatches (ir/semantics.py,
# DialectProfile.step_budget of aevatar; a test keeps them equal). Its
# iterations are step dispatches, sub-steps and retries included.
STEP_BUDGET = "dispatches"


class StepFailure(Exception):
    def __init__(self, message, output=""):
        super().__init__(message)
        self.message = message
        self.output = output


def _word_char(ch):
    return ch.isalpha() or ch.isdigit() or ch == "_"


def _is_timeout(message):
    """The kernel's timeout test: \\bTIMEOUT\\b, or `timed out after <n> <unit>` (ignoring case)."""
    low = (message or "").lower()
    start = 0
    while True:
        i = low.find("timeout", start)
        if i < 0:
            break
        before = low[i - 1] if i > 0 else " "
        after = low[i + 7] if i + 7 < len(low) else " "
        if not _word_char(before) and not _word_char(after):
            return True
        start = i + 1
    start = 0
    while True:
        i = low.find("timed out after", start)
        if i < 0:
            return False
        start = i + 1
        if i > 0 and (low[i - 1].isalpha() or low[i - 1].isdigit()):
            continue
        rest = low[i + len("timed out after"):].lstrip()
        j = 0
        while j < len(rest) and rest[j] in "0123456789":
            j += 1
        if j == 0:
            continue
        unit = rest[j:].lstrip()
        for u in ("milliseconds", "millisecond", "minutes", "minute", "seconds", "second", "hours", "hour",
                  "mins", "secs", "hrs", "min", "sec", "hr", "ms", "s", "m", "h"):
            if unit.startswith(u) and (len(unit) == len(u) or not _word_char(unit[len(u)])):
                return True


def _text(value):
    """A host result as the engine's string output."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    return _dumps(value)


def _dumps(value, indent=None):
    """Compact (or indented) JSON, non-ASCII kept (json.dumps with
    ensure_ascii=False); :func:`json_dumps` where json lacks those options."""
    if _MICRO:
        return json_dumps(value, indent)
    if indent is not None:
        return _json.dumps(value, ensure_ascii=False, indent=indent)
    return _json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _pairs(*items):
    """An object of (key, value) pairs in this order (the order a host sees)."""
    out = _Obj()
    for k, v in items:
        out[k] = v
    return out


def _parse_json(text):
    try:
        return json_loads(text) if _MICRO else _json.loads(text)
    except ValueError:
        return None


def _escaped(raw, fallback):
    """WorkflowParameterValueParser.NormalizeEscapedText."""
    if raw is None or _rta.is_blank(raw):
        return fallback
    s = raw.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1]
    s = s.replace("\\r\\n", "\r\n").replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t")
    return s if s else fallback


def _unquote(token):
    t = token.strip().lstrip("[").rstrip("]")
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        t = t[1:-1]
    return t.strip()


def _json_array(raw):
    data = _parse_json(raw)
    if not isinstance(data, list):
        return None
    out = []
    for item in data:
        if item is None:
            continue
        text = item if isinstance(item, str) else _text(item)
        if not _rta.is_blank(text):
            out.append(_unquote(text))
    return out


def string_list(raw):
    """WorkflowParameterValueParser.ParseStringList: a JSON array, or , ; newline separated."""
    if raw is None or _rta.is_blank(raw):
        return []
    s = _rta.trim(raw)
    arr = _json_array(s)
    if arr is not None:
        return arr
    parts = []
    for chunk in s.replace(";", ",").replace("\n", ",").split(","):
        t = _unquote(_rta.trim(chunk))
        if t:
            parts.append(t)
    return parts


def split_items(text, delimiter):
    """SplitInputByDelimiterOrJsonArray."""
    if text is None or _rta.is_blank(text):
        return []
    arr = _json_array(_rta.trim(text))
    if arr:
        return arr
    delim = delimiter or SEP
    return [_rta.trim(p) for p in text.split(delim) if _rta.trim(p)]


def _int(params, keys, fallback, low, high):
    for key in keys:
        raw = params.get(key)
        if raw is None or _rta.is_blank(raw):
            continue
        try:
            value = int(raw.strip())
        except ValueError:
            continue
        return max(low, min(high, value))
    return fallback


def _get(params, keys, fallback=""):
    for key in keys:
        raw = params.get(key)
        if raw is not None and not _rta.is_blank(raw):
            return raw
    return fallback


def _utf16_len(s):
    return int(_rta.length(s))


# ---------------------------------------------------------------- pure primitives
def transform(op, text, params):
    op = _rta.trim(op).lower()
    sep = _escaped(_get(params, ("separator", "delimiter"), "\n"), "\n")
    n = _int(params, ("n", "count"), 5, 1, 10000)
    if op == "identity":
        return text
    if op == "count":
        return str(len([x for x in text.split("\n") if x]))
    if op == "count_words":
        return str(len([x for x in text.split(" ") if x]))
    if op == "take":
        return "\n".join(text.split("\n")[:n])
    if op == "take_last":
        return "\n".join(text.split("\n")[-n:])
    if op == "join":
        return sep.join(x for x in text.split(SEP) if x)
    if op == "split":
        return SEP.join(split_items(text, sep))
    if op == "distinct":
        seen = []
        for line in text.split("\n"):
            if line not in seen:
                seen.append(line)
        return "\n".join(seen)
    if op == "uppercase":
        return _rta.upper(text)
    if op == "lowercase":
        return _rta.lower(text)
    if op == "trim":
        return _rta.trim(text)
    if op == "reverse_lines":
        return "\n".join(reversed(text.split("\n")))
    if op == "json_extract":
        return _json_extract(text, params, n)
    if op == "json_parse":
        data = _parse_json(text)
        if data is None:
            raise StepFailure("json_parse: the input is not JSON", text)
        value = _path(data, _get(params, ("path", "json_path")))
        if isinstance(value, str):
            parsed = _parse_json(value)
            value = parsed if parsed is not None else value
        return _text(value)
    return text  # unknown operation: the input unchanged


def _path(data, path):
    path = _rta.trim(path or "")
    if path.startswith("$"):
        path = path[1:].lstrip(".")
    if not path:
        return data
    for part in path.replace("[", ".").replace("]", "").split("."):
        if part == "":
            continue
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list):
            try:
                data = data[int(part)]
            except (ValueError, IndexError):
                return None
        else:
            return None
    return data


def _json_extract(text, params, n):
    data = _parse_json(text)
    if data is None:
        return "Transform 错误: the input is not JSON"
    target = _path(data, _get(params, ("path", "json_path")))
    fields = string_list(_get(params, ("field", "fields")))
    if isinstance(target, list):
        sort_by = _rta.trim(_get(params, ("sort_by",)))
        if sort_by:
            desc = _rta.trim(_get(params, ("order",), "asc")).lower() == "desc"
            target = sorted(target, key=lambda item: _sort_key(_path(item, sort_by)), reverse=desc)
        items = target[:n]
        if fields:
            items = [_pick(item, fields) for item in items]
        return _dumps(items, 2)
    if fields and isinstance(target, dict):
        target = _pick(target, fields)
    return _dumps(target, 2)


def _pick(item, fields):
    out = _Obj()
    for f in fields:
        value = _path(item, f)
        if value is not None:
            out[f] = value
    return out


def _isnan(x):
    return x != x  # noqa: PLR0124 - NaN is the only value unequal to itself (no math import needed)


def _sort_key(value):
    if value is None:
        return (0, 0, "")
    if isinstance(value, bool):
        return (1, int(value), "")
    if isinstance(value, (int, float)):
        return (2, value, "")
    n = _rta.try_parse_double(str(value))
    if n is not None and not _isnan(n):
        return (2, n, "")
    return (3, 0, _rta.upper(str(value)))


def retrieve_facts(text, params):
    facts_text = _get(params, ("facts",), text)
    sep = _escaped(_get(params, ("delimiter", "separator"), "\n"), "\n")
    facts = [f for f in (x.strip() for x in facts_text.split(sep)) if f]
    query = _get(params, ("query", "keywords"))
    words = [w for w in _rta.lower(query).replace(",", " ").split() if w]
    top_k = _int(params, ("top_k", "k"), 5, 1, 1000)
    scored = []
    for i, fact in enumerate(facts):
        low = _rta.lower(fact)
        hits = sum(1 for w in words if w in low)
        scored.append((-hits, i, fact))
    scored.sort()
    return "\n".join(f for _, _, f in scored[:top_k])


def vote(text):
    candidates = [c for c in text.split(SEP) if not _rta.is_blank(c)]
    if not candidates:
        raise StepFailure("投票步骤没有候选结果")
    best = candidates[0]
    for c in candidates[1:]:
        if _utf16_len(c) > _utf16_len(best):
            best = c
    return best


def switch_key(value, input_text, candidates):
    value = _rta.trim(value or "")
    if not value:
        value = _rta.trim(input_text or "")
    up = _rta.upper(value)
    for key in candidates:
        if len(key) == len(value) and _rta.upper(key) == up:
            return key
    for key in candidates:
        if key != "_default" and _rta.upper(key) in up:
            return key
    return "_default"


def guard(params, text):
    check = _get(params, ("check",), "not_empty")
    c = check.lower()
    if c == "not_empty":
        return (False, "input is empty") if _rta.is_blank(text) else (True, "")
    if c == "json_valid":
        return (True, "") if _parse_json(text) is not None or text.strip() == "null" else (False, "invalid JSON")
    if c == "regex":
        pattern = params.get("pattern", "")
        if not pattern:
            return False, "missing regex pattern parameter"
        # Linear time whatever the pattern (RE2, or nfa's automaton): a
        # workflow's pattern must not make a run hang. `(?!)` (never matches)
        # is kept from .NET, where flowc's translations use it.
        try:
            return (True, "") if _rx.search(pattern, text, True) else (
                False, "input does not match /" + pattern + "/")
        except _rx.RegexError as exc:
            return False, "invalid regex: " + str(exc)
    if c == "max_length":
        try:
            limit = int(params.get("max", "0").strip())
        except ValueError:
            limit = 0
        if limit <= 0:
            return False, "missing or invalid 'max' parameter"
        size = _utf16_len(text)
        return (True, "") if size <= limit else (False, f"length {size} exceeds max {limit}")
    if c == "contains":
        keyword = params.get("keyword", "")
        if not keyword:
            return False, "missing 'keyword' parameter"
        return (True, "") if _rta.upper(keyword) in _rta.upper(text) else (
            False, "input does not contain '" + keyword + "'")
    return False, "unknown check type: " + check


# ---------------------------------------------------------------- the run
class HostFailure(Exception):
    """The host failed to sleep: the run stops (the way a sleeping host's
    exception always escaped a run)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Run(Kernel):
    """The aevatar step loop as a kernel task: host calls and sleeps are
    requests (:class:`Call` / :class:`Sleep`) a driver answers, so the same
    plan runs synchronously, under asyncio or on a virtual clock.
    ``concurrent``: the workers of parallel, race, foreach and map_reduce
    run as sibling tasks (at most ``max_concurrent_workers`` at a time); off,
    they run one after the other, which is the reference order.
    ``max_instructions``: the VM's expression machine draws on them
    (plan_vm.py); a run out of any fuel fails at the top-level step."""

    def __init__(self, plan, inputs, host=None, max_steps=MAX_STEPS, max_iterations=None, max_host_calls=None,
                 concurrent=False, max_instructions=None):
        Kernel.__init__(self)
        self.concurrent = concurrent
        self.result = None
        self.fuel = Fuel(max_iterations, max_host_calls, max_instructions, max_steps, STEP_BUDGET)
        self.plan = plan
        self.steps = plan["nodes"]
        self.index = {}
        for i, step in enumerate(self.steps):
            self.index.setdefault(step["id"], i)
        self.edges = _Edges(plan)  # the routes by kind, indexed once per run
        self.vars = _Obj()
        self.current = None  # the top-level step being dispatched
        self.records = []
        self.calls = []
        self.sleeps = []
        self.cache = {}
        self.retries = {}
        inputs = inputs or {}
        self.vars["input"] = _text(inputs.get("input", ""))
        refs = inputs.get("input_file_refs", [])
        if isinstance(refs, str):
            refs = _parse_json(refs) or []
        self.file_refs = refs if isinstance(refs, list) else []
        for key in inputs:
            if key in ("input", "input_file_refs"):
                continue
            k = _rta.trim(str(key))
            v = _rta.trim(_text(inputs[key]))
            if k and v:
                self.vars[k] = v

    # ------------------------------------------------------------ host
    def call(self, capability, name, args, timeout_ms=None):
        """A host call (a kernel request); its value, or StepFailure with the
        host's message. ``timeout_ms``: the step's deadline, which only a
        driver with a clock enforces; past it the step fails with the
        engine's ``TIMEOUT after <n>ms`` (a timeout: no retry, no on_error)."""
        self.fuel.call()
        self.calls.append({"capability": capability, "name": name, "args": args})
        req = Call(capability, name, args, timeout_ms)
        answer = yield req
        if answer.kind == "result":
            return answer.value
        if answer.kind == "timeout" and req.timeout_ms is not None and answer.message == "timeout":
            raise StepFailure("TIMEOUT after " + str(req.timeout_ms) + "ms")
        raise StepFailure(answer.message)

    def sleep(self, ms):
        ms = int(ms) if ms == int(ms) else ms
        self.sleeps.append(ms)
        answer = yield Sleep(ms)
        if answer.kind != "result":
            raise HostFailure(answer.message)

    # ------------------------------------------------------------ variables
    def completed(self, step_id, output, success, error, branch, assigned):
        if assigned is not None:
            target, value = assigned
            self.vars[target] = value if not _rta.is_blank(value) else output
        self.vars[step_id] = output
        self.vars["input"] = output
        prefix = "steps." + step_id + "."
        self.vars[prefix + "output"] = output
        self.vars[prefix + "success"] = "true" if success else "false"
        self.vars[prefix + "error"] = error or ""
        self.vars[prefix + "branch_key"] = branch or ""
        if success:
            data = _parse_json(output)
            if isinstance(data, dict):
                for k, v in data.items():
                    if v is None:
                        v = ""
                    self.vars[prefix + "json." + str(k)] = v if isinstance(v, str) else _text(v)

    # ------------------------------------------------------------ the loop
    def start(self):
        return Kernel.start(self, self.execute())

    def record(self):
        """The run record (raises what the run raised, e.g. HostFailure)."""
        return self.outcome()

    def execute(self):
        """The root task: the run record; a run out of fuel fails at the
        top-level step running."""
        try:
            return (yield from self._execute())
        except OutOfFuel as exc:
            return self.finish(False, "", exc.message, self.current)

    def _execute(self):
        if not self.steps:
            return self.finish(False, "", "无步骤", None)
        step = self.steps[0]
        text = self.vars["input"]
        while True:
            self.current = step["id"]  # past the step budget, the run fails here
            self.fuel.step()
            self.note("step_start", step["id"])
            # the engine's step timer: from this dispatch to its completion
            ms = step.get("timeout_ms")
            in_time, done = yield from with_deadline(self, self.dispatch(step, text, self.vars), ms)
            if in_time:
                ok, output, error, branch, jump, assigned = done
            else:
                self.current = step["id"]
                ok, output, error, branch, jump, assigned = False, "", "TIMEOUT after " + str(ms) + "ms", None, None, None
            record = {"id": step["id"], "status": "success" if ok else "failed", "output": output}
            if branch:
                record["branch"] = branch
            if not ok:
                record["error"] = error or ""
            self.records.append(record)
            self.note("step_end", step["id"], record["status"], error)
            self.completed(step["id"], output, ok, error, branch, assigned)
            if not ok:
                if _is_timeout(error):
                    return self.finish(False, output, error, step["id"])
                retry = step.get("retry")
                if retry is not None:
                    count = self.retries.get(step["id"], 0) + 1
                    if count < retry[0] + 1:
                        self.retries[step["id"]] = count
                        delay = retry[1] * (2 ** (count - 1)) if retry[2] == 2 else retry[1]
                        delay = max(0, min(60000, delay))
                        if delay > 0:
                            (yield from self.sleep(delay))
                        continue
                self.retries.pop(step["id"], None)
                action = step.get("on_error") or "fail"
                if action == "skip":
                    default = step.get("default_output")
                    out = default if default is not None else output
                    nxt = self.following(step)
                    if nxt is None:
                        return self.finish(True, out, None, None)
                    step, text = nxt, out
                    continue
                fallback = self.edges.route(step["id"], "fallback") if action == "fallback" else None
                if fallback in self.index:
                    step, text = self.steps[self.index[fallback]], (error or "") if _rta.is_blank(output) else output
                    continue
                return self.finish(False, output, error, step["id"])
            self.retries.pop(step["id"], None)
            if jump:
                if jump not in self.index:
                    return self.finish(False, output, f"invalid next_step '{jump}' from step '{step['id']}'",
                                       step["id"])
                step, text = self.steps[self.index[jump]], output
                continue
            nxt = self.route(step, branch)
            if nxt is None:
                return self.finish(True, output, None, None)
            step, text = nxt, output

    def route(self, step, key):
        if key:
            branches = self.arms(step)
            for k, target in branches:
                if k == key and target in self.index:
                    return self.steps[self.index[target]]
            for k, target in branches:
                if k == "_default" and target in self.index:
                    return self.steps[self.index[target]]
        return self.following(step)

    def following(self, step):
        """The step after ``step``: its sequence edge's target, else its
        fall-through's; None (the run completes) when it has neither or
        the target is not a step."""
        i = self.index.get(self.edges.successor.get(step["id"]))
        return None if i is None else self.steps[i]

    def arms(self, step):
        """A top-level step's branch edges ``[(key, target)...]`` (a
        sub-step has none: it routes nowhere)."""
        return () if step.get("sub") else self.edges.branches.get(step["id"], ())

    def finish(self, ok, output, error, step_id):
        self.result = {
            "status": "success" if ok else "failed",
            "outputs": {"output": output},
            "error": None if ok else {"message": error or "", "step": step_id},
            "steps": self.records,
            "calls": self.calls,
            "sleeps_ms": self.sleeps,
            "variables": _Obj([(k, v) for k, v in self.vars.items() if not k.startswith("steps.")]),
        }
        return self.result

    # ------------------------------------------------------------ one step
    def dispatch(self, step, text, variables):
        """(success, output, error, branch key, jump target, (var, value) or None)."""
        # every dispatch (a sub-step, a loop's iteration, a retry) is an iteration of fuel
        self.fuel.iterate()
        scope = None
        if step["type"] in _SCOPED or type(variables) is not _Obj:
            # its sub-steps see the variables as they are now (a while
            # body's plain dict becomes an ordered one on MicroPython): a copy
            scope = _Obj(variables)
            scope["input"] = text
        try:
            if scope is not None:
                params = _Obj(step["params"](scope))
            else:
                # only the parameters read them, at once: no copy (a copy
                # per step makes a run quadratic in its length)
                params = _Obj(_with_input(step["params"], variables, text))
        except _rta.AevatarError as exc:
            return False, "", exc.message, None, None, None
        for key in list(params):
            if key.endswith("_step_type") or key == "step":
                params[key] = _canonical(params[key])
        body = self.primitive(step, params, text, scope)
        if step["type"] not in _NO_DEADLINE and params.get("timeout_ms") is not None:
            body = _deadline(body, _int(params, ("timeout_ms",), 0, 100, 600000))
        try:
            return (yield from body)
        except StepFailure as exc:
            return False, exc.output, exc.message, None, None, None

    def primitive(self, step, params, text, scope):
        """One dispatch of ``step`` by its type (a generator): (success,
        output, error, branch key, jump target, (var, value) or None).
        Primitives without effects are plain functions (_PURE), the others
        generators (_EFFECTS); a type neither knows is an extension's host call."""
        t = step["type"]
        pure = _PURE.get(t)
        if pure is not None:
            return pure(self, step, params, text)
        return (yield from _EFFECTS.get(t, _do_extension)(self, step, params, text, scope))

    # ------------------------------------------------------------ host-backed primitives
    def llm(self, step, params, text, role):
        agent_type = params.get("agent_type")
        if agent_type is not None and not _rta.is_blank(agent_type):
            out = (yield from self.call("agent", _rta.trim(agent_type), _pairs(("input", text), ("parameters", params))))
            return _text(out)
        prompt = text
        prefix = params.get("prompt_prefix")
        if prefix is not None and not _rta.is_blank(prefix):
            prompt = _rstrip_ws(prefix) + "\n\n" + text
        role = role or "assistant"
        args = _pairs(("prompt", prompt))
        config = self.plan.get("roles", {}).get(role)
        if config:
            args["role"] = config
        return _text((yield from self.call("llm", role, args)))

    def connector(self, step, params, text):
        name = _rta.trim(_get(params, ("connector", "connector_name")))
        if not name:
            raise StepFailure("connector_call missing required parameter: connector")
        allowed = string_list(params.get("allowed_connectors", ""))
        role = self.plan.get("roles", {}).get(step.get("role") or "")
        if role and role.get("connectors"):
            allowed = role["connectors"]
        if allowed and _rta.upper(name) not in [_rta.upper(a) for a in allowed]:
            raise StepFailure("connector '" + name + "' is not allowed for this role (allowed: " +
                              ", ".join(allowed) + ")")
        args = _pairs(("operation", _get(params, ("operation", "action"))), ("payload", text),
                      ("parameters", params))
        try:
            out = (yield from self.call("connector", name, args))
        except StepFailure:
            if params.get("on_error", "fail").lower() == "continue":
                return True, text, None, None, None, None
            raise
        if params.get("pass_through_input", "false").lower() == "true":
            return True, text, None, None, None, None
        return True, _text(out), None, None, None, None

    def evaluate(self, step, params, text, role):
        criteria = params.get("criteria", "quality")
        scale = params.get("scale", "1-5")
        threshold = _rta.try_parse_double(params.get("threshold", "3"))
        reply = _text((yield from self.call("llm", role or "assistant", _pairs(
            ("prompt", "Evaluate the following against: " + criteria + " (scale " + scale + ")\n\n" + text),
            ("purpose", "evaluate"), ("criteria", criteria), ("scale", scale)))))
        score = _first_number(reply)
        below = params.get("on_below", "")
        key = below if (score is not None and threshold is not None and score < threshold and below) else None
        return True, text, None, key, None, None

    def reflect(self, step, params, text, role):
        rounds = _int(params, ("max_rounds",), 3, 1, 100)
        criteria = params.get("criteria", "quality and correctness")
        role = role or "assistant"
        draft = _text((yield from self.call("llm", role, _pairs(("prompt", text), ("purpose", "draft")))))
        for _ in range(rounds):
            critique = _text((yield from self.call("llm", role, _pairs(
                ("prompt", "Critique against: " + criteria + "\n\n" + draft), ("purpose", "critique")))))
            if "PASS" in _rta.upper(critique):
                break
            draft = _text((yield from self.call("llm", role, _pairs(
                ("prompt", "Improve the draft.\n\nDraft:\n" + draft + "\n\nCritique:\n" + critique),
                ("purpose", "draft")))))
        return True, draft, None, None, None, None

    # ------------------------------------------------------------ composites
    def sub(self, sub, text, scope, params=None):
        """Run one sub-step (a region node) on ``text``: (success, output, error)."""
        step = {"id": sub["id"], "type": sub["type"], "role": sub.get("role"), "params": sub["params"],
                "capability": sub.get("capability"), "name": sub.get("name"), "regions": sub.get("regions"),
                "sub": True}
        if params is not None:
            step["params"] = lambda _V, p=params: list(p.items())
        self.note("step_start", sub["id"])
        ok, out, err, _branch, _jump, _assigned = (yield from self.dispatch(step, text, scope))
        self.records.append({"id": sub["id"], "status": "success" if ok else "failed", "output": out})
        self.note("step_end", sub["id"], "success" if ok else "failed", err)
        self.vars[sub["id"]] = out
        return ok, out, err

    def loop(self, step, params, text):
        try:
            limit = max(1, min(1000000, int(params.get("max_iterations", "10").strip())))
        except ValueError:
            limit = 10
        body = _region(step, "body")[0]
        condition = step.get("condition")
        if condition is None:
            raise StepFailure("while step " + step["id"] + " has no condition")
        current = text
        i = 0
        while True:
            iteration_vars = {"output": current, "input": current, "iteration": str(i), "max_iterations": str(limit)}
            sub = dict(body, id=step["id"] + "_iter_" + str(i))
            ok, out, err = (yield from self.sub(sub, current, iteration_vars))
            if not ok:
                return False, out, err, None, None, None
            i += 1
            after = {"output": out, "input": out, "iteration": str(i), "max_iterations": str(limit)}
            if i >= limit or not _rta.is_truthy(condition(after)):
                return True, out, None, None, None, None
            current = out

    def foreach(self, step, params, text, scope):
        if _rta.trim(params.get("items_source", "")).lower() == "input_file_refs":
            # newer generation: one item per run input file (its file ref as JSON)
            items = [_text(ref) for ref in self.file_refs]
        else:
            items = split_items(text, _escaped(_get(params, ("delimiter", "separator"), SEP), SEP))
        if not items and params.get("items") is not None:
            items = string_list(params["items"])
        if not items:
            return True, "", None, None, None, None
        body = _region(step, "body")[0]
        if self.concurrent:
            subs = []
            for i, item in enumerate(items):
                item_scope = _Obj(scope)
                item_scope["input"] = _rta.trim(item)
                item_scope["output"] = _rta.trim(item)
                subs.append(self.sub(dict(body, id=step["id"] + "_item_" + str(i)), _rta.trim(item), item_scope))
            got, _stopped = yield from self.gather(subs, _workers(params), None)
            all_ok = all(ok for ok, _out, _err in got)
            merged = SEP.join(out for _ok, out, _err in got)
            return all_ok, merged, None if all_ok else "foreach: an item failed", None, None, None
        outs = []
        all_ok = True
        for i, item in enumerate(items):
            sub = dict(body, id=step["id"] + "_item_" + str(i))
            item_scope = _Obj(scope)
            item_scope["input"] = _rta.trim(item)
            item_scope["output"] = _rta.trim(item)
            ok, out, _err = (yield from self.sub(sub, _rta.trim(item), item_scope))
            all_ok = all_ok and ok
            outs.append(out)
        merged = SEP.join(outs)
        return all_ok, merged, None if all_ok else "foreach: an item failed", None, None, None

    def fan_out(self, step, params, text, scope, race):
        workers = _region(step, "workers", True)
        if not workers:
            raise StepFailure(("race" if race else "parallel") + ": no workers and no target role")
        if self.concurrent:
            return (yield from self.fan_out_concurrent(step, params, text, scope, race, workers))
        outs = []
        errors = []
        for worker in workers:
            ok, out, err = (yield from self.sub(worker, text, scope))
            if race:
                if ok:
                    return True, out, None, None, None, None
                errors.append(err)
                continue
            outs.append(out)
            if not ok:
                errors.append(err)
        if race:
            raise StepFailure("all race branches failed")
        merged = SEP.join(outs)
        vote_region = _subs(step, "vote")
        if vote_region:
            ok, out, err = (yield from self.sub(vote_region[0], merged, scope))
            return ok, out, err, None, None, None
        return not errors, merged, errors[0] if errors else None, None, None, None

    def fan_out_concurrent(self, step, params, text, scope, race, workers):
        """parallel / race with the workers as sibling tasks: a race's first
        success wins (the others are cancelled); parallel joins the outputs
        in arrival order, as the engine does."""
        subs = [self.sub(worker, text, scope) for worker in workers]
        got, stopped = yield from self.gather(subs, _workers(params), _succeeded if race else None)
        if race:
            if stopped:
                return True, got[-1][1], None, None, None, None
            raise StepFailure("all race branches failed")
        outs = [out for _ok, out, _err in got]
        errors = [err for ok, _out, err in got if not ok]
        merged = SEP.join(outs)
        vote_region = _subs(step, "vote")
        if vote_region:
            ok, out, err = yield from self.sub(vote_region[0], merged, scope)
            return ok, out, err, None, None, None
        return not errors, merged, errors[0] if errors else None, None, None, None

    def gather(self, gens, limit, stop):
        """Run the generators ``gens`` (sub-steps) as child tasks, at most
        ``limit`` at a time, started in order; ([their values in arrival
        order], stopped): when ``stop(value)`` holds the others are cancelled
        and stopped is true. A child's exception (fuel) is raised here."""
        current = self.current
        running = []
        got = []
        nxt = 0
        while nxt < len(gens) or running:
            while nxt < len(gens) and len(running) < limit:
                running.extend((yield Spawn([self._child(gens[nxt], current)])))
                nxt += 1
            for task in (yield Wait(list(running), True)):
                running.remove(task)
                value = task.result()
                got.append(value)
                if stop is not None and stop(value):
                    yield Cancel(running)
                    self.current = current
                    return got, True
        self.current = current
        return got, False

    def _child(self, gen, current):
        self.current = current  # a fuel failure in a worker names the top-level step
        return (yield from gen)

    def map_reduce(self, step, params, text, scope):
        items = split_items(text, _escaped(_get(params, ("delimiter", "separator"), SEP), SEP))
        if not items and params.get("items") is not None:
            items = string_list(params["items"])
        mapper = _region(step, "map")[0]
        if self.concurrent:
            subs = [self.sub(dict(mapper, id=step["id"] + "_map_" + str(i)), _rta.trim(item), scope)
                    for i, item in enumerate(items)]
            got, stopped = yield from self.gather(subs, _workers(params), _failed)
            if stopped:
                _ok, out, err = got[-1]
                return False, out, err, None, None, None
            outs = [out for _ok, out, _err in got]
            items = []  # the mappers ran: go on to the reduce
        else:
            outs = []
        for i, item in enumerate(items):
            ok, out, err = (yield from self.sub(dict(mapper, id=step["id"] + "_map_" + str(i)), _rta.trim(item), scope))
            if not ok:
                return False, out, err, None, None, None
            outs.append(out)
        merged = SEP.join(outs)
        reducer = _subs(step, "reduce")
        if not reducer:
            return True, merged, None, None, None, None
        ok, out, err = (yield from self.sub(reducer[0], merged, scope))
        return ok, out, err, None, None, None


# Steps whose parameters.timeout_ms is not a limit on each host call: a
# wait_signal's and a human_input's is their own wait timer (see primitive),
# a human_approval's only travels with the suspension.
_NO_DEADLINE = ("human_input", "secure_input", "human_approval", "wait_signal")


# Step types whose sub-steps read the variables after the parameters do.
_SCOPED = ("foreach", "parallel", "race", "map_reduce", "cache")


# ---------------------------------------------------------------- the primitives
# Each returns the dispatch's outcome: (success, output, error, branch key,
# jump target, (var, value) or None); a failure raises StepFailure.

def _done(output):
    return True, output, None, None, None, None


def _do_assign(run, step, params, text):
    value = params.get("value", "")
    resolved = text if value.startswith("$") else value
    target = params.get("target", "")
    return True, resolved, None, None, None, ((target, resolved) if not _rta.is_blank(target) else None)


def _do_conditional(run, step, params, text):
    return True, text, None, _rta.conditional_test(params.get("condition", "default"), text), None, None


def _do_switch(run, step, params, text):
    candidates = [k[len("branch."):] for k in params if k.lower().startswith("branch.")]
    for k, _target in run.arms(step):
        if k not in candidates:
            candidates.append(k)
    return True, text, None, switch_key(params.get("on"), text, candidates), None, None


def _do_guard(run, step, params, text):
    passed, reason = guard(params, text)
    if passed:
        return _done(text)
    on_fail = params.get("on_fail", "fail")
    if on_fail == "skip":
        return _done(text)
    if on_fail == "branch" and "branch_target" in params:
        return True, text, None, None, params["branch_target"], None
    raise StepFailure("guard check '" + params.get("check", "not_empty") + "' failed: " + reason)


_PURE = {
    "assign": _do_assign,
    "conditional": _do_conditional,
    "switch": _do_switch,
    "guard": _do_guard,
    "transform": lambda run, step, params, text: _done(transform(params.get("op", "identity"), text, params)),
    "retrieve_facts": lambda run, step, params, text: _done(retrieve_facts(text, params)),
    "vote": lambda run, step, params, text: _done(vote(text)),
}


def _do_delay(run, step, params, text, scope):
    ms = _int(params, ("duration_ms", "duration", "delay_ms"), 1000, 0, 300000)
    (yield from run.sleep(ms))
    return _done(text)


def _do_llm_call(run, step, params, text, scope):
    return _done((yield from run.llm(step, params, text, step.get("role"))))


def _do_tool_call(run, step, params, text, scope):
    tool = _rta.trim(params.get("tool", ""))
    if not tool:
        raise StepFailure("tool_call 缺少 tool 参数")
    raw = params.get("arguments")
    raw = raw if raw is not None and not _rta.is_blank(raw) else ("{}" if _rta.is_blank(text) else text)
    data = _parse_json(raw)
    args = data if isinstance(data, dict) else {"arguments": raw}
    return _done(_text((yield from run.call("tool", tool, args))))


def _do_human_input(run, step, params, text, scope):
    # past the suspension's timeout the engine resumes with no input: a timeout
    in_time, reply = yield from with_deadline(run, run.call(
        "human", "input" if step["type"] == "human_input" else "secure_input",
        _pairs(("prompt", _get(params, ("prompt", "message"))),
               ("variable", params.get("variable", "user_input")))), _suspension_ms(params, 1800))
    if not in_time or reply is None:
        if params.get("on_timeout", "fail") == "fail":
            raise StepFailure("Human input timed out")
        return _done(text)
    return _done(_text(reply))


def _do_human_approval(run, step, params, text, scope):
    answer = (yield from run.call("human", "approval", _pairs(("prompt", _get(params, ("prompt", "message"))),
                                                              ("content", text))))
    approved, content = _approval(answer)
    if approved:
        return True, content if content is not None else text, None, "true", None, None
    if params.get("on_reject", "fail") == "fail":
        raise StepFailure("human approval rejected", text)
    return True, text, None, "false", None, None


def _do_wait_signal(run, step, params, text, scope):
    name = _rta.lower(_get(params, ("signal_name", "signal"), "default"))
    wait = _signal_wait_ms(params)
    in_time, payload = yield from with_deadline(
        run, run.call("signal", name, {"prompt": _get(params, ("prompt", "message"))}), wait)
    if not in_time:  # the module's own timer
        raise StepFailure("signal '" + name + "' timed out after " + str(wait) + "ms")
    if payload is None:
        raise StepFailure("signal '" + name + "' timed out after " + str(
            _int(params, ("timeout_ms",), 0, 0, 2 ** 31 - 1)) + "ms")
    out = _text(payload)
    return _done(out if out else text)


def _do_checkpoint(run, step, params, text, scope):
    (yield from run.call("checkpoint", _get(params, ("name",), step["id"]), {"input": text}))
    return _done(text)


def _do_emit(run, step, params, text, scope):
    (yield from run.call("event", _get(params, ("event_type",), "custom"), {"payload": _get(params, ("payload",), text)}))
    return _done(text)


def _do_workflow_call(run, step, params, text, scope):
    name = _rta.trim(params.get("workflow", ""))
    if not name:
        raise StepFailure("workflow_call 缺少 workflow 参数")
    out = (yield from run.call("workflow", name, _pairs(("input", text),
                                                        ("lifecycle", params.get("lifecycle", "singleton")))))
    return _done(_text(out))


def _do_cache(run, step, params, text, scope):
    key = params.get("cache_key") or text
    if key in run.cache:
        return _done(run.cache[key])
    sub = _region(step, "child")[0]
    ok, out, err = (yield from run.sub(sub, text, scope))
    if ok:
        run.cache[key] = out
    return ok, out, err, None, None, None


def _do_extension(run, step, params, text, scope):
    # lease, notify, http_request, self_reschedule and extension primitives
    capability = step.get("capability") or "extension"
    out = (yield from run.call(capability, step.get("name") or step["type"],
                               _pairs(("input", text), ("parameters", params))))
    return _done(_text(out))


_EFFECTS = {
    "delay": _do_delay,
    "llm_call": _do_llm_call,
    "tool_call": _do_tool_call,
    "connector_call": lambda run, step, params, text, scope: run.connector(step, params, text),
    "secure_connector_call": lambda run, step, params, text, scope: run.connector(step, params, text),
    "human_input": _do_human_input,
    "secure_input": _do_human_input,
    "human_approval": _do_human_approval,
    "wait_signal": _do_wait_signal,
    "checkpoint": _do_checkpoint,
    "emit": _do_emit,
    "workflow_call": _do_workflow_call,
    "evaluate": lambda run, step, params, text, scope: run.evaluate(step, params, text, step.get("role")),
    "while": lambda run, step, params, text, scope: run.loop(step, params, text),
    "foreach": lambda run, step, params, text, scope: run.foreach(step, params, text, scope),
    "parallel": lambda run, step, params, text, scope: run.fan_out(step, params, text, scope, False),
    "race": lambda run, step, params, text, scope: run.fan_out(step, params, text, scope, True),
    "map_reduce": lambda run, step, params, text, scope: run.map_reduce(step, params, text, scope),
    "cache": _do_cache,
    "reflect": lambda run, step, params, text, scope: run.reflect(step, params, text, step.get("role")),
}


def _with_input(params, variables, text):
    """``params(variables)`` as if ``variables["input"]`` were ``text``: the
    value is swapped in and back (keys keep their order) instead of copying
    every variable."""
    had = "input" in variables
    saved = variables.get("input")
    variables["input"] = text
    try:
        return params(variables)
    finally:
        if had:
            variables["input"] = saved
        else:
            del variables["input"]


def _deadline(body, ms):
    """``body`` (a step's generator) with ``ms`` as the deadline of each host
    call it makes: the step's ``timeout_ms``, enforced by drivers with a
    clock (asyncio, virtual time); the sync driver has none."""
    answer = None
    try:
        while True:
            try:
                item = body.send(answer)
            except StopIteration as stop:
                return stop.args[0] if stop.args else None
            if isinstance(item, Call) and item.timeout_ms is None:
                item.timeout_ms = ms
            answer = yield item
    finally:
        body.close()


def _signal_wait_ms(params):
    """wait_signal's own timer (the engine's module): ``timeout_ms`` (0..1 h),
    else ``timeout_seconds`` / ``timeout`` in seconds; at least 100 ms; None: none."""
    ms = _int(params, ("timeout_ms",), 0, 0, 3600000)
    if ms <= 0:
        ms = _int(params, ("timeout_seconds", "timeout"), 0, 0, 3600) * 1000
    return max(100, ms) if ms > 0 else None


def _suspension_ms(params, default_seconds):
    """The timeout a human suspension carries (the engine's
    ResolveTimeoutSeconds): ``timeout`` / ``timeout_seconds`` (1 s..1 day),
    else ``timeout_ms`` rounded up to seconds, else ``default_seconds``."""
    if params.get("timeout") is not None or params.get("timeout_seconds") is not None:
        seconds = _int(params, ("timeout", "timeout_seconds"), default_seconds, 1, 86400)
    else:
        ms = _int(params, ("timeout_ms",), 0, 0, 86400000)
        seconds = max(1, min(86400, (ms + 999) // 1000)) if ms > 0 else default_seconds
    return seconds * 1000


def _workers(params):
    """How many workers of a composite run at once (max_concurrent_workers, 1..20)."""
    return _int(params, ("max_concurrent_workers",), 20, 1, 20)


def _succeeded(outcome):
    return outcome[0]


def _failed(outcome):
    return not outcome[0]


def _subs(step, name):
    """The sub-steps of region ``name`` of ``step`` (its ``[name, graph]``
    pairs), or None when it has no such region."""
    for region in step.get("regions") or ():
        if region[0] == name:
            return region[1]["nodes"]
    return None


def _region(step, name, may_be_empty=False):
    """The sub-steps of a composite; a step failure when it has none (a
    composite that is itself a sub-step has no sub-steps of its own)."""
    subs = _subs(step, name)
    if subs is None or (not subs and not may_be_empty):
        raise StepFailure(step["type"] + " step " + step["id"] + " has no " + name +
                          " sub-steps (a composite nested in a composite does not run)")
    return subs


def _rstrip_ws(s):
    end = len(s)
    while end > 0 and s[end - 1] in _rta.WHITESPACE:
        end -= 1
    return s[:end]


def _first_number(text):
    token = ""
    for ch in text + " ":
        if ch in "0123456789.-" and (ch != "-" or not token):
            token += ch
        elif token:
            n = _rta.try_parse_double(token)
            if n is not None:
                return n
            token = ""
    return None


def _approval(answer):
    """(approved, edited content or None) from a host's approval answer."""
    if isinstance(answer, dict):
        approved = answer.get("approved")
        content = answer.get("content")
        return approved is True or _rta.try_parse_bool(_text(approved)) is True, (
            None if content is None else _text(content))
    if isinstance(answer, bool):
        return answer, None
    text = _rta.lower(_rta.trim(_text(answer)))
    return text in ("true", "approve", "approved", "yes"), None


_ALIASES = {
    "loop": "while", "sub_workflow": "workflow_call", "for_each": "foreach", "foreach_llm": "foreach",
    "parallel_fanout": "parallel", "fan_out": "parallel", "mapreduce": "map_reduce",
    "map_reduce_llm": "map_reduce", "judge": "evaluate", "select": "race", "assert": "guard",
    "sleep": "delay", "publish": "emit", "wait": "wait_signal", "bridge_call": "connector_call",
    "cli_call": "connector_call", "mcp_call": "connector_call", "http_get": "connector_call",
    "http_post": "connector_call", "http_put": "connector_call", "http_delete": "connector_call",
    "secure_connector": "secure_connector_call", "secret_input": "secure_input", "vote_consensus": "vote",
    "mutex": "lease", "schedule_workflow": "self_reschedule", "execute_codex": "tool_call",
}


def _canonical(raw):
    t = _rta.lower(_rta.trim(raw or ""))
    return _ALIASES.get(t, t)


def new_run(plan, inputs, trigger=None, payload=None, max_iterations=None, max_host_calls=None, concurrent=False,
            max_instructions=None):
    """The run of ``plan``, not started, in the form the plan schedulers
    share (dataflow_run.new_run), by which the VM starts a run of either;
    a kernel run has no trigger, so ``trigger`` and ``payload`` go unused."""
    return Run(plan, inputs, None, MAX_STEPS, max_iterations, max_host_calls, concurrent, max_instructions)


def run(plan, inputs, host, max_steps=MAX_STEPS, max_iterations=None, max_host_calls=None):
    """Run ``plan`` with ``inputs`` ({"input": prompt, other run parameters})
    against ``host``; return the run record. Past ``max_iterations`` step
    dispatches or ``max_host_calls`` host calls the run fails ("fuel exhausted")."""
    r = Run(plan, inputs, None, max_steps, max_iterations, max_host_calls)
    return drive_sync(r, host)


def drive_sync(r, host):
    """The record of run ``r`` answered by ``host`` one request at a time."""
    return _drivers.drive_sync(r, host)


def run_async(plan, inputs, host, max_steps=MAX_STEPS, max_iterations=None, max_host_calls=None,
              concurrent=True):
    """A coroutine: the record of the run driven by asyncio (``host.call``
    may be a coroutine). ``concurrent=False`` keeps the sequential order
    (the record of :func:`run` for the same answers)."""
    from flowc.runtime.aio import drive_async

    r = Run(plan, inputs, None, max_steps, max_iterations, max_host_calls, concurrent)
    return drive_async(r, host)


def run_virtual(plan, inputs, script, max_steps=MAX_STEPS, max_iterations=None, max_host_calls=None,
                concurrent=True):
    """The record of the run on a virtual clock (``script``: see
    :class:`flowc.runtime.drivers.VirtualHost`, or an object with its ``answer``)."""
    host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
    r = Run(plan, inputs, None, max_steps, max_iterations, max_host_calls, concurrent)
    return _drivers.drive_virtual(r, host)
