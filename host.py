"""The host: the only way a compiled workflow touches the world.

A run never performs I/O, reads a clock or sleeps by itself. Every effect is
one call on the object passed as ``host`` (see docs/host.md):

``host.call(capability, name, args) -> value``
    Perform one effect. ``capability`` says what kind of thing ``name`` is:
    ``"tool"`` for WorkflowSkill tool steps; other dialects add ``"llm"``,
    ``"http"``, ``"mcp"``, ``"memory"``, ``"human"``, ``"signal"`` ...
    ``args`` is a plain JSON object (dict of JSON values, never mutated by the
    run; a host must not mutate it either). The return value is the call's
    output, a plain JSON value; the run never mutates it either, so a host
    may hand out a value it keeps (no copy needed).

    To report that the capability ran and failed (a tool's ``{error}``
    result), raise :class:`ToolError`: it is retriable under a step's retry
    policy. Any other exception means the host itself failed; it is never
    retried. The run records both as a failure of the step, never as a crash.

``host.sleep(ms)``
    Pause for ``ms`` milliseconds (a retry back-off, a delay between
    iterations). ``ms`` is a non-negative number, an int when whole.

This module uses the standard library only: generated modules import it
for their ``__main__`` block.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Protocol

from flowc.sourcefile import FileTooLarge, read_limited

__all__ = [
    "MAX_JSON_DEPTH",
    "Host",
    "HostError",
    "HostFailure",
    "ScriptError",
    "ScriptedHost",
    "ToolError",
    "encoding_hint",
    "load_host_script",
    "load_inputs_file",
    "load_json_file",
    "loads_json",
    "parse_budget",
    "write_json",
]

# How deep the JSON files of a command line (inputs, host scripts) may nest:
# flowc.ir.limits.MAX_VALUE_DEPTH (this module imports no flowc module;
# tests/test_runtime_limits.py keeps the two equal).
MAX_JSON_DEPTH = 64


class HostError(Exception):
    """A host call that produced no value. Use one of the two subclasses."""

    retriable = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolError(HostError):
    """The capability ran and reported an error (a tool's ``{"error": ...}``
    result). Retriable: a step's retry policy calls again."""

    retriable = True


class HostFailure(HostError):
    """The host itself failed (no adapter, a crash, a refused call). Not
    retriable. Any exception other than :class:`ToolError` counts as this."""

    retriable = False


class Host(Protocol):
    """What a run needs from its host."""

    def call(self, capability: str, name: str, args: dict) -> Any: ...

    def sleep(self, ms: float) -> None: ...


class ScriptError(ValueError):
    """A host script that is not of the documented form."""


# --------------------------------------------------------------- the script
#
#   SCRIPT = { "<name>": SPEC, "<capability>:<name>": SPEC, "*": SPEC }
#   SPEC   = {"output": X} | {"error": "msg"} | {"output": X, "error": "msg"}
#          | {"throw": "msg"} | {"echo": true}
#          | [SPEC, SPEC, ...]                 one per call, the last repeats
#          | {"match": [{"args": SUBSET, "result": SPEC}, ...], "default": SPEC}
#          | any other JSON value              shorthand for {"output": value}


class _Spec:
    def answer(self, host: ScriptedHost, capability: str, name: str, args: dict) -> Any:
        raise NotImplementedError


class _Result(_Spec):
    def __init__(self, output: Any, error: Any) -> None:
        self.output = output
        self.error = error

    def answer(self, host, capability, name, args):
        if self.error:  # an empty error counts as success, as in the reference
            raise ToolError(self.error if isinstance(self.error, str) else json.dumps(self.error))
        return host._out(self.output)


class _Throw(_Spec):
    def __init__(self, message: str) -> None:
        self.message = message

    def answer(self, host, capability, name, args):
        raise HostFailure(self.message)


class _Echo(_Spec):
    def answer(self, host, capability, name, args):
        return _copy(args)


class _Sequence(_Spec):
    def __init__(self, specs: list[_Spec]) -> None:
        self.specs = specs
        self.next = 0

    def answer(self, host, capability, name, args):
        spec = self.specs[min(self.next, len(self.specs) - 1)]
        self.next += 1
        return spec.answer(host, capability, name, args)


class _Match(_Spec):
    def __init__(self, cases: list[tuple[dict, _Spec]], default: _Spec | None) -> None:
        self.cases = cases
        self.default = default

    def answer(self, host, capability, name, args):
        for pattern, spec in self.cases:
            if _matches(pattern, args):
                return spec.answer(host, capability, name, args)
        if self.default is not None:
            return self.default.answer(host, capability, name, args)
        raise HostFailure(f"the host script has no result for {_label(capability, name)} with these "
                          f"arguments: {_short_json(args)}")


