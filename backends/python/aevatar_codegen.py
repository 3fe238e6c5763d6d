"""IR of an aevatar workflow -> a Python module that runs it.

The module holds one function per step (and per sub-step of a composite)
that evaluates the step's parameters from the run's variables, with every
aevatar expression compiled by :mod:`flowc.backends.python.aevatar_expr` (no
expression text is interpreted at run time), and a ``PLAN``: the steps as
plain data naming those functions. ``run(inputs, host)`` hands the plan to
the kernel in :mod:`flowc.backends.python.rt_aevatar_run`.

Safety: ids, names, keys and strings reach the text only as ``repr()`` of
plain ``str``/number constants; function names are generated (``_p0``,
``_p1`` ...); comments carry ``ascii()`` text.
"""

from __future__ import annotations

import os
from typing import Any

from flowc import __version__
from flowc.backends.python.aevatar_expr import AevatarCompileError, compile_expr
from flowc.backends.python.codegen import BackendError
from flowc.backends.python.rt_aevatar_run import _canonical
from flowc.ir import expr as E
from flowc.ir.workflow import EdgeKind, Node, Workflow

__all__ = ["AevatarCodegenError", "generate"]

# The IR operations the aevatar front end lowers to.
_OPS = frozenset({"call", "transform.apply", "assign", "branch", "switch", "assert", "while", "foreach",
                  "parallel", "race", "map_reduce", "cache", "reflect", "vote", "sleep"})
# Parameters a while evaluates itself, per iteration (not at dispatch).
_DEFERRED_PREFIX = "sub_param_"


class AevatarCodegenError(BackendError):
    """The workflow uses something this generator can't compile."""


class _Name:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _const(value: Any) -> str:
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, int):
        return int.__repr__(int(value))
    if isinstance(value, float):
        return float.__repr__(float(value))
    if isinstance(value, str):
        return str.__repr__(str(value))
    raise AevatarCodegenError(f"not a plain constant: {type(value).__name__}")


