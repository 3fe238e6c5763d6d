"""Malformed input for the never-crash property: random bytes, random text,
random YAML, and generated valid workflows damaged line by line and
character by character, with hostile strings spliced in.

Unlike a mutant, a malformed input has no expected finding: flowc must
only report findings (with registered codes) instead of crashing or hanging.
"""

from __future__ import annotations

from flowc.testing.yamltext import dump
from hypothesis import strategies as st

HOSTILE = (
    "{{", "}}", "${", "${}", "$${", "$$", "$", "]", "[", "{", "}", "\u2028", "\u2029", "\x85", "\ufeff",
    "\x00", "\t", "\r", "```", "```workflow\n", "---\n", "&a", "*a", "!!python/object:os.system",
    "<<: *a", "? ", ": ", "- ", "#", "'", '"', "\\", "$steps.", "$inputs.", "$item[", "${steps.x.output",
    "{{ steps.", "${input}", "CEL:", "has(", "x" * 5000, "[" * 500, "{a: " * 200, "- " * 300, "$a." * 300,
    "(" * 400, "!" * 300, "id: ", "kind: ", "type: ", "depends_on: [", "next: ", "branches: {",
)
FILE_NAMES = ("f.md", "f.yaml", "f.yml", "f.json", "f")

_KEYS = st.one_of(st.sampled_from([
    "steps", "inputs", "outputs", "id", "type", "tool", "value", "default", "condition", "each", "delay",
    "retry", "max", "backoff", "on_error", "operation", "where", "expression", "field", "direction", "then",
    "else", "status", "output", "name", "roles", "parameters", "next", "branches", "kind", "depends_on",
    "when", "version", "finish", "cases", "body", "over"]), st.text(max_size=12))
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=30),
    st.sampled_from(["$inputs.x", "$steps.a.output", "${inputs.x}", "$$x", "$result", "$item", "tool",
                     "transform", "conditional", "exit", "llm_call", "switch", "once", "finish", "1s", "500ms",
                     "{{ inputs.x }}", "steps.a.output", "size(x) > 1"]),
)
yaml_documents = st.recursive(
    _SCALARS, lambda children: st.lists(children, max_size=5) | st.dictionaries(_KEYS, children, max_size=6),
    max_leaves=40)


@st.composite
def damaged(draw, text: str) -> str:
    """``text`` with 1-6 line or character edits."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "flip", "insert", "indent", "truncate"]))
        if not lines:
            lines = [""]
        i = draw(st.integers(0, len(lines) - 1))
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "flip" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:k] + draw(st.characters(codec="utf-8")) + lines[i][k + 1:]
        elif op == "insert":
            k = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:k] + draw(st.sampled_from(HOSTILE)) + lines[i][k:]
        elif op == "indent":
            lines[i] = draw(st.sampled_from(["  ", "\t", " ", ""])) + lines[i].lstrip()
        elif op == "truncate":
            lines = lines[: i + 1]
    return "\n".join(lines)


@st.composite
def malformed(draw, valid_texts) -> tuple[str, str]:
    """(text, file name): noise of every kind; ``valid_texts`` is a
    strategy of (text, file name) to damage."""
    kind = draw(st.sampled_from(["damaged", "bytes", "text", "yaml", "damaged"]))
    if kind == "bytes":
        return draw(st.binary(max_size=2000)).decode("utf-8", errors="replace"), draw(st.sampled_from(FILE_NAMES))
    if kind == "text":
        return draw(st.text(max_size=2000)), draw(st.sampled_from(FILE_NAMES))
    if kind == "yaml":
        return dump(draw(yaml_documents)), draw(st.sampled_from(FILE_NAMES))
    text, name = draw(valid_texts)
    return draw(damaged(text)), name
