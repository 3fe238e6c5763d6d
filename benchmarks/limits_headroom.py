"""How far the largest corpus workflow stays below each of flowc's limits.

    python benchmarks/limits_headroom.py

Compiles every workflow of the test corpus (tests/data) and the examples,
measures what the limits of flowc.ir.limits bound (file size, steps,
expression depth and items, constant depth, retries, durations) and prints
the corpus maximum beside the limit. docs/limits.md quotes this table;
tests/test_limits_headroom.py asserts the headroom.
"""

from __future__ import annotations

import sys
from pathlib import Path

from flowc.ir import expr as E
from flowc.ir import limits as L
from flowc.ir.workflow import Node, Workflow
from flowc.pipeline.driver import compile_file, expand_paths

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIRS = ("tests/data/workflowskill", "tests/data/aevatar/aevatarAI__aevatar",
               "tests/data/aevatar/seed_examples", "tests/data/instruction", "examples")


def expr_items(e: E.Expr) -> int:
    """The widest list of one node: arguments, elements, entries, path segments, parts."""
    if isinstance(e, E.Ref):
        return len(e.path)
    if isinstance(e, E.Call):
        return len(e.args)
    if isinstance(e, E.ListExpr):
        return len(e.items)
    if isinstance(e, E.MapExpr):
        return len(e.entries)
    if isinstance(e, E.Template):
        return len(e.parts)
    return 0


def expr_depth_and_items(root: E.Expr) -> tuple[int, int]:
    depth = items = 0
    stack = [(root, 1)]
    while stack:
        e, d = stack.pop()
        depth, items = max(depth, d), max(items, expr_items(e))
        stack.extend((c, d + 1) for c in e.children())
    return depth, items


def value_depth(value: object) -> int:
    depth, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        depth = max(depth, d)
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return depth


def node_exprs(node: Node):
    for binding in (*node.inputs, *node.outputs):
        if binding.value is not None:
            yield binding.value
    for attr in node.attrs:
        yield attr.value
    if node.guard is not None:
        yield node.guard.expr
    if node.iteration is not None:
        yield node.iteration.over


def all_nodes(nodes):
    for node in nodes:
        yield node
        for region in node.regions:
            yield from all_nodes(region.nodes)


def measure(workflow: Workflow, size: int) -> dict[str, int]:
    m = dict.fromkeys(("source bytes", "steps", "expression depth", "expression items", "value depth",
                       "retries", "duration"), 0)
    m["source bytes"] = size
    exprs = [b.value for b in workflow.outputs if b.value is not None]
    for node in all_nodes(workflow.nodes):
        m["steps"] += 1
        exprs.extend(node_exprs(node))
        if node.retry is not None:
            m["retries"] = max(m["retries"], node.retry.max_retries)
            m["duration"] = max(m["duration"], node.retry.delay_ms)
        if node.iteration is not None:
            m["duration"] = max(m["duration"], node.iteration.delay_ms)
    for param in workflow.inputs:
        m["value depth"] = max(m["value depth"], value_depth(param.default))
    for e in exprs:
        depth, items = expr_depth_and_items(e)
        m["expression depth"] = max(m["expression depth"], depth)
        m["expression items"] = max(m["expression items"], items)
        if isinstance(e, E.Literal):
            m["value depth"] = max(m["value depth"], value_depth(e.value))
    return m


def corpus_maxima() -> tuple[dict[str, int], int]:
    """The largest value of each measure over the corpus, and the number of workflows read."""
    maxima: dict[str, int] = {}
    count = 0
    for path in expand_paths([str(ROOT / d) for d in CORPUS_DIRS]):
        result = compile_file(path)
        if result.workflow is None:
            continue
        count += 1
        for key, value in measure(result.workflow, Path(path).stat().st_size).items():
            maxima[key] = max(maxima.get(key, 0), value)
    return maxima, count


LIMIT_OF = {"source bytes": L.MAX_SOURCE_BYTES, "steps": L.MAX_STEPS,
            "expression depth": L.MAX_EXPR_DEPTH, "expression items": L.MAX_EXPR_ITEMS,
            "value depth": L.MAX_VALUE_DEPTH, "retries": L.MAX_RETRIES, "duration": L.MAX_DURATION_MS}


def main() -> int:
    maxima, count = corpus_maxima()
    print(f"{count} corpus workflows")
    print(f"{'what':<18} {'corpus max':>12} {'limit':>14} {'headroom':>9}")
    for key, limit in LIMIT_OF.items():
        top = maxima.get(key, 0)
        room = f"{limit / top:.0f}x" if top else "-"
        print(f"{key:<18} {top:>12,} {limit:>14,} {room:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
