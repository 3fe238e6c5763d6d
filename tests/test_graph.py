"""`flowc graph`: the IR as Mermaid, DOT, SVG and PNG.

Mermaid and DOT are tested everywhere. SVG and PNG need Graphviz; their
tests run only where `dot` is installed, and the "Graphviz is not
installed" path is tested everywhere by hiding it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from flowc import cli, diagrams
from flowc.diagrams import image, model
from flowc.ir import expr as E
from flowc.ir.diagnostics import warning
from flowc.ir.span import Span
from flowc.ir.workflow import Attr, Edge, EdgeKind, ErrorPolicy, Node, Region, Workflow
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data"
RELEASE_TRAIN = DATA / "graph" / "release-train.md"
TRIAGE = Path(__file__).resolve().parents[1] / "examples" / "triage" / "SKILL.md"
HAVE_DOT = shutil.which("dot") is not None


def needs_dot(test):
    """SVG/PNG tests need Graphviz, which .ci/run installs: they fail, not
    skip, where it is missing (the missing-Graphviz message has its own test)."""
    return test


def compiled(path: Path):
    result = driver.compile_file(str(path))
    assert result.workflow is not None
    return result


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def synthetic() -> Workflow:
    """Every edge kind, a region, a trigger, a missing target and awkward text."""
    loop_body = Region("body", nodes=(Node("work", "call", "tool", attrs=(
        Attr("capability", E.Literal("tool")), Attr("name", E.Literal("do_it"))),),))
    nodes = (
        Node("t", "trigger", "manual"),
        Node("a", "call", "tool", attrs=(Attr("capability", E.Literal("tool")),
                                         Attr("name", E.Literal('say "hi" <b>#1</b> | x'))),
             on_error=ErrorPolicy("goto", "recover")),
        Node("b", "branch", "conditional", attrs=(Attr("condition", E.Binary(
            "wfs.gt", E.Ref("inputs", (E.Field("n"),)), E.Literal(3))),)),
        Node("c", "transform.filter", "transform"),
        Node("d", "foreach", "foreach", regions=(loop_body,)),
        Node("recover", "call", "tool"),
        Node("$end", "end", "end"),
    )
    edges = (
        Edge("t", "a", EdgeKind.DEPENDENCY),
        Edge("a", "b", EdgeKind.SEQUENCE),
        Edge("a", "recover", EdgeKind.ERROR, "goto"),
        Edge("b", "c", EdgeKind.BRANCH, "then", 0),
        Edge("b", "d", EdgeKind.BRANCH, "else", 0),
        Edge("c", "$end", EdgeKind.FALLTHROUGH),
        Edge("d", "ghost", EdgeKind.SEQUENCE),
        Edge("recover", "$end", EdgeKind.SEQUENCE),
    )
    return Workflow("synthetic", "workflowskill", "workflowskill", nodes=nodes, edges=edges,
                    entry=("t",), terminal="$end")


# ------------------------------------------------------------------ model
def test_model_marks_start_terminal_and_categories():
    pic = model.build(compiled(TRIAGE).workflow)
    cats = {b.id: b.category for b in pic.boxes}
    assert cats[""] == "start" and cats["$end"] == "terminal"
    assert cats["fetch"] == "call" and cats["important"] == "transform"
    assert cats["nothing_important"] == "exit"
    fetch = next(b for b in pic.boxes if b.id == "fetch")
    assert [(ln.source, ln.target) for ln in pic.lines if ln.kind == "start"] == [("start", fetch.uid)]


def test_every_node_and_edge_is_drawn(clean_path):
    wf = compiled(clean_path).workflow
    pic = model.build(wf)
    ids = {b.id for b in pic.boxes}
    assert {n.id for n in wf.nodes} <= ids
    drawn = [ln for ln in pic.lines if ln.kind not in ("start", "layout", "body")]
    assert len(drawn) == len(wf.edges)


def test_edge_kinds_labels_regions_and_missing_targets():
    pic = model.build(synthetic())
    by_kind = {}
    for ln in pic.lines:
        by_kind.setdefault(ln.kind, []).append(ln)
    assert {"dependency", "sequence", "error", "branch", "fallthrough", "body"} <= set(by_kind)
    assert {ln.label for ln in by_kind["branch"]} == {"then", "else"}
    assert by_kind["error"][0].label == "goto"
    assert "start" not in by_kind  # the entry is a trigger: no start dot
    assert [c.title for c in pic.clusters] == ["d · body"]
    missing = [b for b in pic.boxes if b.category == "missing"]
    assert [b.id for b in missing] == ["ghost"] and missing[0].status == "error"
    branch = next(b for b in pic.boxes if b.id == "b")
    assert branch.lines == ("if $inputs.n > 3",)


def test_findings_are_highlighted_on_their_node(tmp_path):
    src = tmp_path / "w.yaml"
    src.write_text("steps:\n  - id: stop\n    type: exit\n    status: success\n"
                   "  - id: notify\n    type: tool\n    tool: slack.post\n", encoding="utf-8")
    result = compiled(src)
    assert "ANA402" in {d.code for d in result.diagnostics}
    pic = model.build(result.workflow, result.diagnostics)
    notify = next(b for b in pic.boxes if b.id == "notify")
    assert notify.status == "unreachable"
    assert any(f.startswith("ANA402") for f in notify.findings)
    dot = diagrams.to_dot(pic)
    line = next(ln for ln in dot.splitlines() if ln.strip().startswith(notify.uid + " "))
    assert 'fillcolor="#ffcdd2"' in line and 'color="#c62828"' in line and "unreachable ANA402" in line
    mermaid = diagrams.to_mermaid(pic)
    assert f"class {notify.uid} fc_unreachable" in mermaid
    assert "classDef fc_unreachable" in mermaid


def test_a_warning_on_a_node_is_orange():
    wf = synthetic()
    span = Span("x", 3, 1, 3, 5)
    wf = Workflow(wf.name, wf.dialect, wf.semantics,
                  nodes=tuple(Node(n.id, n.op, n.kind, span=span if n.id == "c" else n.span,
                                   attrs=n.attrs, regions=n.regions, on_error=n.on_error)
                              for n in wf.nodes),
                  edges=wf.edges, entry=wf.entry, terminal=wf.terminal)
    pic = model.build(wf, [warning("ANA502", "not an array", Span("x", 3, 2, 3, 3))])
    box = next(b for b in pic.boxes if b.id == "c")
    assert box.status == "warning"


# --------------------------------------------------------------- DOT text
def test_dot_styles_each_edge_kind():
    dot = diagrams.render(synthetic(), "dot")
    assert "digraph workflow {" in dot and dot.rstrip().endswith("}")
    assert re.search(r'-> n\d+ \[color="#78909c", style="dashed"\]', dot)           # fall-through
    assert re.search(r'label=" then "', dot) and re.search(r'label=" else "', dot)   # branch arms
    assert re.search(r'arrowhead="empty"', dot)                                     # dependency
    assert re.search(r'color="#c62828".*label=" goto "', dot)                       # error route
    assert "subgraph cluster_" in dot and "lhead=" in dot                           # region
    assert 'shape="doublecircle"' in dot and 'shape="cds"' in dot                   # terminal, trigger


def test_dot_escapes_label_text():
    dot = diagrams.render(synthetic(), "dot")
    assert "say &quot;hi&quot; &lt;b&gt;#1&lt;/b&gt; | x" in dot
    assert '<b>#1</b>' not in dot


def test_output_is_deterministic(clean_path):
    wf = compiled(clean_path).workflow
    for fmt in ("dot", "mermaid"):
        assert diagrams.render(wf, fmt) == diagrams.render(wf, fmt)


@needs_dot
def test_dot_text_is_accepted_by_graphviz(clean_path):
    result = compiled(clean_path)
    dot = diagrams.render(result.workflow, "dot", result.diagnostics)
    done = subprocess.run(["dot", "-Tcanon"], input=dot.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert not done.stderr, done.stderr.decode()


# ----------------------------------------------------------- Mermaid text
def test_mermaid_structure():
    text = diagrams.render(synthetic(), "mermaid")
    lines = text.splitlines()
    assert lines[:4] == ["---", 'title: "synthetic (workflowskill)"', "---", "flowchart TD"]
    assert "-.->" in text                     # fall-through and error route
    assert '-->|"then"|' in text and '-.->|"goto"|' in text
    assert "subgraph cluster_" in text and re.search(r"^\s+end$", text, re.MULTILINE)
    # linkStyle indices stay below the number of visible links
    visible = len(re.findall(r"^\s+n\S* (-->|-\.->)", text, re.MULTILINE)) + \
        len(re.findall(r"^\s+start -->", text, re.MULTILINE))
    assert all(int(i) < visible for i in re.findall(r"linkStyle (\d+)", text))


def test_mermaid_labels_cannot_break_the_chart():
    text = diagrams.render(synthetic(), "mermaid")
    label = next(ln for ln in text.splitlines() if "say" in ln)
    inner = label[label.index('"') + 1: label.rindex('"')]
    assert '"' not in inner and "|" not in inner.replace("#124;", "")
    assert "#quot;" in inner or "#34;" in inner
    assert "#60;" in inner and "#35;" in inner


def test_layout_links_follow_the_visible_ones():
    text = diagrams.render(compiled(RELEASE_TRAIN).workflow, "mermaid")
    body = [ln.strip() for ln in text.splitlines()]
    first_invisible = next(i for i, ln in enumerate(body) if "~~~" in ln)
    assert not any("-->" in ln or "-.->" in ln for ln in body[first_invisible:])


# ---------------------------------------------------- a 30-step workflow
def test_thirty_step_workflow_labels_stay_narrow():
    result = compiled(RELEASE_TRAIN)
    assert not [d for d in result.diagnostics if d.is_error]
    pic = model.build(result.workflow, result.diagnostics)
    steps = [b for b in pic.boxes if b.category not in ("start", "terminal")]
    assert len(steps) >= 30
    for box in steps:
        for line in box.lines + box.marks:
            assert len(line) <= model.WIDTH + 6, (box.id, line)
        assert len(box.lines) <= model.DETAIL_LINES


@needs_dot
def test_thirty_step_picture_is_a_tall_column_not_a_wide_sheet(tmp_path):
    out = tmp_path / "rt.png"
    code = cli.main(["graph", str(RELEASE_TRAIN), "-o", str(out)])
    assert code == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    assert width < 1200 and height > width


# ------------------------------------------------------- images and CLI
@needs_dot
@pytest.mark.parametrize("fmt, magic", [("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_images_through_graphviz(fmt, magic):
    data = diagrams.render(compiled(TRIAGE).workflow, fmt)
    assert isinstance(data, bytes) and data.startswith(magic)


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_missing_graphviz_is_a_clear_error(monkeypatch, fmt):
    monkeypatch.setattr(image.shutil, "which", lambda name: None)
    with pytest.raises(diagrams.GraphvizNotFound) as info:
        diagrams.render(compiled(TRIAGE).workflow, fmt)
    assert "Graphviz is not installed" in str(info.value)
    assert "--format mermaid" in str(info.value)


def test_cli_without_graphviz_exits_2_with_the_hint(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))   # no `dot` anywhere
    out = tmp_path / "triage.svg"
    code, stdout, err = run(capsys, "graph", str(TRIAGE), "-o", str(out))
    assert code == 2 and stdout == ""
    assert "Graphviz is not installed" in err and "apt-get install graphviz" in err
    assert not out.exists()


def test_cli_mermaid_and_dot_need_nothing(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out, _ = run(capsys, "graph", str(TRIAGE))
    assert code == 0 and "flowchart TD" in out
    code, out, _ = run(capsys, "graph", str(TRIAGE), "--format", "dot", "--rankdir", "LR")
    assert code == 0 and "rankdir=LR" in out


def test_cli_format_follows_the_output_suffix(capsys, tmp_path):
    for suffix, needle in ((".dot", "digraph workflow"), (".mmd", "flowchart TD")):
        out = tmp_path / f"g{suffix}"
        assert run(capsys, "graph", str(TRIAGE), "-o", str(out))[0] == 0
        assert needle in out.read_text(encoding="utf-8")


def test_cli_mermaid_into_markdown_is_fenced(capsys, tmp_path):
    out = tmp_path / "triage.md"
    assert run(capsys, "graph", str(TRIAGE), "-o", str(out))[0] == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("```mermaid\n---\n") and text.endswith("\n```\n")


def test_cli_draws_a_workflow_with_findings_and_reports_them(capsys, tmp_path):
    src = tmp_path / "w.yaml"
    src.write_text("steps:\n  - id: stop\n    type: exit\n    status: success\n"
                   "  - id: notify\n    type: tool\n    tool: slack.post\n", encoding="utf-8")
    code, out, err = run(capsys, "graph", str(src), "--format", "dot")
    assert code == 0
    assert "warning[ANA402]" in err and "unreachable ANA402" in out


def test_cli_no_picture_when_the_workflow_cannot_be_read(capsys, wfs_fixtures_dir):
    code, out, err = run(capsys, "graph", str(wfs_fixtures_dir / "malformed-bad-yaml.md"))
    assert code == 1 and out == ""
    assert "error[YAML001]" in err and "no picture" in err


# ------------------------------------------------- the other dialects' corpora
def _other_corpora() -> list[tuple[str, Path]]:
    out = []
    for dialect in ("aevatar", "instruction"):
        folder = DATA / dialect
        if folder.is_dir():
            out += [(dialect, p) for p in sorted(folder.rglob("*"))
                    if p.suffix in (".yaml", ".yml", ".md") and p.name != "README.md"]
    return out


@pytest.mark.parametrize("dialect, path", _other_corpora(),
                         ids=lambda v: v if isinstance(v, str) else str(v.relative_to(DATA)))
def test_other_dialects_draw(dialect, path):
    result = driver.compile_file(str(path), dialect)
    if result.workflow is None:
        # Only the negative cases stop before the IR exists.
        assert "negative" in path.parts, [d.code for d in result.diagnostics]
        return
    pic = model.build(result.workflow, result.diagnostics)
    assert {n.id for n in result.workflow.nodes} <= {b.id for b in pic.boxes}
    text = diagrams.render(result.workflow, "mermaid", result.diagnostics)
    assert "flowchart TD" in text
    dot = diagrams.render(result.workflow, "dot", result.diagnostics)
    if HAVE_DOT:
        done = subprocess.run(["dot", "-Tcanon"], input=dot.encode(), capture_output=True, check=False)
        assert done.returncode == 0 and not done.stderr, done.stderr.decode()


MERMAID_KEYWORDS = {"end", "call", "click", "style", "class", "classDef", "linkStyle", "subgraph", "graph",
                    "flowchart", "direction", "default", "href", "callback"}


def test_mermaid_names_are_never_keywords():
    """`classDef call ...` is a parse error in Mermaid: names carry a prefix."""
    text = diagrams.render(synthetic(), "mermaid")
    names = re.findall(r"^\s+classDef (\S+)", text, re.MULTILINE)
    names += [m.split()[-1] for m in re.findall(r"^\s+class \S+ \S+$", text, re.MULTILINE)]
    assert names and all(n.startswith("fc_") for n in names)
    ids = re.findall(r"^\s+([A-Za-z_][\w]*)[\[\(\{>]", text, re.MULTILINE)
    assert ids and not MERMAID_KEYWORDS & set(ids)