def _parse_spec(value: Any, where: str) -> _Spec:
    if isinstance(value, list):
        if not value:
            raise ScriptError(f"{where}: a list of results must not be empty")
        return _Sequence([_parse_spec(v, f"{where}[{i}]") for i, v in enumerate(value)])
    if isinstance(value, dict) and value:
        keys = set(value)
        if keys == {"throw"}:
            if not isinstance(value["throw"], str):
                raise ScriptError(f"{where}: \"throw\" must be a message string")
            return _Throw(value["throw"])
        if keys == {"echo"}:
            if value["echo"] is not True:
                raise ScriptError(f"{where}: \"echo\" must be true")
            return _Echo()
        if "match" in keys and keys <= {"match", "default"}:
            cases = value["match"]
            if not isinstance(cases, list):
                raise ScriptError(f"{where}: \"match\" must be a list of {{\"args\": ..., \"result\": ...}}")
            parsed = []
            for i, case in enumerate(cases):
                here = f"{where}.match[{i}]"
                if not (isinstance(case, dict) and set(case) == {"args", "result"}
                        and isinstance(case["args"], dict)):
                    raise ScriptError(f"{here}: each case must be {{\"args\": {{...}}, \"result\": SPEC}}")
                parsed.append((case["args"], _parse_spec(case["result"], f"{here}.result")))
            default = _parse_spec(value["default"], f"{where}.default") if "default" in value else None
            return _Match(parsed, default)
        if keys <= {"output", "error"}:
            error = value.get("error")
            if error is not None and not isinstance(error, str):
                raise ScriptError(f"{where}: \"error\" must be a message string")
            return _Result(value.get("output"), error)
    return _Result(value, None)


def _matches(pattern: Any, value: Any) -> bool:
    """Does ``value`` contain ``pattern``? Objects match by subset (every key
    of the pattern, recursively); everything else by JSON equality."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(k in value and _matches(v, value[k]) for k, v in pattern.items())
    if isinstance(pattern, list):
        return (isinstance(value, (list, tuple)) and len(value) == len(pattern)
                and all(_matches(p, v) for p, v in zip(pattern, value)))
    if isinstance(pattern, bool) or isinstance(value, bool):
        return pattern is value
    if isinstance(pattern, (int, float)) and isinstance(value, (int, float)):
        return pattern == value
    return type(pattern) is type(value) and pattern == value


def _copy(value: Any) -> Any:
    """A fresh copy of a JSON-shaped value."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


def _label(capability: str, name: str) -> str:
    return f'{capability.capitalize()} "{name}"'


def _short_json(value: Any, limit: int = 200) -> str:
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ScriptedHost:
    """A host that answers from a script (a JSON object; see docs/host.md).

    Calls are looked up by ``"<capability>:<name>"``, then (for capability
    ``tool``) by the bare ``"<name>"``, then ``"*"``. A call nothing answers
    fails like the reference runtime's unregistered tool: a tool error
    ``Tool "<name>" not registered``. Every call is logged in :attr:`calls`
    and every sleep in :attr:`sleeps`; nothing ever sleeps.

    Outputs are the scripted values themselves, not copies: a run never
    mutates what its host gives it (see :class:`Host`; tests check it for
    every dialect and both backends), so the script stays as it was and a
    100,000-record answer costs nothing to hand out. Code that changes
    answers in place passes ``copy_outputs=True`` to get a fresh copy of
    every answer.
    """

    def __init__(self, script: dict | None = None, *, copy_outputs: bool = False) -> None:
        if script is None:
            script = {}
        if not isinstance(script, dict):
            raise ScriptError(f"a host script must be a JSON object, not {type(script).__name__}")
        self.copy_outputs = copy_outputs
        self._specs: dict[str, _Spec] = {}
        for key, value in script.items():
            if not isinstance(key, str):
                raise ScriptError(f"host script keys must be strings, not {type(key).__name__}")
            self._specs[key] = _parse_spec(value, json.dumps(key, ensure_ascii=False))
        self.calls: list[dict] = []
        self.sleeps: list[float] = []

    @classmethod
    def from_file(cls, path: str, **options: Any) -> ScriptedHost:
        return cls(load_json_file(path, "host script"), **options)

    def _out(self, value: Any) -> Any:
        return _copy(value) if self.copy_outputs else value

    def _spec_for(self, capability: str, name: str) -> _Spec | None:
        spec = self._specs.get(f"{capability}:{name}")
        if spec is None and capability == "tool":
            spec = self._specs.get(name)
        if spec is None:
            spec = self._specs.get("*")
        return spec

    def call(self, capability: str, name: str, args: dict) -> Any:
        self.calls.append({"capability": capability, "name": name, "args": _copy(args)})
        spec = self._spec_for(capability, name)
        if spec is None:
            raise ToolError(f"{_label(capability, name)} not registered")
        return spec.answer(self, capability, name, args)

    def sleep(self, ms: float) -> None:
        self.sleeps.append(ms)


