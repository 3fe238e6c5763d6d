"""Hypothesis strategies for valid WorkflowSkill documents.

A document is built as plain data (what ``yaml.safe_load`` of a workflow
file gives) and is valid by construction: every reference names a declared
input or a step declared earlier, every declared type agrees with what flowc
infers for the value wired into it, branch targets are declared after their
conditional, exits with an output object use declared output names.

The generator keeps a small model of what each step produces (the same
forgiving types flowc's checker infers) so that references into step outputs
(``$steps.fetch.output.rows.length``) are well typed.

Shrinking: the number of steps, every optional field and every choice are
drawn so that hypothesis shrinks towards one plain tool step with an id like
``s0``, no inputs, no retry and no guard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from flowc.testing.yamltext import dump
from hypothesis import strategies as st

DIALECT = "workflowskill"

FEATURES = frozenset({
    "tool", "filter", "map", "sort", "conditional", "exit",     # step kinds
    "guard", "each", "delay", "retry", "on_error",              # step policies
    "outputs", "templates", "nested", "descriptions", "exotic_ids", "skill_md",
})
STEP_KINDS = ("tool", "filter", "map", "sort", "conditional", "exit")
TOOL_NAMES = ("t0", "t1", "t2", "mail.fetch")


# ------------------------------------------------------------------ types
@dataclass(frozen=True)
class Ty:
    """The part of flowc's type lattice the generator needs."""

    kind: str                                  # any null boolean int float string array object
    item: Ty | None = None                     # array element
    fields: tuple[tuple[str, Ty], ...] = ()    # object fields (empty: open object)


ANY, NULL, BOOL, INT, FLOAT, STRING = Ty("any"), Ty("null"), Ty("boolean"), Ty("int"), Ty("float"), Ty("string")
ARRAY, OBJECT = Ty("array", ANY), Ty("object")
TYPE_NAMES = ("string", "int", "float", "boolean", "array", "object")


def obj(*fields: tuple[str, Ty]) -> Ty:
    return Ty("object", fields=tuple(fields))


def arr(item: Ty) -> Ty:
    return Ty("array", item)


def decl_names(ty: Ty) -> list[str]:
    """Type names a binding may declare for a value of type ``ty``."""
    if ty.kind in ("any", "null"):
        return list(TYPE_NAMES)
    if ty.kind == "int":
        return ["int", "float"]
    return [ty.kind]


def from_name(name: str) -> Ty:
    return {"string": STRING, "int": INT, "float": FLOAT, "boolean": BOOL, "array": ARRAY,
            "object": OBJECT}[name]


# ------------------------------------------------------------------ model
@dataclass
class StepModel:
    id: str
    index: int
    kind: str
    out: Ty = ANY
    target: bool = False        # listed in some conditional's then/else


@dataclass
class Model:
    features: frozenset
    inputs: dict[str, Ty] = field(default_factory=dict)
    steps: list[StepModel] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)


INPUT_POOL: tuple[tuple[str, str], ...] = (
    ("n", "int"), ("word", "string"), ("rows", "array"), ("flag", "boolean"), ("cfg", "object"),
    ("ratio", "float"),
)
SCALAR_WORDS = ("a", "B", "7", "x y", "", "abc", "0")
ROW_NAMES = ("a", "B", "x y", "7", "")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.sampled_from(SCALAR_WORDS),
                    st.sampled_from([0.5, 2.0, -1.5]))
rows = st.lists(st.fixed_dictionaries({"id": st.integers(0, 5)},
                                      optional={"score": scalars, "name": scalars,
                                                "tags": st.lists(scalars, max_size=2)}), max_size=4)


def input_values(type_name: str):
    """Well-typed values for an input declared ``type_name``."""
    return {
        "int": st.integers(-2, 9),
        "float": st.sampled_from([0.5, 2.0, -1.5, 0.0]),
        "string": st.sampled_from(SCALAR_WORDS),
        "boolean": st.booleans(),
        "array": rows,
        "object": st.fixed_dictionaries({}, optional={"k": scalars, "rows": rows}),
    }[type_name]


# ------------------------------------------------------------------ references
def _paths(prefix: str, ty: Ty, depth: int = 2):
    """(path, type) pairs reachable from ``prefix`` that flowc types as ``ty`` says."""
    yield prefix, ty
    if depth == 0:
        return
    if ty.kind == "array":
        yield prefix + ".length", INT
        yield from _paths(prefix + "[0]", ty.item or ANY, depth - 1)
    elif ty.kind == "object":
        for name, fty in ty.fields:
            yield from _paths(f"{prefix}.{name}", fty, depth - 1)
        if not ty.fields:
            yield prefix + ".k", ANY
    elif ty.kind == "any":
        yield prefix + ".rows", ANY
        yield prefix + ".total", ANY
        yield prefix + "[0]", ANY


