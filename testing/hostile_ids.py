"""Hostile ids: step ids and variable names other tools mishandle.

:func:`hostile_ids` draws names with quotes, a digit first, non-ASCII
letters, spaces, dots, hyphens, reserved words and great length.
:func:`hostile_workflows` takes a generated valid workflow of a dialect and
gives its steps (and, in aevatar, its variables) such names wherever its
dialect lets them be: a step that other steps read by reference gets a name
that its dialect's references can hold, one that nothing reads may get any
name the dialect accepts as an id. The result is meant to be a valid
workflow; a test keeps the ones ``flowc check`` accepts (``assume``), since
the front end, not this module, says what is valid.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

__all__ = ["HOSTILE_IDS", "hostile_ids", "hostile_workflows"]

# Names that have broken translators: each one is a valid id in some dialect.
HOSTILE_IDS = (
    "1", "1a", "007", "a'b", 'a"b', "it's", "a b", " lead", "a.b", "a-b", "-a", "_", "__", "_1", "a:b",
    "a#b", "a/b", "a\\b", "é", "名前", "Ünïcødé", "step-ü", "in", "null", "true", "if", "steps", "inputs",
    "vars", "input", "output", "None", "class", "{x}", "$x", "${x}", "a,b", "x" * 64, "y" * 65, "z" * 200,
)

_GEN_ID = re.compile(r"s\d+\Z")
# The characters a reference of each dialect holds in a step id, and the ids
# each dialect accepts at all (the front ends have the final word).
_REFERABLE = {
    "aevatar": re.compile(r"[^\s.{}$(),'\"\\]+\Z"),
    "instruction": re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z"),
    "workflowskill": re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z"),
}
_ACCEPTED = {
    "aevatar": re.compile(r"\S(.*\S)?\Z"),
    "instruction": re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]{0,63}\Z"),
    "workflowskill": re.compile(r"\S(.*\S)?\Z"),
}
_RESERVED = frozenset({"in", "null", "true", "false", "if", "steps", "inputs", "vars", "input", "output",
                       "start", "done", "end", "item", "acc", "result"})


@st.composite
def _made_up(draw) -> str:
    """A name built from hostile pieces, for what the fixed list misses."""
    pieces = st.sampled_from(["1", "a", "'", '"', " ", ".", "-", "_", "é", "名", "x" * 30, ":", "Z"])
    return "".join(draw(st.lists(pieces, min_size=1, max_size=6)))


def hostile_ids(dialect: str | None = None, *, referable: bool = False) -> st.SearchStrategy[str]:
    """Hostile names; for ``dialect``, only the ones it accepts as step ids
    (``referable``: that its references can also hold)."""
    names = st.one_of(st.sampled_from(HOSTILE_IDS), _made_up())
    if dialect is None:
        return names
    table = _REFERABLE if referable else _ACCEPTED
    return names.filter(lambda n: table[dialect].match(n) is not None)


# ------------------------------------------------------------------ renaming a document
def _step_ids(obj, out: list[str]) -> list[str]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "id" and isinstance(value, str) and _GEN_ID.match(value):
                out.append(value)
            if key == "steps" and isinstance(value, dict):
                out.extend(k for k in value if isinstance(k, str) and _GEN_ID.match(k))
            _step_ids(value, out)
    elif isinstance(obj, list):
        for item in obj:
            _step_ids(item, out)
    return list(dict.fromkeys(out))


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _strings(item)


_STEP_REF = re.compile(r"(?<![\w])(\$?steps\.)(s\d+)(?![\w])")
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")


def _rename(obj, ids: dict[str, str], variables: dict[str, str]):
    if isinstance(obj, str):
        if obj in ids:
            return ids[obj]
        if obj.startswith("goto:") and obj[5:] in ids:
            return "goto:" + ids[obj[5:]]
        text = _STEP_REF.sub(lambda m: m.group(1) + ids.get(m.group(2), m.group(2)), obj)
        if variables:
            text = _PLACEHOLDER.sub(lambda m: _rename_variables(m.group(0), variables), text)
        return text
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            new_key = ids.get(key, key) if isinstance(key, str) else key
            if key == "target" and isinstance(value, str) and value in variables:
                out[new_key] = variables[value]          # an aevatar assign's variable
            else:
                out[new_key] = _rename(value, ids, variables)
        return out
    if isinstance(obj, list):
        return [_rename(item, ids, variables) for item in obj]
    return obj


def _rename_variables(placeholder: str, variables: dict[str, str]) -> str:
    for old, new in variables.items():
        placeholder = re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w])", lambda _m, n=new: n, placeholder)
    return placeholder


def _aevatar_variables(doc: dict) -> list[str]:
    out = []
    for step in doc.get("steps", []):
        params = step.get("parameters") if isinstance(step, dict) else None
        if step.get("type") == "assign" and isinstance(params, dict) and isinstance(params.get("target"), str):
            out.append(params["target"])
    return list(dict.fromkeys(out))


@st.composite
def _fresh_names(draw, dialect: str, olds: list[str], doc, taken: set[str]) -> dict[str, str]:
    texts = list(_strings(doc))
    mapping: dict[str, str] = {}
    for old in olds:
        word = re.compile(rf"(?<![\w.]){re.escape(old)}(?![\w])")
        referenced = any(re.search(rf"(?<![\w])\$?steps\.{re.escape(old)}(?![\w])", t) or
                         any(word.search(p) for p in _PLACEHOLDER.findall(t)) for t in texts)
        if not draw(st.booleans()):
            continue
        new = draw(hostile_ids(dialect, referable=referenced))
        if new.casefold() in taken or new in _RESERVED:
            continue
        taken.add(new.casefold())
        mapping[old] = new
    return mapping


@st.composite
def hostile_workflows(draw, dialect: str, *, max_steps: int = 6, features=None):
    """A generated workflow of ``dialect`` (:class:`~flowc.testing.strategies.WorkflowText`)
    whose step ids, and aevatar variable names, are hostile where its dialect allows."""
    from flowc.testing import strategies

    gen = strategies._generator(dialect)
    f = strategies._features(dialect, features)
    doc = draw(gen.documents(max_steps, f))
    taken = {s.casefold() for s in _strings(doc)}
    ids = draw(_fresh_names(dialect, _step_ids(doc, []), doc, taken))
    variables = draw(_fresh_names(dialect, _aevatar_variables(doc), doc, taken)) if dialect == "aevatar" else {}
    renamed = _rename(doc, ids, variables)
    return strategies.WorkflowText(gen.to_text(renamed, **gen.text_options(draw, f)), dialect)