def _render(value: Any, indent: int = 0, depth: int = 0) -> str:
    if depth > 100:
        raise AevatarCodegenError("the plan nests too deeply to compile")
    if isinstance(value, _Name):
        return value.name
    if isinstance(value, dict):
        pad = " " * (indent + 4)
        items = [f"{pad}{_const(str(k))}: {_render(v, indent + 4, depth + 1)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}" if items else "{}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            return "[" + ", ".join(_render(v, indent, depth + 1) for v in value) + "]"
        pad = " " * (indent + 4)
        return "[\n" + "\n".join(f"{pad}{_render(v, indent + 4, depth + 1)}," for v in value) + "\n" + \
            " " * indent + "]"
    return _const(value)


def _comment(text: Any) -> str:
    shown = ascii(str(text))[:72]
    return "".join(ch if " " <= ch <= "~" else "?" for ch in shown)


def _lit(node: Node, name: str) -> str | None:
    value = node.attr(name)
    return value.value if isinstance(value, E.Literal) and isinstance(value.value, str) else None


class _Generator:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.functions: list[str] = []

    def params_function(self, node: Node, ci: bool, skip=lambda key: False) -> _Name:
        mapping = node.attr("parameters")
        entries = []
        if isinstance(mapping, E.MapExpr):
            for entry in mapping.entries:
                key = entry.key.value if isinstance(entry.key, E.Literal) else None
                if not isinstance(key, str):
                    raise AevatarCodegenError(f"step {node.id!r}: a parameter name is not a string")
                if skip(key):
                    continue
                try:
                    entries.append(f"({_const(key)}, {compile_expr(entry.value, ci)})")
                except AevatarCompileError as exc:
                    raise AevatarCodegenError(f"step {node.id!r}, parameter {key!r}: {exc}") from None
        name = f"_p{len(self.functions)}"
        body = "[\n        " + ",\n        ".join(entries) + ",\n    ]" if entries else "[]"
        self.functions.append(f"def {name}(V):  # {_comment(node.id)}\n    return {body}")
        return _Name(name)

    def expression_function(self, node: Node, expr: E.Expr, ci: bool, what: str) -> _Name:
        try:
            src = compile_expr(expr, ci)
        except AevatarCompileError as exc:
            raise AevatarCodegenError(f"step {node.id!r}, {what}: {exc}") from None
        name = f"_p{len(self.functions)}"
        self.functions.append(f"def {name}(V):  # {_comment(node.id + ' ' + what)}\n    return {src}")
        return _Name(name)

    def step_type(self, node: Node) -> str:
        if node.op == "call" and _lit(node, "capability") == "extension":
            return "extension"
        return _canonical(node.kind)

    def sub_node(self, node: Node) -> dict:
        ci = _lit(node, "variables") == "case_insensitive"
        return {
            "id": node.id,
            "type": self.step_type(node),
            "role": node.actor,
            "params": self.params_function(node, ci),
            "capability": _lit(node, "capability"),
            "name": _lit(node, "name"),
        }

    def step(self, node: Node) -> dict:
        if node.op not in _OPS:
            raise AevatarCodegenError(f"step {node.id!r}: operation {node.op!r} has no meaning under aevatar "
                                      "semantics")
        kind = self.step_type(node)
        deferred = kind == "while"
        data: dict[str, Any] = {
            "id": node.id,
            "type": kind,
            "role": node.actor,
            "params": self.params_function(
                node, False, (lambda k: k == "condition" or k.lower().startswith(_DEFERRED_PREFIX))
                if deferred else (lambda k: False)),
            "capability": _lit(node, "capability"),
            "name": _lit(node, "name"),
            "next": None,
            "branches": [],
            "retry": None,
            "on_error": None,
        }
        for edge in self.wf.edges:
            if edge.source != node.id:
                continue
            if edge.kind is EdgeKind.SEQUENCE:
                data["next"] = edge.target
            elif edge.kind is EdgeKind.BRANCH and edge.label != "on_fail":
                data["branches"].append([edge.label or "", edge.target])
        if node.retry is not None:
            r = node.retry
            data["retry"] = [r.max_retries, r.delay_ms, 2 if r.backoff == 2.0 else 1]
        if node.on_error.action != "fail":
            default = node.attr("default_output")
            data["on_error"] = [node.on_error.action, node.on_error.target,
                                default.value if isinstance(default, E.Literal) else None]
        if deferred:
            condition = node.attr("condition")
            data["condition"] = self.expression_function(node, condition, True, "while condition")
        if node.regions:
            data["regions"] = {region.name: [self.sub_node(n) for n in region.nodes] for region in node.regions}
        return data

    def roles(self) -> dict:
        out: dict[str, dict] = {}
        for actor in self.wf.actors:
            config: dict[str, Any] = {"id": actor.id}
            for attr in actor.attrs:
                if isinstance(attr.value, E.Literal) and isinstance(attr.value.value, str):
                    config[attr.name] = attr.value.value
                elif isinstance(attr.value, E.ListExpr):
                    config[attr.name] = [i.value for i in attr.value.items if isinstance(i, E.Literal)]
            out[actor.id] = config
        return out

    def generate(self) -> str:
        plan = {"name": self.wf.name, "roles": self.roles(), "steps": [self.step(n) for n in self.wf.nodes]}
        source = os.path.basename(self.wf.span.file) if self.wf.span.file else "<text>"
        out = [
            (f'"""aevatar workflow {_comment(self.wf.name)}, compiled by flowc {__version__} from '
             f'{_comment(source)}.'),
            "",
            "run(inputs, host) runs it: inputs {\"input\": <prompt>, <run parameters>...}; see",
            "docs/aevatar.md and docs/host.md.",
            '"""',
            "",
            "from flowc.backends.python import rt_aevatar as _rta  # noqa: F401",
            "from flowc.backends.python import rt_aevatar_run as _run",
            "",
            "",
        ]
        out.append("\n\n\n".join(self.functions))
        out += ["", "", "PLAN = " + _render(plan), "", "",
                "def run(inputs, host):",
                '    """Run the workflow with ``inputs`` against ``host``; return the run record."""',
                "    return _run.run(PLAN, inputs, host)",
                "", "",
                'if __name__ == "__main__":',
                "    raise SystemExit(_run.main(run))",
                ""]
        return "\n".join(out)


def generate(workflow: Workflow) -> str:
    if workflow.semantics != "aevatar":
        raise AevatarCodegenError(f"not an aevatar workflow: {workflow.semantics!r}")
    return _Generator(workflow).generate()