def ref_pool(model: Model, before: int | None, item: bool, result: bool = False) -> list[tuple[str, Ty]]:
    """References (without the leading ``$``) valid in a step at index
    ``before`` (None: a workflow output, which may read every step)."""
    if result:
        pool = [("result", ANY), ("result.rows", ANY), ("result.total", ANY), ("result.rows.length", ANY)]
        if item:
            pool += [("item", ANY), ("index", INT)]
        return pool
    pool: list[tuple[str, Ty]] = []
    for name, ty in model.inputs.items():
        pool.extend(_paths(f"inputs.{name}", ty, 1 if ty.kind != "array" else 2))
    for step in model.steps:
        if before is not None and step.index >= before:
            continue
        pool.extend(_paths(f"steps.{step.id}.output", step.out))
    if item:
        pool += [("item", ANY), ("item.name", ANY), ("item.score", ANY), ("index", INT)]
        if "rows" in model.inputs:
            pool.append(("inputs.rows[$index]", ANY))
    return pool


LITERAL_TOKENS: tuple[tuple[str, Ty], ...] = (
    ("1", INT), ("0", INT), ("-2.5", FLOAT), ("true", BOOL), ("false", BOOL), ("null", NULL),
    ('"a"', STRING), ("'x y'", STRING), ('"7"', STRING),
)
COMPARISONS = ("==", "!=", ">", "<", ">=", "<=", "contains")


@st.composite
def expression(draw, pool: list[tuple[str, Ty]], depth: int = 2) -> tuple[str, Ty]:
    """A bare ``$``-expression: an atom, a comparison, a negation, or two
    of those joined by ``&&``/``||``."""
    atoms = list(LITERAL_TOKENS) + [("$" + p, t) for p, t in pool]
    atom = st.sampled_from(atoms)
    shape = draw(st.integers(0, 3 if depth > 0 else 2))
    if shape == 0:
        return draw(atom)
    if shape == 1:
        left, op, right = draw(atom), draw(st.sampled_from(COMPARISONS)), draw(atom)
        return f"{left[0]} {op} {right[0]}", BOOL
    if shape == 2:
        return "!" + draw(atom)[0], BOOL
    left, right = draw(expression(pool, depth - 1)), draw(expression(pool, depth - 1))
    op = draw(st.sampled_from(["&&", "||"]))
    return f"({left[0]}) {op} ({right[0]})", BOOL


@st.composite
def value(draw, model: Model, pool: list[tuple[str, Ty]]):
    """A ``value`` field: a reference, a comparison starting with one, a
    ``${}`` template, a ``$$`` escape, or a literal. Returns (data, type)."""
    templates = "templates" in model.features
    kinds = ["literal", "ref"] + (["cmp"] if pool else []) + (["whole", "mixed", "escape"] if templates else [])
    kind = draw(st.sampled_from(kinds)) if pool else "literal"
    if kind == "literal":
        lit = draw(st.sampled_from([("hello", STRING), (3, INT), (2.5, FLOAT), (True, BOOL), (None, NULL),
                                    ([1, "a"], ARRAY), ({"k": 1}, OBJECT), ("x y", STRING)]))
        return lit
    path, ty = draw(st.sampled_from(pool))
    if kind == "ref":
        return "$" + path, ty
    if kind == "cmp":
        right = draw(st.sampled_from(LITERAL_TOKENS))[0]
        return f"${path} {draw(st.sampled_from(COMPARISONS))} {right}", BOOL
    if kind == "whole" and "[$" not in path:
        return "${" + path + "}", ty
    if kind == "escape":
        return "$$" + draw(st.sampled_from(["5", "{x}", "inputs.n"])), STRING
    if "[$" in path:
        return "$" + path, ty
    before, after = draw(st.sampled_from([("id ", ""), ("", "!"), ("n=", " "), ("", " ${inputs.n}")]))
    if after.endswith("}") and "n" not in model.inputs:
        after = "!"
    return before + "${" + path + "}" + after, STRING


