"""The IR's plain-data form is lossless: through Python objects, JSON text and
msgpack bytes, every corpus workflow comes back equal."""

from __future__ import annotations

import json
import math

import attrs
import msgpack
import pytest
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.serialize import from_data, to_data
from flowc.ir.span import Span
from flowc.ir.workflow import (
    Binding,
    Edge,
    EdgeKind,
    ErrorPolicy,
    Guard,
    Iteration,
    Node,
    Param,
    RetryPolicy,
    Workflow,
)
from flowc.pipeline import driver


def compiled(path) -> Workflow:
    result = driver.compile_file(str(path))
    if result.workflow is None:
        pytest.fail(f"{path.name} did not compile: {[d.code for d in result.diagnostics]}")
    return result.workflow


def _only_plain(value) -> None:
    """Plain data: dicts with string keys, lists/tuples, str, int, float, bool, None."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str), k
            _only_plain(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _only_plain(v)
    else:
        assert value is None or isinstance(value, (str, int, float, bool)), type(value)


def test_round_trip_objects(corpus_path):
    result = driver.compile_file(str(corpus_path))
    if result.workflow is None:  # malformed-no-block / bad-yaml have nothing to serialize
        assert not result.ok
        return
    wf = result.workflow
    data = to_data(wf)
    _only_plain(data)
    assert from_data(data) == wf


def test_round_trip_json(clean_path):
    wf = compiled(clean_path)
    text = json.dumps(to_data(wf), allow_nan=False)
    again = from_data(json.loads(text))
    assert again == wf
    # Equal as data too, not only through __eq__ (which skips metadata's hash).
    assert to_data(again) == json.loads(text)
    assert again.metadata == wf.metadata


def test_round_trip_msgpack(clean_path):
    wf = compiled(clean_path)
    packed = msgpack.packb(to_data(wf), use_bin_type=True)
    again = from_data(msgpack.unpackb(packed, raw=False))
    assert again == wf


def test_round_trip_keeps_spans_and_expression_nodes(wfs_fixtures_dir):
    wf = compiled(wfs_fixtures_dir / "branch.md")
    again = from_data(json.loads(json.dumps(to_data(wf))))
    cond = again.node("branch").attr("condition")
    assert isinstance(cond, E.Binary) and cond.op == "wfs.eq"
    assert isinstance(cond.left, E.Ref) and cond.left.step_id() == "check"
    assert cond.span == wf.node("branch").attr("condition").span
    assert cond.span.line > 0
    assert [e.kind for e in again.edges] == [e.kind for e in wf.edges]
    assert all(isinstance(e.kind, EdgeKind) for e in again.edges)


def test_to_data_is_tagged():
    wf = Workflow("w", "workflowskill", "workflowskill", nodes=(
        Node("a", "call", "tool", inputs=(Binding("x", T.INT, E.Ref("inputs", (E.Field("n"),))),)),))
    data = to_data(wf)
    value = data["nodes"][0]["inputs"][0]["value"]
    assert value["node"] == "Ref"
    assert value["path"][0]["node"] == "Field"


def _every_construct() -> Workflow:
    sp = Span("f.md", 3, 5, 3, 20)
    lit = E.Literal
    expr = E.Conditional(
        "cel.ternary",
        E.Unary("wfs.not", E.Ref("item", (E.Field("ok", sp), E.Index(lit(0, "int"))), sp)),
        E.Call("cel.size", (E.ListExpr((lit(1, "int"), lit(2.5, "float"), lit(None, "null"))),)),
        E.MapExpr((E.MapEntry(lit("k", "string"), E.Template(
            (lit("a ", "string"), E.Ref("inputs", (E.Field("x"),))), "wfs", False, sp)),)),
        sp)
    lam = E.Call("cel.all", (E.Ref("inputs", (E.Field("xs"),)), E.Lambda(("x",), E.Binary(
        "wfs.gt", E.Ref("x"), lit(2, "int")))))
    node = Node(
        "s", "call", "tool", sp, "desc",
        inputs=(Binding("a", T.array_of(T.object_of({"n": T.INT})), expr, sp),
                Binding("b", T.ANY, lam)),
        outputs=(Binding("o", T.STRING, E.Ref("result", (E.Field("o"),))),),
        guard=Guard(lit(True, "bool"), "js_boolean", sp),
        iteration=Iteration(E.Ref("inputs", (E.Field("xs"),)), delay_ms=500),
        on_error=ErrorPolicy("ignore"),
        retry=RetryPolicy(3, 100, 2.0),
    )
    return Workflow(
        "w", "workflowskill", "workflowskill", nodes=(node, Node("$end", "end", "end")),
        edges=(Edge("s", "$end", EdgeKind.SEQUENCE, None, 0, sp),),
        entry=("s",), terminal="$end",
        inputs=(Param("xs", T.ARRAY, [1, {"a": None}], True, "the xs", sp),),
        outputs=(Binding("o", T.STRING, lit("bytes", "bytes")),),
        metadata={"frontmatter": {"name": "w", "tags": ["a", "b"]}},
    )


def test_every_construct_round_trips_through_all_three_forms():
    wf = _every_construct()
    data = to_data(wf)
    assert from_data(data) == wf
    assert from_data(json.loads(json.dumps(data))) == wf
    assert from_data(msgpack.unpackb(msgpack.packb(data), raw=False)) == wf


def test_special_floats_round_trip_in_python_and_msgpack():
    wf = attrs.evolve(_every_construct(), inputs=(Param("f", T.FLOAT, math.inf, True),))
    data = to_data(wf)
    assert from_data(data) == wf
    assert from_data(msgpack.unpackb(msgpack.packb(data), raw=False)) == wf


def test_from_data_rejects_an_untagged_expression():
    data = to_data(_every_construct())
    data["outputs"][0]["value"] = {"value": 1}
    with pytest.raises(Exception) as info:  # cattrs groups the failures
        from_data(data)
    assert "not an IR expression" in " ".join(_messages(info.value))


def _messages(exc: BaseException) -> list[str]:
    out = [str(exc)]
    for sub in getattr(exc, "exceptions", ()):
        out.extend(_messages(sub))
    return out


def test_strip_spans_after_round_trip(clean_path):
    wf = compiled(clean_path)
    again = from_data(to_data(wf))
    for a, b in zip(wf.nodes, again.nodes):
        for x, y in zip(a.attrs, b.attrs):
            assert E.strip_spans(x.value) == E.strip_spans(y.value)
