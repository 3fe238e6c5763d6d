"""Translation properties: own-dialect round trips and cross-dialect runs.

``translate-round-trip``: writing a workflow in its own dialect
(``flowc translate --to <its dialect>``) and compiling the text gives the
same IR modulo spans, and translating that again gives the same bytes.

``cross-dialect``: a workflow written in another dialect *natively or
through documented lowerings* (an emission without findings) checks clean
there and runs to the same result: the same outcome, the same workflow
outputs and the same host calls, in the same order. Approximate
translations (an emission with ``TRN`` findings) say themselves that the
meaning may differ, so they are not compared.
"""

from __future__ import annotations

import json

from flowc.testing.failures import PropertyFailure, _canonical, _crash

__all__ = ["available", "cross_dialect", "inputs_have_declared_shapes", "round_trip", "targets", "unavailable"]


def _translate():
    try:
        from flowc.pipeline import translate
    except ImportError:
        return None
    return translate


def unavailable(dialect: str) -> str | None:
    """Why translation properties can't run for ``dialect`` (None: they can)."""
    translate = _translate()
    if translate is None:
        return "flowc cannot translate yet"
    if dialect != "ir" and dialect not in translate.TARGETS:
        return f"no emitter for {dialect}"
    return None


def available(dialect: str) -> bool:
    return unavailable(dialect) is None


def targets(workflow) -> list[str]:
    translate = _translate()
    return [t for t in translate.TARGETS if t != workflow.dialect] if translate else []


def _file_name(workflow, dialect: str) -> str:
    translate = _translate()
    return "workflow" + translate.output_suffix(dialect, workflow)


def _emit(workflow, target: str, prop: str):
    translate = _translate()
    try:
        return translate.emit(workflow, target)
    except Exception as exc:  # noqa: BLE001 - an emitter crash is a finding
        _crash(prop, f"translating to {target}", exc)


def _compile(text: str, name: str, dialect: str, prop: str):
    from flowc.pipeline import driver

    try:
        return driver.compile_text(text, name, dialect)
    except Exception as exc:  # noqa: BLE001
        _crash(prop, f"compiling the {dialect} translation", exc)


def _errors(diags) -> str:
    return "; ".join(f"{d.code} {d.message}" for d in diags if d.is_error)


def _first_difference(a, b, path: str = "workflow") -> str:
    import attrs

    if type(a) is not type(b):
        return f"{path}: {a!r:.200} != {b!r:.200}"
    if isinstance(a, tuple):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    if attrs.has(type(a)):
        for f in attrs.fields(type(a)):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x != y:
                return _first_difference(x, y, f"{path}.{f.name}")
    return f"{path}: {a!r:.200} != {b!r:.200}"


def round_trip(workflow, dialect: str, file_name: str | None = None) -> None:
    """Own-dialect translation gives the same IR (modulo spans) and is idempotent.
    ``file_name`` is the source's (a WorkflowSkill name comes from it)."""
    from flowc.ir.expr import strip_spans

    prop = "translate-round-trip"
    emission = _emit(workflow, dialect, prop)
    if not emission.ok:
        raise PropertyFailure(prop, f"translating a valid {dialect} workflow to {dialect} reports errors: "
                              + _errors(emission.diagnostics))
    name = file_name or _file_name(workflow, dialect)
    again = _compile(emission.text, name, dialect, prop)
    if not again.ok:
        raise PropertyFailure(prop, f"the {dialect} translation does not check: {_errors(again.diagnostics)}\n"
                              f"--- translation\n{emission.text}")
    a, b = strip_spans(workflow), strip_spans(again.workflow)
    if a != b or a.metadata != b.metadata:
        raise PropertyFailure(prop, "the translation compiles to a different IR: "
                              f"{_first_difference(a, b)}\n--- translation\n{emission.text}")
    second = _emit(again.workflow, dialect, prop)
    if second.text != emission.text:
        raise PropertyFailure(prop, "translating the translation again gives different text\n"
                              f"--- first\n{emission.text}--- second\n{second.text}")


_OUTCOME = {"success": "ok", "completed": "ok", "failed": "failed"}


def _call(dialect: str, call: dict) -> tuple:
    """A host call as the dialects can agree on it. Each dialect has its own
    host protocol (docs/host.md, docs/aevatar.md, docs/instruction.md): an
    instruction tool step passes its kind fields (``{"name"?, "args": ...}``)
    and its arguments are ``args``; an LLM call is named by the aevatar role
    or the instruction kind, so it is compared by its prompt text."""
    capability, name, args = call["capability"], call["name"], call["args"]
    if dialect == "instruction" and capability == "tool" and isinstance(args, dict):
        args = args.get("args", {})
    if capability == "llm" and isinstance(args, dict):
        return capability, args.get("prompt", args.get("instruction"))
    return capability, name, args