@st.composite
def binding(draw, model: Model, pool: list[tuple[str, Ty]], with_value: bool = True) -> dict:
    if not with_value:
        return {"type": draw(st.sampled_from(TYPE_NAMES))}
    data, ty = draw(value(model, pool))
    return {"type": draw(st.sampled_from(decl_names(ty))), "value": data}


def sometimes(draw, one_in: int) -> bool:
    """True about once in ``one_in`` draws; shrinks to False (the simpler
    workflow: an optional part left out)."""
    return draw(st.integers(1, one_in)) == one_in


# ------------------------------------------------------------------ ids
EXOTIC_IDS = ("if", "class", "run", "host", "None", "_", "item", "steps", "result", "lambda", "self", "__init__",
              "Step_1", "x" * 40)


# ------------------------------------------------------------------ steps
@st.composite
def _step(draw, model: Model, info: StepModel, targets_of: dict[int, tuple[list[int], list[int]]]) -> dict:
    f = model.features
    i, kind = info.index, info.kind
    step: dict = {"id": info.id}
    if kind in ("filter", "map", "sort"):
        step["type"] = "transform"
    else:
        step["type"] = kind
    if "descriptions" in f and sometimes(draw, 5):
        step["description"] = draw(st.text(max_size=20))
    each = False
    if kind in ("tool", "filter", "map", "sort") and "each" in f and sometimes(draw, 4 if kind == "tool"
                                                                                   else 10):
        arrays = [p for p, t in ref_pool(model, i, False) if t.kind == "array"]
        if arrays:
            step["each"] = "$" + draw(st.sampled_from(arrays))
            each = True
            if "delay" in f and draw(st.booleans()):
                step["delay"] = draw(st.sampled_from(["0ms", "10ms", "1s"]))
    pool = ref_pool(model, i, each)
    if kind in ("tool", "filter", "map", "sort", "exit") and "guard" in f and sometimes(draw, 4):
        step["condition"] = draw(expression(ref_pool(model, i, False)))[0]
    if kind == "tool":
        name = draw(st.sampled_from(TOOL_NAMES))
        model.tools.add(name)
        step["tool"] = name
        names = draw(st.lists(st.sampled_from(["a", "b", "query", "limit", "text"]), unique=True, max_size=3))
        if names:
            step["inputs"] = {n: draw(binding(model, pool, draw(st.integers(0, 5)) > 0)) for n in names}
        base = ANY
        if "outputs" in f and draw(st.booleans()):
            specs = draw(st.lists(st.sampled_from(_TOOL_OUTPUTS), min_size=1, max_size=2, unique_by=lambda s: s[0]))
            specs = [(n, draw(st.sampled_from((t,) + TYPE_NAMES)), v) for n, t, v in specs]
            if each and sometimes(draw, 4):
                specs.append(("slot", "int", "$index"))
            step["outputs"] = {n: {"type": t} if v is None else {"type": t, "value": v} for n, t, v in specs}
            base = obj(*[(n, from_name(t)) for n, t, _ in specs])
        info.out = arr(base) if each else base
    elif kind in ("filter", "map", "sort"):
        step["operation"] = kind
        item_pool = ref_pool(model, i, True)
        if kind == "filter":
            step["where"] = draw(expression(item_pool))[0]
        elif kind == "map":
            step["expression"] = draw(_map_expression(item_pool, 1))
        else:
            step["field"] = draw(st.sampled_from(["score", "name", "id", "tags", "meta.k"]))
            if draw(st.booleans()):
                step["direction"] = draw(st.sampled_from(["asc", "desc"]))
        arrays = [p for p, t in pool if t.kind in ("array", "any") and not p.startswith(("item", "index"))]
        src = draw(st.sampled_from(arrays)) if arrays else None
        if src is not None:
            step["inputs"] = {"items": {"type": "array", "value": "$" + src}}
        else:
            step["inputs"] = {"items": {"type": "array", "value": [1, 2]}}
        out_name = "items"
        base = obj((out_name, ARRAY))
        if "outputs" in f and draw(st.booleans()):
            out_name = draw(st.sampled_from(["rows", "kept", "items"]))
            step["outputs"] = {out_name: {"type": "array"}}
            base = obj((out_name, ARRAY))
            if draw(st.booleans()):
                # Checked at run time, unlike the result array itself.
                type_name = draw(st.sampled_from(("int",) + TYPE_NAMES))
                step["outputs"]["count"] = {"type": type_name, "value": f"$result.{out_name}.length"}
                base = obj((out_name, ARRAY), ("count", from_name(type_name)))
        info.out = arr(base) if each else base
    elif kind == "conditional":
        step["condition"] = draw(expression(ref_pool(model, i, False)))[0]
        step["then"] = []  # filled in with the targets' ids once they are drawn
        info.out = ANY
    else:  # exit
        step["status"] = draw(st.sampled_from(["success", "failed"]))
        shape = draw(st.sampled_from(["none", "expr", "object"] if model.output_names else ["none", "expr"]))
        if shape == "expr":
            step["output"] = draw(expression(ref_pool(model, i, False)))[0]
        elif shape == "object":
            keys = draw(st.lists(st.sampled_from(model.output_names), min_size=1, unique=True))
            step["output"] = {k: draw(value(model, ref_pool(model, i, False)))[0] for k in keys}
        info.out = ANY
    if kind in ("tool", "filter", "map", "sort"):
        if "retry" in f and sometimes(draw, 4):
            step["retry"] = {"max": draw(st.integers(1, 3)), "delay": draw(st.sampled_from(["0ms", "100ms", "1s"])),
                             "backoff": draw(st.sampled_from([1, 2, 1.5]))}
        if "on_error" in f and sometimes(draw, 3):
            step["on_error"] = draw(st.sampled_from(["ignore", "fail"]))
    return step


