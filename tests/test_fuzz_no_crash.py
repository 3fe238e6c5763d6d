"""Whatever the input, `flowc check` never crashes.

Random bytes, random text, random YAML documents, and corpus files
mutated line by line and character by character (with hostile strings
spliced in) go through the library (`flowc.pipeline.driver.compile_text`) and the
CLI (`flowc.cli.main(["check", path])`). Every result is either a
workflow or a list of coded findings; every exit code is 0, 1 or 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from flowc import cli
from flowc.compiler.codes import CODES
from flowc.ir.workflow import Workflow
from flowc.pipeline import driver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "workflowskill"
CORPUS = [(p.name, p.read_text(encoding="utf-8"))
          for p in sorted(CORPUS_DIR.glob("*/*.md"))]

HOSTILE = [
    "{{", "}}", "${", "${}", "$${", "$$", "$", "]", "[", "{", "}", "\u2028", "\u2029", "\x85", "\ufeff",
    "\x00", "\t", "\r", "```", "```workflow\n", "---\n", "&a", "*a", "!!python/object:os.system",
    "<<: *a", "? ", ": ", "- ", "#", "'", '"', "\\", "$steps.", "$inputs.", "$item[", "${steps.x.output",
    "x" * 5000, "[" * 500, "{a: " * 200, "- " * 300, "$a." * 300, "(" * 400, "!" * 300,
]

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def assert_well_formed(result: driver.CompileResult) -> None:
    assert isinstance(result, driver.CompileResult)
    assert result.workflow is None or isinstance(result.workflow, Workflow)
    for d in result.diagnostics:
        assert d.code in CODES, d.code
        assert d.message
        assert d.span.line >= 0 and d.span.col >= 0
    if result.workflow is None:
        # No workflow and no error would be a silent failure.
        assert any(d.is_error for d in result.diagnostics)
    assert result.ok == (result.workflow is not None and not any(d.is_error for d in result.diagnostics))


def compile_both_ways(text: str, name: str) -> None:
    assert_well_formed(driver.compile_text(text, name))
    assert_well_formed(driver.compile_text(text, name, dialect="workflowskill"))


def check_cli(tmp_path: Path, data: bytes, name: str, capsys) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    for fmt in ("text", "json"):
        code = cli.main(["check", "--format", fmt, str(path)])
        out, err = capsys.readouterr()
        assert code in (0, 1, 2)
        assert "Traceback" not in out + err
        if fmt == "json":
            findings = json.loads(out)
            assert isinstance(findings, list)
            assert code == (1 if any(f["severity"] == "error" for f in findings) else 0) or code == 2
        else:
            for line in out.splitlines():
                if re.match(r"^\S.*:\d+:\d+: (error|warning|note)\[", line):
                    assert re.search(r"\[[A-Z]+\d{3}\]", line)


# ------------------------------------------------------------------ strategies
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["$inputs.x", "$steps.a.output", "${inputs.x}", "$$x", "$result", "$item",
                     "tool", "transform", "conditional", "exit", "filter", "map", "sort", "1s", "500ms",
                     "success", "failed", "ignore", "fail", "asc", "desc", "string", "array"]),
)
KEYS = st.one_of(st.sampled_from([
    "steps", "inputs", "outputs", "id", "type", "tool", "value", "default", "condition", "each",
    "delay", "retry", "max", "backoff", "on_error", "operation", "where", "expression", "field",
    "direction", "then", "else", "status", "output", "description", "items", "properties"]),
    st.text(max_size=12))
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=40,
)


def _step(i: int):
    return st.fixed_dictionaries({
        "id": st.sampled_from([f"s{i}", "a", "b", "x-y", ""]),
        "type": st.sampled_from(["tool", "transform", "conditional", "exit", "tol"]),
    }, optional={
        "tool": scalars, "operation": st.sampled_from(["filter", "map", "sort", "reduce"]),
        "where": scalars, "expression": documents, "field": scalars, "direction": scalars,
        "condition": scalars, "each": scalars, "delay": scalars, "retry": documents,
        "on_error": scalars, "then": st.lists(st.sampled_from(["s0", "s1", "s2", "a", "zz"]), max_size=3),
        "else": scalars, "status": scalars, "output": documents,
        "inputs": st.dictionaries(KEYS, documents, max_size=3),
        "outputs": st.dictionaries(KEYS, documents, max_size=3),
    })


workflow_shaped = st.fixed_dictionaries({
    "steps": st.lists(st.integers(0, 4).flatmap(_step), max_size=6),
}, optional={
    "inputs": st.dictionaries(KEYS, documents, max_size=3),
    "outputs": st.dictionaries(KEYS, documents, max_size=3),
})


def dump(doc) -> str:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def as_skill(yaml_text: str, frontmatter: bool) -> str:
    head = "---\nname: fuzz\ndescription: fuzzed\n---\n\n" if frontmatter else ""
    return f"{head}# Fuzz\n\n```workflow\n{yaml_text}```\n"


@st.composite
def mutated_corpus(draw) -> tuple[str, str]:
    name, text = draw(st.sampled_from(CORPUS))
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
            ch = draw(st.characters(codec="utf-8"))
            lines[i] = lines[i][:k] + ch + lines[i][k + 1:]
        elif op == "insert":
            k = draw(st.integers(0, len(lines[i])))
            hostile = draw(st.sampled_from(HOSTILE))
            lines[i] = lines[i][:k] + hostile + lines[i][k:]
        elif op == "indent":
            lines[i] = draw(st.sampled_from(["  ", "\t", " ", ""])) + lines[i].lstrip()
        elif op == "truncate":
            lines = lines[: i + 1]
    return name, "\n".join(lines)


# ------------------------------------------------------------------ library
@SETTINGS
@given(st.binary(max_size=2000), st.sampled_from(["f.md", "f.yaml", "f.json", "f"]))
def test_random_bytes(data, name):
    compile_both_ways(data.decode("utf-8", errors="replace"), name)


@SETTINGS
@given(st.text(max_size=2000), st.sampled_from(["f.md", "f.yaml"]))
def test_random_text(text, name):
    compile_both_ways(text, name)


@SETTINGS
@given(documents)
def test_random_yaml(doc):
    text = dump(doc)
    compile_both_ways(text, "f.yaml")
    compile_both_ways(as_skill(text, True), "f.md")


@settings(SETTINGS, max_examples=120)
@given(workflow_shaped, st.booleans())
def test_random_workflow_shaped_yaml(doc, frontmatter):
    text = dump(doc)
    compile_both_ways(text, "f.yaml")
    compile_both_ways(as_skill(text, frontmatter), "f.md")


@settings(SETTINGS, max_examples=150)
@given(mutated_corpus())
def test_mutated_corpus(named):
    name, text = named
    compile_both_ways(text, name)


@SETTINGS
@given(st.sampled_from(CORPUS), st.sampled_from(HOSTILE), st.integers(0, 10_000))
def test_hostile_string_in_an_expression(named, hostile, where):
    """Splice a hostile string into the text of an expression value."""
    name, text = named
    refs = [m.end() for m in re.finditer(r"\$(inputs|steps|item|result)\b", text)]
    if refs:
        at = refs[where % len(refs)]
        text = text[:at] + hostile + text[at:]
    compile_both_ways(text, name)


def test_huge_inputs_do_not_crash():
    for text in ("steps:\n" + "  - {id: a, type: tool, tool: t, condition: " + "(" * 5000 + "}\n",
                 "steps:\n  - {id: a, type: tool, tool: t, condition: '" + "!" * 20_000 + "$x'}\n",
                 "steps:\n  - {id: a, type: tool, tool: t, condition: '" + "$a" + ".b" * 20_000 + "'}\n",
                 "steps:\n  - {id: a, type: tool, tool: t, condition: '" + " && ".join(["$a"] * 5000) + "'}\n",
                 "a: " + "[" * 100_000 + "\n",
                 "x" * 1_000_000):
        compile_both_ways(text, "f.yaml")
        compile_both_ways(as_skill(text, False), "f.md")


# ------------------------------------------------------------------ CLI
@settings(SETTINGS, max_examples=25)
@given(st.binary(max_size=500), st.sampled_from(["f.md", "f.yaml", "f.yml", "f.json"]))
def test_cli_random_bytes(tmp_path_factory, capsys, data, name):
    check_cli(tmp_path_factory.mktemp("fuzz"), data, name, capsys)


@settings(SETTINGS, max_examples=25)
@given(mutated_corpus())
def test_cli_mutated_corpus(tmp_path_factory, capsys, named):
    name, text = named
    check_cli(tmp_path_factory.mktemp("fuzz"), text.encode("utf-8", errors="surrogatepass"), name, capsys)


@settings(SETTINGS, max_examples=25)
@given(workflow_shaped)
def test_cli_random_workflows(tmp_path_factory, capsys, doc):
    check_cli(tmp_path_factory.mktemp("fuzz"), as_skill(dump(doc), True).encode("utf-8", "surrogatepass"),
              "f.md", capsys)