_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def encoding_hint(data: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when ``data`` looks like text in that
    encoding (a byte order mark, or NUL bytes in every other position of its
    start, as ASCII text saved as UTF-16 has), else None."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[:200]
    if len(head) >= 4 and b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if even.count(0) >= len(even) * 0.8 or odd.count(0) >= len(odd) * 0.8:
            return "UTF-16"
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _nests_deeper(value: Any, limit: int) -> bool:
    """Do arrays and objects nest more than ``limit`` levels in ``value``?
    (Iterative: the check itself cannot overflow the stack.)"""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def load_json_file(path: str, what: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Read a JSON file; raise ``ValueError`` with a clear one-line message
    (naming ``what``, the file and the position) when it can't be read or
    parsed, holds ``NaN`` or ``Infinity`` (not JSON), or nests arrays and
    objects more than ``max_depth`` levels deep."""
    # Imported here: the limits table needs attrs, which a compiled module's
    # run never loads (only its command line reads files).
    from flowc.ir.limits import MAX_SOURCE_BYTES

    try:
        data = read_limited(path, MAX_SOURCE_BYTES)
    except FileTooLarge:
        raise ValueError(f"the {what} {path} is larger than {MAX_SOURCE_BYTES} bytes") from None
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    hint = encoding_hint(data)
    if hint is not None:
        raise ValueError(f"the {what} {path} looks {hint}, not UTF-8: save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the {what} {path} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return loads_json(text, f"the {what} {path}", max_depth)


def loads_json(text: str, what: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON ``text``; raise ``ValueError`` with a one-line message
    beginning with ``what`` when it is not valid JSON, holds ``NaN`` or
    ``Infinity``, or nests arrays and objects more than ``max_depth`` levels
    deep (which would overflow the stack of the code that reads it)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}") from None
    except RecursionError:
        raise ValueError(f"{what} nests more than {max_depth} levels deep") from None
    except ValueError as exc:  # NaN, Infinity; an integer of too many digits
        raise ValueError(f"{what} is not valid JSON: {_one_line(str(exc))}") from None
    if _nests_deeper(value, max_depth):
        raise ValueError(f"{what} nests more than {max_depth} levels deep")
    return value


def _one_line(text: str) -> str:
    from flowc.termtext import shown

    return shown(" ".join(text.split()))


def load_inputs_file(path: str | None) -> dict:
    """The inputs of a run from a command line's ``--inputs`` file ({} without
    one); ``ValueError`` (one line) unless it holds a JSON object."""
    if not path:
        return {}
    inputs = load_json_file(path, "inputs file")
    if not isinstance(inputs, dict):
        # a ValueError, as for every other problem of an input file
        raise ValueError(f"the inputs file {path} must hold a JSON object, not {_json_type(inputs)}")  # noqa: TRY004
    return inputs


def load_host_script(path: str | None, **options: Any) -> ScriptedHost:
    """A :class:`ScriptedHost` from a command line's ``--host`` file (an empty
    script without one); ``ValueError`` (one line) when the file is not a
    well-formed script."""
    script = load_json_file(path, "host script") if path else {}
    try:
        return ScriptedHost(script, **options)
    except ScriptError as exc:
        raise ValueError(f"the host script {path}: {_one_line(str(exc))}") from None
    except RecursionError:  # pragma: no cover - the depth limit comes first
        raise ValueError(f"the host script {path} nests too deeply") from None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else type(value).__name__


def parse_budget(text: str, flag: str) -> int:
    """A run budget from a command line (``--max-iterations N`` ...): a
    non-negative integer; ``ValueError`` (one line) otherwise."""
    try:
        value = int(text, 10)
    except (TypeError, ValueError):
        value = -1
    if value < 0:
        raise ValueError(f"{flag} takes a non-negative integer, not {text!r}")
    return value


def write_json(value: Any, *, sort_keys: bool = True) -> bool:
    """Print ``value`` as one line of JSON on stdout. A reader that went away
    (``... | head``) is no error: stdout is pointed at the null device so
    nothing more is written or reported, and the result is False."""
    from flowc.termtext import json_text

    text = json_text(json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, default=repr))
    return write_stdout(text + "\n")


def write_stdout(text: str) -> bool:
    """Write ``text`` to stdout; False (and stdout silenced) when the pipe is closed."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        return False
    return True