# (name, type, value) of a tool's output; values map the raw result.
_TOOL_OUTPUTS = (
    ("rows", "array", "$result.rows"),
    ("total", "int", None),
    ("total", "int", "$result.total"),
    ("label", "string", "n=${result.total}"),
    ("first", "object", "$result.rows[0]"),
    ("raw", "object", "$result"),
    ("count", "int", "$result.rows.length"),
)


@st.composite
def _map_expression(draw, pool: list[tuple[str, Ty]], depth: int) -> dict:
    keys = draw(st.lists(st.sampled_from(["id", "label", "score", "extra", "n"]), min_size=1, max_size=3,
                         unique=True))
    out = {}
    for key in keys:
        choice = draw(st.integers(0, 4 if depth > 0 else 3))
        if choice == 0:
            out[key] = "$" + draw(st.sampled_from(pool))[0]
        elif choice == 1:
            out[key] = draw(expression([p for p in pool if p[0].startswith("item")] or pool, 0))[0]
        elif choice == 2:
            out[key] = draw(st.sampled_from(["fixed", "x y", 1, 2.5, None, True, [1, 2]]))
        elif choice == 3:
            out[key] = draw(st.sampled_from(["$item.name", "$item.id", "$index"]))
        else:
            out[key] = draw(_map_expression(pool, depth - 1))
    return out


# ------------------------------------------------------------------ documents
@st.composite
def documents(draw, max_steps: int = 6, features: frozenset | None = None) -> dict:
    """A valid WorkflowSkill workflow as plain data (``inputs``, ``outputs``, ``steps``).

    Steps are drawn one after the other, each with a "one more?" choice
    first, so hypothesis shrinks a workflow by deleting whole steps."""
    f = FEATURES if features is None else frozenset(features)
    kinds = [k for k in STEP_KINDS if k in f] or ["tool"]
    fallback = "tool" if "tool" in kinds else next((k for k in kinds if k != "conditional"), "tool")
    max_steps = max(1, max_steps)
    model = Model(f)
    # Workflow output names come first: exits may use them as keys.
    model.output_names = draw(st.lists(st.sampled_from(["result", "total", "word", "count"]), unique=True,
                                       max_size=3))
    # Inputs: which of the pool are declared, with or without a default.
    inputs: dict = {}
    for name, type_name in INPUT_POOL:
        if draw(st.booleans()):
            decl: dict = {"type": type_name}
            if draw(st.booleans()):
                decl["default"] = draw(input_values(type_name))
            inputs[name] = decl
            model.inputs[name] = ARRAY if type_name == "array" else from_name(type_name)
    steps: list[dict] = []
    targets_of: dict[int, tuple[list[int], list[int]]] = {}
    targeted: set[int] = set()
    for i in range(max_steps):
        # A pending branch target forces the next step.
        pending = any(t >= i for t in targeted)
        if i > 0 and not pending and draw(st.integers(0, 5)) == 0:
            break
        kind = draw(st.sampled_from(kinds))
        if kind == "conditional":
            room = max_steps - 1 - i
            # A conditional targeted by an earlier one nests its arms.
            if room < 1 or (i in targeted and "nested" not in f):
                kind = fallback
            else:
                offsets = st.integers(1, min(3, room))
                then = [i + k for k in draw(st.lists(offsets, min_size=1, max_size=2))]
                other = [i + k for k in draw(st.lists(offsets, max_size=2))]
                targets_of[i] = (then, other)
                targeted.update(then + other)
        sid = f"s{i}"
        if "exotic_ids" in f and sometimes(draw, 6):
            exotic = draw(st.sampled_from(EXOTIC_IDS))
            if exotic not in {m.id for m in model.steps}:
                sid = exotic
        info = StepModel(sid, i, kind, target=i in targeted)
        model.steps.append(info)
        steps.append(draw(_step(model, info, targets_of)))
    ids = [m.id for m in model.steps]
    for i, (then, other) in targets_of.items():
        steps[i]["then"] = [ids[t] for t in then]
        if other:
            steps[i]["else"] = [ids[t] for t in other]
    doc: dict = {}
    if inputs or draw(st.booleans()):
        doc["inputs"] = inputs
    outputs = {}
    for name in model.output_names:
        if draw(st.booleans()):
            outputs[name] = draw(binding(model, ref_pool(model, None, False)))
        else:
            outputs[name] = {"type": draw(st.sampled_from(TYPE_NAMES))}
    if outputs or draw(st.booleans()):
        doc["outputs"] = outputs
    doc["steps"] = steps
    return doc


