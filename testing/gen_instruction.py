"""Hypothesis strategies for valid instruction-dialect (agentd dialect 3) documents.

A document is a ``name``, an ``inputs`` JSON Schema and a map of steps: a
``manual`` trigger, steps that each depend on earlier ones, and a
``finish``. Expressions are CEL (``when``, ``CEL:`` values, element
expressions) and ``{{ }}`` templates; a step only reads the outputs of
steps upstream of it. Switches route to case steps that depend on them;
``foreach`` and ``parallel`` hold small bodies.

Shrinking: steps are drawn one at a time with a "one more?" choice first,
towards a trigger, one ``assign`` and a ``finish``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowc.testing.gen_workflowskill import sometimes
from flowc.testing.yamltext import dump
from hypothesis import strategies as st

DIALECT = "instruction"

KINDS = ("assign", "template", "tool", "agent", "filter", "map", "reduce", "sort", "switch", "sleep", "assert",
         "noop", "foreach", "parallel", "fail")
FEATURES = frozenset(KINDS) | frozenset({"when", "retry", "on_error", "inputs", "templates"})
TOOL_NAMES = ("t0", "t1", "search")
INPUTS = {"n": {"type": "integer", "default": 3}, "word": {"type": "string", "default": "abc"},
          "items": {"type": "array", "default": [1, 2, 3]}}


@dataclass
class Model:
    features: frozenset
    inputs: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)               # ids in the order drawn
    ancestors: dict[str, set[str]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    lists: set[str] = field(default_factory=set)                 # steps whose output is a list
    ints: set[str] = field(default_factory=set)                  # steps whose output is an int
    variables: list[str] = field(default_factory=list)
    count: int = 0

    def new_id(self) -> str:
        sid = f"s{self.count}"
        self.count += 1
        return sid


# ------------------------------------------------------------------ expressions
def _int_atoms(model: Model, upstream: set[str]) -> list[str]:
    atoms = ["1", "2", "0"]
    if "n" in model.inputs:
        atoms.append("inputs.n")
    atoms += [f"steps.{s}.output" for s in sorted(upstream & model.ints)]
    atoms += [f"size(steps.{s}.output)" for s in sorted(upstream & model.lists)]
    if "items" in model.inputs:
        atoms.append("size(inputs.items)")
    return atoms


def _list_atoms(model: Model, upstream: set[str]) -> list[str]:
    atoms = ["[1, 2, 3]", "[]", "['a', 'b']"]
    if "items" in model.inputs:
        atoms.append("inputs.items")
    atoms += [f"steps.{s}.output" for s in sorted(upstream & model.lists)]
    return atoms


@st.composite
def cel_bool(draw, model: Model, upstream: set[str]) -> str:
    ints = _int_atoms(model, upstream)
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return draw(st.sampled_from(["true", "false"]))
    if shape == 1:
        return f"{draw(st.sampled_from(ints))} {draw(st.sampled_from(['>', '<', '==', '!=', '>=']))} " \
               f"{draw(st.sampled_from(ints))}"
    if shape == 2:
        return f"size({draw(st.sampled_from(_list_atoms(model, upstream)))}) > {draw(st.sampled_from(['0', '1']))}"
    word = "inputs.word" if "word" in model.inputs else "'abc'"
    return f"{word}.startsWith('{draw(st.sampled_from(['a', 'x']))}') || {draw(cel_bool(model, upstream))}"


@st.composite
def cel_value(draw, model: Model, upstream: set[str]) -> tuple[str, str]:
    """(CEL text, kind of value: int, list, string, bool)."""
    kind = draw(st.sampled_from(["int", "list", "string", "bool"]))
    ints = _int_atoms(model, upstream)
    if kind == "int":
        a, b = draw(st.sampled_from(ints)), draw(st.sampled_from(ints))
        return draw(st.sampled_from([a, f"{a} + {b}", f"{a} * 2"])), "int"
    if kind == "list":
        return draw(st.sampled_from(_list_atoms(model, upstream))), "list"
    if kind == "string":
        word = "inputs.word" if "word" in model.inputs else "'abc'"
        return draw(st.sampled_from([f"string({draw(st.sampled_from(ints))})", f"{word} + '!'", "'done'"])), \
            "string"
    return draw(cel_bool(model, upstream)), "bool"


def _template(draw, model: Model, upstream: set[str]) -> str:
    paths = [f"steps.{s}.output" for s in sorted(upstream) if model.kinds.get(s) != "start"]
    paths += [f"inputs.{n}" for n in model.inputs] + [f"vars.{v}" for v in model.variables]
    if not paths or "templates" not in model.features:
        return draw(st.sampled_from(["plain text", "a, b"]))
    path = draw(st.sampled_from(paths))
    before, after = draw(st.sampled_from([("", ""), ("got ", ""), ("", "!")]))
    return before + "{{ " + path + " }}" + after


# ------------------------------------------------------------------ steps
@st.composite
def _step(draw, model: Model, kind: str, sid: str, deps: list[str]) -> dict:
    upstream = set(deps)
    for d in deps:
        upstream |= model.ancestors.get(d, set())
    f = model.features
    step: dict = {"kind": kind, "depends_on": deps if len(deps) > 1 else deps[0]}
    if kind == "assign":
        if sometimes(draw, 2):
            text, vkind = draw(cel_value(model, upstream))
            step["value"] = "CEL: " + text
        else:
            value, vkind = draw(st.sampled_from([([1, 2, 3], "list"), (7, "int"), ("hello", "string"),
                                                 ({"k": 1}, "map")]))
            step["value"] = value
        if vkind == "list":
            model.lists.add(sid)
        elif vkind == "int":
            model.ints.add(sid)
        if sometimes(draw, 3):
            var = draw(st.sampled_from(["acc", "seen", "last"]))
            step["writes"] = var
            if var not in model.variables:
                model.variables.append(var)
    elif kind == "template":
        step["text"] = _template(draw, model, upstream)
    elif kind == "tool":
        step["name"] = draw(st.sampled_from(TOOL_NAMES))
        if sometimes(draw, 2):
            step["args"] = {"q": _template(draw, model, upstream), "limit": draw(st.integers(1, 5))}
    elif kind == "agent":
        step["instruction"] = _template(draw, model, upstream)
    elif kind in ("filter", "map", "reduce", "sort"):
        step["over"] = "CEL: " + draw(st.sampled_from(_list_atoms(model, upstream)))
        if kind == "filter":
            step["expr"] = draw(st.sampled_from(["item != 0", "true", "index < 2", "item == item"]))
            model.lists.add(sid)
        elif kind == "map":
            step["expr"] = draw(st.sampled_from(["item", "[item, index]", "index", "{'v': item}"]))
            model.lists.add(sid)
        elif kind == "reduce":
            step["expr"] = draw(st.sampled_from(["acc + 1", "acc + index"]))
            step["initial"] = 0
            model.ints.add(sid)
        else:
            if sometimes(draw, 2):
                step["order"] = draw(st.sampled_from(["asc", "desc"]))
            model.lists.add(sid)
    elif kind == "sleep":
        step["duration"] = draw(st.sampled_from(["10ms", "1s", "0s"]))
    elif kind == "assert":
        step["condition"] = draw(cel_bool(model, upstream))
        if sometimes(draw, 2):
            step["message"] = "does not hold"
    elif kind == "fail":
        step["message"] = "failed on purpose"
    elif kind == "foreach":
        step["over"] = "CEL: " + draw(st.sampled_from(_list_atoms(model, upstream)))
        body_kind = draw(st.sampled_from(["template", "assign", "tool"]))
        body: dict = {"kind": body_kind}
        if body_kind == "template":
            body["text"] = "item {{ item }}"
        elif body_kind == "assign":
            body["value"] = "CEL: index"
        else:
            body["name"] = draw(st.sampled_from(TOOL_NAMES))
            body["args"] = {"item": "{{ item }}"}
        step["body"] = {"steps": {"work": body}}
        model.lists.add(sid)
    elif kind == "parallel":
        branches = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True))
        step["branches"] = {b: {"steps": {f"{b}1": {"kind": "assign", "value": b}}} for b in sorted(branches)}
    # noop: nothing more
    if kind not in ("noop",) and "when" in f and sometimes(draw, 5):
        step["when"] = draw(cel_bool(model, upstream))
    if kind in ("tool", "agent", "fail") and "retry" in f and sometimes(draw, 4):
        step["retry"] = {"max": draw(st.integers(1, 3)), "backoff": draw(st.sampled_from(["10ms", "1s"]))}
    if kind in ("tool", "agent", "fail", "assert") and "on_error" in f and sometimes(draw, 3):
        step["on_error"] = "continue"
    model.ancestors[sid] = upstream
    model.kinds[sid] = kind
    return step


@st.composite
def documents(draw, max_steps: int = 6, features: frozenset | None = None) -> dict:
    """A valid instruction workflow as plain data."""
    f = FEATURES if features is None else frozenset(features)
    kinds = [k for k in KINDS if k in f] or ["assign"]
    plain = [k for k in kinds if k != "switch"] or ["assign"]
    model = Model(f)
    doc: dict = {"name": "generated"}
    if "inputs" in f:
        model.inputs = [n for n in INPUTS if draw(st.booleans())]
        if model.inputs:
            doc["inputs"] = {"schema": {"type": "object", "properties": {
                n: (dict(INPUTS[n]) if sometimes(draw, 2) else {"type": INPUTS[n]["type"]}) for n in model.inputs}}}
    steps: dict = {"start": {"kind": "manual"}}
    model.order.append("start")
    model.kinds["start"] = "start"
    model.ancestors["start"] = set()
    open_ends: list[str] = ["start"]           # what nothing depends on yet
    max_steps = max(1, max_steps)
    while model.count < max_steps:
        if model.count and draw(st.integers(0, 4)) == 0:
            break
        candidates = [s for s in model.order if model.kinds[s] != "switch"]
        deps = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=2, unique=True))
        kind = draw(st.sampled_from(plain + (["switch"] if "switch" in kinds and max_steps - model.count >= 3
                                             else [])))
        if kind == "switch":
            sid = model.new_id()
            upstream = set(deps)
            for d in deps:
                upstream |= model.ancestors.get(d, set())
            on = draw(st.sampled_from(["{{ inputs.word }}" if "word" in model.inputs else "abc", "a", "b"]))
            cases = draw(st.lists(st.sampled_from(["a", "b", "abc"]), min_size=1, max_size=2, unique=True))
            switch: dict = {"kind": "switch", "depends_on": deps if len(deps) > 1 else deps[0], "on": on,
                            "cases": {}}
            steps[sid] = switch
            model.order.append(sid)
            model.kinds[sid] = "switch"
            model.ancestors[sid] = upstream
            arm_ids = []
            for case in cases + (["$default"] if sometimes(draw, 2) else []):
                arm = model.new_id()
                arm_kind = draw(st.sampled_from([k for k in plain if k not in ("fail",)] or ["assign"]))
                steps[arm] = draw(_step(model, arm_kind, arm, [sid]))
                model.order.append(arm)
                arm_ids.append(arm)
                if case == "$default":
                    switch["default"] = arm
                else:
                    switch["cases"][case] = arm
            open_ends = [e for e in open_ends if e not in deps] + arm_ids
            continue
        sid = model.new_id()
        steps[sid] = draw(_step(model, kind, sid, deps))
        model.order.append(sid)
        open_ends = [e for e in open_ends if e not in deps] + [sid]
    done: dict = {"kind": "finish", "depends_on": open_ends if len(open_ends) > 1 else open_ends[0]}
    readable = [s for s in model.order if s != "start"]
    if readable and sometimes(draw, 2):
        done["output"] = {"result": "{{ steps." + draw(st.sampled_from(readable)) + ".output }}"}
    steps["done"] = done
    doc["steps"] = steps
    return doc


def to_text(doc: dict, **_options) -> str:
    return dump(doc)


def file_name(text: str) -> str:
    return "workflow.yaml"


def text_options(draw, features: frozenset) -> dict:
    return {}


@st.composite
def texts(draw, max_steps: int = 6, features: frozenset | None = None) -> tuple[str, dict]:
    doc = draw(documents(max_steps, features))
    return to_text(doc), doc


# ------------------------------------------------------------------ running
ANSWER = st.one_of(
    st.sampled_from(["ok", 3, [1, 2], {"k": "v"}, None, "a"]).map(lambda a: {"output": a}),
    st.sampled_from(["down", "busy"]).map(lambda m: {"error": m}),
    st.just({"throw": "adapter exploded"}),
    st.just({"echo": True}),
)


def _callers(doc: dict) -> list[str]:
    keys = set()

    def visit(steps: dict) -> None:
        for step in steps.values():
            if step.get("kind") == "tool":
                keys.add(f"tool:{step.get('name')}")
            elif step.get("kind") == "agent":
                keys.add("llm:agent")
            for region in ([step.get("body")] if step.get("body") else []) + list((step.get("branches") or {})
                                                                                   .values()):
                visit(region.get("steps", {}))

    visit(doc.get("steps", {}))
    return sorted(keys)


@st.composite
def host_scripts(draw, doc: dict) -> dict:
    script = {}
    for key in _callers(doc):
        script[key] = draw(st.lists(ANSWER, min_size=2, max_size=4)) if sometimes(draw, 3) else draw(ANSWER)
    script["*"] = {"output": "ok"}
    return script


@st.composite
def run_inputs(draw, doc: dict) -> dict:
    """A subset of the declared inputs, usually of their schema types."""
    props = ((doc.get("inputs") or {}).get("schema") or {}).get("properties") or {}
    out = {}
    for name, schema in props.items():
        if draw(st.booleans()):
            if sometimes(draw, 5):
                out[name] = draw(st.sampled_from(["x", 1, None, [1]]))
            else:
                out[name] = draw({"integer": st.integers(-2, 9), "string": st.sampled_from(["a", "abc", "xyz", ""]),
                                  "array": st.lists(st.integers(0, 5), max_size=4)}[schema["type"]])
    return out