def silence_stdout() -> None:
    """After a closed pipe: point stdout at the null device, so the flush at
    exit does not fail again (the usual pattern, without signals)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind stdout
        pass


def script_main(run, argv=None, *, success: str = "success", triggers: bool = False,
                configured=None) -> int:
    """The command line of a compiled workflow module:
    ``python workflow.py --inputs in.json --host script.json [--trigger ID]
    [--max-iterations N] [--max-host-calls N]``.

    With ``configured`` (``flowc.hosts.runner.configured_main``) it also
    takes ``--config FILE`` / ``--mcp-config FILE`` instead of ``--host``: the
    run then goes to ``configured(config, mcp_config, inputs, trigger,
    budgets, success)``, which gives the exit status.

    Runs ``run(inputs, host, max_iterations=, max_host_calls=)`` (with the
    trigger too when the dialect has ``triggers``) with a :class:`ScriptedHost`
    and prints the run record as JSON. Exit status 0 when the run ends with
    ``success``, 1 otherwise, 2 for bad arguments or files (one line on
    stderr, never a traceback)."""
    import argparse

    parser = argparse.ArgumentParser(description="Run this compiled workflow with a scripted host.")
    parser.add_argument("--inputs", metavar="FILE", help="JSON object of workflow inputs")
    parser.add_argument("--host", metavar="FILE", help="host script (JSON; see flowc docs/host.md)")
    if triggers:
        parser.add_argument("--trigger", metavar="ID", help="the trigger that fires (default: the first)")
    parser.add_argument("--max-iterations", metavar="N",
                        help="fail the run after N loop iterations (fuel; default: flowc's budget)")
    parser.add_argument("--max-host-calls", metavar="N",
                        help="fail the run after N host calls, retries included (fuel)")
    if configured is not None:
        parser.add_argument("--config", metavar="FILE", help="host config, TOML: real MCP servers, HTTP tools "
                                                             "and LLM APIs (flowc docs/hosts.md)")
        parser.add_argument("--mcp-config", metavar="FILE", help="MCP servers as MCP clients write them, JSON")
    args = parser.parse_args(argv)
    real = configured is not None and bool(args.config or args.mcp_config)
    try:
        if real and args.host:
            raise ValueError("--host (a scripted host) and --config/--mcp-config (real tools) exclude each other")
        inputs = load_inputs_file(args.inputs)
        host = None if real else load_host_script(args.host)
        budgets = {}
        for flag, key in (("--max-iterations", "max_iterations"), ("--max-host-calls", "max_host_calls")):
            text = getattr(args, key)
            if text is not None:
                budgets[key] = parse_budget(text, flag)
    except ValueError as exc:
        print("error: " + _one_line(str(exc)), file=sys.stderr)
        return 2
    if real:
        return configured(args.config, args.mcp_config, inputs, getattr(args, "trigger", None), budgets, success)
    return run_and_print(lambda: run(inputs, host, args.trigger, **budgets) if triggers
                         else run(inputs, host, **budgets), (success,), "error: ")


def run_and_print(start, success: tuple, prefix: str, *, sort_keys: bool = True,
                  show=None) -> int:
    """Run ``start()`` (a run, giving its record), print the record (``show``
    or one line of JSON) and give the exit status: 0 when its status is in
    ``success``, 1 for any other run. A run that crashes (data nested past
    what Python can hold, a bug) is reported in one line and exits 1."""
    record = None
    try:
        record = start()
        if show is not None:
            show(record)
            sys.stdout.flush()
        else:
            write_json(record, sort_keys=sort_keys)
    except BrokenPipeError:  # a reader that went away is no error (see write_stdout)
        silence_stdout()
    except RecursionError:
        print(prefix + "the run's values nest too deeply", file=sys.stderr)
        return 1
    except MemoryError:
        print(prefix + "the run ran out of memory", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a command line reports, never shows a traceback
        print(prefix + "the run stopped: " + type(exc).__name__ + ": " + _one_line(str(exc)), file=sys.stderr)
        return 1
    if record is None:
        return 1
    return 0 if record["status"] in success else 1