def outcome(record: dict, dialect: str) -> dict:
    """What must agree across dialects: the outcome, the host calls in
    order, and the outputs of a successful run. (What a failed run outputs
    is the dialect's own: WorkflowSkill resolves its outputs, the
    instruction dialect has none.)"""
    status = _OUTCOME.get(record.get("status"), record.get("status"))
    outputs = record.get("outputs") if status == "ok" else None
    if status == "ok" and dialect == "instruction" and outputs is None:
        outputs = {}  # a finish without an output: no outputs, as a WorkflowSkill run that declares none
    return {
        "status": status,
        "outputs": outputs,
        "calls": [_call(dialect, c) for c in record.get("calls", [])],
    }


class _Recording:
    """A ScriptedHost that remembers each answer (a value, a tool error or
    a host failure) in call order."""

    def __init__(self, script: dict) -> None:
        from flowc.host import ScriptedHost

        self.inner = ScriptedHost(script)
        self.answers: list[tuple[str, object]] = []

    def call(self, capability, name, args):
        from flowc.host import ToolError

        try:
            value = self.inner.call(capability, name, args)
        except ToolError as exc:
            self.answers.append(("error", exc.message))
            raise
        except Exception as exc:
            self.answers.append(("throw", getattr(exc, "message", str(exc))))
            raise
        self.answers.append(("output", json.loads(json.dumps(value, default=repr))))
        return value

    def sleep(self, ms) -> None:
        self.inner.sleep(ms)


class _Replay:
    """Answers the k-th call with the source run's k-th answer, whatever the
    call's name: the translation may name the same request differently."""

    def __init__(self, answers: list[tuple[str, object]]) -> None:
        self.answers = answers
        self.next = 0

    def call(self, capability, name, args):
        from flowc.host import HostFailure, ToolError

        if self.next >= len(self.answers):
            raise HostFailure("the source run made no such call")
        kind, value = self.answers[self.next]
        self.next += 1
        if kind == "error":
            raise ToolError(value)
        if kind == "throw":
            raise HostFailure(value)
        return json.loads(json.dumps(value))

    def sleep(self, ms) -> None:
        pass


def _run(workflow, inputs: dict, host, prop: str, what: str) -> dict:
    from flowc.backends.python import compile_workflow, load_module

    try:
        return load_module(compile_workflow(workflow)).run(inputs, host)
    except Exception as exc:  # noqa: BLE001
        _crash(prop, f"running the {what}", exc)


def inputs_have_declared_shapes(workflow, inputs: dict) -> bool:
    """The translation guarantee (docs/translation.md) covers runs whose
    inputs have the declared shapes: every input without a default is given,
    with a value of its declared type. (An absent input is undefined in
    WorkflowSkill, an error in CEL; the dialects are allowed to differ there.)"""
    from flowc.ir import types as T

    for param in workflow.inputs:
        if param.name not in inputs:
            if not param.has_default:
                return False
            continue
        if not T.is_assignable(T.of_value(inputs[param.name]), param.type):
            return False
    return True


def _unnamed_output(result: dict) -> dict:
    """aevatar's run output is one text with no name (a record's
    ``output``): the source's one output, whatever its name, is compared
    with it. (A translation of several outputs is not exact.)"""
    outputs = result["outputs"]
    if isinstance(outputs, dict) and len(outputs) == 1:
        return {**result, "outputs": {"output": next(iter(outputs.values()))}}
    return result


def cross_dialect(workflow, target: str, inputs: dict, host_script: dict) -> bool:
    """Translate to ``target``; when the translation claims to be exact,
    it must check and run to the same outcome with the same answers to its
    calls. Returns whether it was compared."""
    prop = "cross-dialect"
    emission = _emit(workflow, target, prop)
    if not emission.ok or emission.verdict == "approximate":
        return False
    translated = _compile(emission.text, _file_name(workflow, target), target, prop)
    if not translated.ok:
        raise PropertyFailure(prop, f"the {target} translation (verdict {emission.verdict}) does not check: "
                              f"{_errors(translated.diagnostics)}\n--- translation\n{emission.text}")
    recording = _Recording(host_script)
    source = _run(workflow, inputs, recording, prop, f"{workflow.dialect} source")
    if source.get("status") == "refused":
        return False  # the source does not take these inputs: no run of it to compare with
    want = outcome(source, workflow.dialect)
    got = outcome(_run(translated.workflow, inputs, _Replay(recording.answers), prop, f"{target} translation"),
                  target)
    if target == "aevatar":
        want = _unnamed_output(want)
    if _canonical(want) != _canonical(got):
        raise PropertyFailure(prop, f"the {target} translation (verdict {emission.verdict}) runs differently:\n"
                              f"{workflow.dialect}: {json.dumps(want, default=repr)[:2000]}\n"
                              f"{target}: {json.dumps(got, default=repr)[:2000]}\n"
                              f"--- translation\n{emission.text}")
    return True