def to_text(doc: dict, skill_md: bool = False, name: str = "generated") -> str:
    """The document as workflow YAML, or as a SKILL.md around a ```workflow block."""
    body = dump(doc)
    if not skill_md:
        return body
    return (f"---\nname: {name}\ndescription: A generated workflow.\n---\n\n# {name}\n\n"
            f"```workflow\n{body}```\n")


def file_name(text: str) -> str:
    """SKILL.md for Markdown (frontmatter or a fence at the start of a line),
    workflow.yaml for YAML -- whose strings may hold ``` anywhere."""
    markdown = text.startswith("---\n") or re.search(r"^```", text, re.MULTILINE) is not None
    return "SKILL.md" if markdown else "workflow.yaml"


def text_options(draw, features: frozenset) -> dict:
    """How to render a document: sometimes as a SKILL.md."""
    return {"skill_md": "skill_md" in features and sometimes(draw, 4)}


@st.composite
def texts(draw, max_steps: int = 6, features: frozenset | None = None) -> tuple[str, dict]:
    """(text, plain document)."""
    f = FEATURES if features is None else frozenset(features)
    doc = draw(documents(max_steps, f))
    return to_text(doc, **text_options(draw, f)), doc


# ------------------------------------------------------------------ running
def tools_called(doc: dict) -> list[str]:
    return sorted({s["tool"] for s in doc.get("steps", []) if isinstance(s, dict) and s.get("type") == "tool"
                   and isinstance(s.get("tool"), str)})


TOOL_RESULT = st.one_of(
    st.builds(lambda r: {"output": {"rows": r, "total": len(r)}}, rows),
    # fields of any type, for declared output types to check
    st.builds(lambda r, total: {"output": {"rows": r, "total": total}}, rows,
              st.one_of(scalars, st.just([1]), st.just({"k": 1}), st.just(3.25))),
    st.builds(lambda msg: {"error": msg}, st.sampled_from(["down", "busy"])),
    st.just({"throw": "adapter exploded"}),
    scalars.map(lambda v: {"output": v}),
    st.just({"echo": True}),
)


@st.composite
def host_scripts(draw, doc: dict) -> dict:
    """A ScriptedHost script answering every tool the document calls:
    results, tool errors, host failures, and sequences of them (so retries
    and `each` see different answers)."""
    return {t: draw(st.lists(TOOL_RESULT, min_size=2, max_size=4)) if sometimes(draw, 3) else draw(TOOL_RESULT)
            for t in tools_called(doc)}


@st.composite
def run_inputs(draw, doc: dict) -> dict:
    """Inputs for a run: a subset of the declared inputs, of their declared
    types, or (one time in four) of any type, with an undeclared extra."""
    well_typed = not sometimes(draw, 4)
    out = {}
    for name, decl in (doc.get("inputs") or {}).items():
        if draw(st.booleans()):
            type_name = decl.get("type", "string")
            out[name] = draw(input_values(type_name) if well_typed
                             else st.one_of(scalars, st.just(2.5), st.just({"a": 1}), rows))
    if not well_typed and draw(st.booleans()):
        out["extra"] = draw(scalars)
    return out
