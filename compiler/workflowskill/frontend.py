"""The WorkflowSkill front end: SKILL.md / YAML -> checked IR.

Faithful to the seed and to the reference runtime's observable behaviour,
and stricter where the reference is silent (see docs/workflowskill.md):
unknown keys, field shapes, expression syntax and references are all
checked here, with a span for every finding.
"""

from __future__ import annotations

import itertools
import math
import os
import re

from flowc.compiler import yamlsrc
from flowc.compiler.numbers import as_count, bounded_digits, shown
from flowc.compiler.suggest import did_you_mean
from flowc.compiler.workflowskill import fields as F
from flowc.compiler.workflowskill.expressions import ExpressionError, literal, parse_expression, parse_value
from flowc.compiler.workflowskill.markdown import has_workflow_fence, split_skill
from flowc.compiler.yamlsrc import YMap, YNode, YScalar, YSeq, type_name
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.diagnostics import DiagnosticSink
from flowc.ir.limits import MAX_BACKOFF, MAX_DURATION_MS, MAX_RETRIES, MAX_STEPS
from flowc.ir.ops import END_NODE_ID
from flowc.ir.span import Span
from flowc.ir.workflow import (
    Attr,
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

DIALECT = "workflowskill"
_DURATION = re.compile(r"^(\d+)(ms|s)$")
_STEP_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse_duration_ms(text: str) -> int | None:
    """A duration in ms (``"500ms"``, ``"2s"``); None when it is not one.
    A duration beyond ``MAX_DURATION_MS`` comes back as ``MAX_DURATION_MS + 1``
    (its digits are never converted whole), for the caller to report."""
    m = _DURATION.match(text)
    if not m:
        return None
    scale = 1 if m.group(2) == "ms" else 1000
    value = bounded_digits(m.group(1), MAX_DURATION_MS // scale)
    return MAX_DURATION_MS + 1 if value is None else value * scale


class _StepInfo:
    """What the checker knows about a declared step while lowering."""

    __slots__ = ("id", "index", "node", "span", "type")

    def __init__(self, index: int, step_id: str, step_type: str, node: YMap) -> None:
        self.index = index
        self.id = step_id
        self.type = step_type
        self.node = node
        self.span = node.span


class WorkflowSkillFrontEnd:
    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.sink = DiagnosticSink()
        self.current: _StepInfo | None = None
        self.unusable_ids: set[str] = set()

    # ------------------------------------------------------------------ entry
    def compile(self) -> Workflow | None:
        doc_root, name, description, meta = self._load_document()
        if doc_root is None:
            return None
        steps = doc_root.get("steps")
        if isinstance(steps, YSeq) and len(steps.items) > MAX_STEPS:
            # Counted before any step is looked at: a huge list costs nothing more.
            self.sink.error("LIM002", f"the workflow has {len(steps.items)} steps; the limit is {MAX_STEPS}",
                            steps.span)
            return None
        return self._lower_workflow(doc_root, name, description, meta)

    def _load_document(self):
        text = self.text.replace("\r\n", "\n")
        stem = os.path.splitext(os.path.basename(self.file))[0] or "workflow"
        # A .yaml file is YAML even when a string in it holds a ``` fence.
        is_markdown = self.file.endswith(".md") or (
            not self.file.endswith((".yaml", ".yml", ".json")) and has_workflow_fence(text))
        if not is_markdown:
            root, diags = yamlsrc.load(text, self.file)
            self.sink.extend(diags)
            return self._require_map(root, Span(self.file, 1, 1, 1, 2)), stem, None, {}
        skill = split_skill(text)
        if skill.workflow is None:
            self.sink.error("WFS101", "no ```workflow fenced code block found", Span(self.file, 1, 1, 1, 2))
            return None, stem, None, {}
        name, description = stem, None
        # The Markdown around the block, kept for translation (a formatter
        # rewrites the workflow, not the prose).
        meta: dict = {"markdown": {"before": skill.before, "after": skill.after}}
        if skill.frontmatter is None:
            self.sink.warning("WFS110", "no frontmatter: the workflow is named after its file "
                              f"({stem!r})", Span(self.file, 1, 1, 1, 2))
        else:
            fm, diags = yamlsrc.load(skill.frontmatter, self.file, skill.frontmatter_line)
            if diags or not isinstance(fm, YMap):
                self.sink.warning("WFS110", "the frontmatter is not a YAML mapping; it is ignored",
                                  Span(self.file, 1, 1, 1, 4))
            else:
                meta["frontmatter"] = fm.plain()
                for key in ("name", "description"):
                    v = fm.get(key)
                    if not (isinstance(v, YScalar) and isinstance(v.value, str) and v.value.strip()):
                        self.sink.warning("WFS110", f"the frontmatter has no {key!r}",
                                          v.span if v else Span(self.file, 1, 1, 1, 4))
                n, d = fm.get("name"), fm.get("description")
                if isinstance(n, YScalar) and isinstance(n.value, str) and n.value.strip():
                    name = n.value
                if isinstance(d, YScalar) and isinstance(d.value, str):
                    description = d.value
        block_span = Span(self.file, skill.workflow_line, 1, skill.workflow_line, 12)
        root, diags = yamlsrc.load(skill.workflow, self.file, skill.workflow_line)
        self.sink.extend(diags)
        if diags:
            return None, name, description, meta
        return self._require_map(root, block_span), name, description, meta

    def _require_map(self, root: YNode | None, span: Span) -> YMap | None:
        if root is None:
            if not self.sink.has_errors:
                self.sink.error("WFS102", "the workflow is empty", span)
            return None
        if not isinstance(root, YMap):
            self.sink.error("WFS103", f"the workflow must be a mapping with inputs, outputs and steps, "
                            f"not {type_name(root)}", root.span)
            return None
        return root

    # ------------------------------------------------------------ top level
    def _lower_workflow(self, root: YMap, name: str, description, meta) -> Workflow:
        self._check_keys(root, F.TOP_LEVEL_KEYS, "the workflow")
        inputs = self._lower_inputs(root.get("inputs"))
        self.input_names = {p.name for p in inputs}
        self.input_types = {p.name: p.type for p in inputs}
        steps_node = root.get("steps")
        infos = self._collect_steps(steps_node, root)
        self.infos = infos
        # Duplicate ids are reported by analyze (ANA401); the first one wins here.
        self.by_id: dict[str, _StepInfo] = {}
        for info in infos:
            self.by_id.setdefault(info.id, info)
        self.branch_refs = self._collect_branch_targets(infos)
        outputs_node = root.get("outputs")
        self.output_names = list(outputs_node.keys()) if isinstance(outputs_node, YMap) else []
        nodes = [self._lower_step(info) for info in infos]
        outputs = self._lower_outputs(outputs_node)
        nodes.append(Node(END_NODE_ID, "end", "end", span=root.span))
        edges = self._edges(infos, nodes)
        top_level = [i.id for i in infos if i.id not in self.branch_refs]
        return Workflow(
            name=name,
            dialect=DIALECT,
            semantics=DIALECT,
            nodes=tuple(nodes),
            edges=tuple(edges),
            entry=(top_level[0] if top_level else END_NODE_ID,),
            terminal=END_NODE_ID,
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            description=description,
            metadata=meta,
            span=root.span,
        )

    def _collect_steps(self, steps_node: YNode | None, root: YMap) -> list[_StepInfo]:
        if steps_node is None:
            self.sink.error("WFS109", "the workflow has no `steps`", root.span)
            return []
        if not isinstance(steps_node, YSeq):
            self.sink.error("WFS103", f"`steps` must be a list of steps, not {type_name(steps_node)}",
                            steps_node.span)
            return []
        if not steps_node.items:
            self.sink.error("WFS109", "the workflow must have at least one step", steps_node.span)
        infos = []
        # Steps declared with an id but no usable type (self.unusable_ids) are
        # reported once here; references to them are not "not declared".
        for index, step in enumerate(steps_node.items):
            if not isinstance(step, YMap):
                self.sink.error("WFS103", f"a step must be a mapping, not {type_name(step)}", step.span)
                continue
            sid = step.get("id")
            if sid is None:
                self.sink.error("WFS104", "the step has no `id`", step.span)
                continue
            if not (isinstance(sid, YScalar) and isinstance(sid.value, str) and sid.value):
                self.sink.error("WFS103", f"a step `id` must be a non-empty string, not {type_name(sid)}",
                                sid.span)
                continue
            if not _STEP_ID.match(sid.value):
                self.sink.warning("WFS106", f"step id {sid.value!r} cannot be referenced from an "
                                  "expression (ids are letters, digits and underscores)", sid.span)
            stype = step.get("type")
            if stype is None:
                self.sink.error("WFS104", f"step {sid.value!r} has no `type` (one of "
                                f"{', '.join(F.STEP_TYPES)})", step.span)
                self.unusable_ids.add(sid.value)
                continue
            if not (isinstance(stype, YScalar) and stype.value in F.STEP_TYPES):
                hint = did_you_mean(stype.value, F.STEP_TYPES) if isinstance(stype, YScalar) else None
                self.sink.error("WFS106", f"step {sid.value!r} has unknown type "
                                f"{_show(stype)}; expected one of {', '.join(F.STEP_TYPES)}",
                                stype.span, *([hint] if hint else []))
                self.unusable_ids.add(sid.value)
                self._expression_syntax(step)
                continue
            infos.append(_StepInfo(index, sid.value, stype.value, step))
        return infos

    def _collect_branch_targets(self, infos: list[_StepInfo]) -> dict[str, list[tuple[_StepInfo, int]]]:
        """Every id named in any conditional's then/else, with who names it."""
        refs: dict[str, list[tuple[_StepInfo, int]]] = {}
        for info in infos:
            if info.type != "conditional":
                continue
            for arm in ("then", "else"):
                for pos, target in enumerate(self._id_list(info.node.get(arm), arm, info)):
                    refs.setdefault(target.value, []).append((info, pos))
        return refs

    def _id_list(self, node: YNode | None, arm: str, info: _StepInfo) -> list[YScalar]:
        if node is None:
            return []
        if isinstance(node, YScalar) and isinstance(node.value, str):
            return [node]
        if not isinstance(node, YSeq):
            return []
        return [item for item in node.items if isinstance(item, YScalar) and isinstance(item.value, str)]

    # ---------------------------------------------------------- inputs/outputs
    def _lower_inputs(self, node: YNode | None) -> list[Param]:
        params = []
        for name, decl in self._named_decls(node, "inputs", "workflow input"):
            self._check_keys(decl, F.INPUT_KEYS, f"workflow input {name!r}")
            ty = self._decl_type(decl, f"workflow input {name!r}")
            default = decl.get("default")
            has_default = default is not None
            value = default.plain() if default is not None else None
            if has_default and ty is not None:
                vt = T.of_value(value)
                if value is not None and not _literal_fits(value, ty):
                    self.sink.error("ANA501", f"the default of input {name!r} is {vt}, but the input is "
                                    f"declared {ty}", default.span)
            desc = decl.get("description")
            params.append(Param(name, ty or T.ANY, (value), has_default,
                                desc.value if isinstance(desc, YScalar) and isinstance(desc.value, str)
                                else None, decl.span))
        return params

    def _lower_outputs(self, node: YNode | None) -> list[Binding]:
        outputs = []
        for name, decl in self._named_decls(node, "outputs", "workflow output"):
            self._check_keys(decl, F.OUTPUT_KEYS, f"workflow output {name!r}")
            ty = self._decl_type(decl, f"workflow output {name!r}")
            value = self._value(decl.get("value"), context="workflow_output")
            outputs.append(Binding(name, ty or T.ANY, value, decl.span))
        return outputs

    def _named_decls(self, node: YNode | None, what: str, label: str):
        if node is None:
            return
        if not isinstance(node, YMap):
            self.sink.error("WFS103", f"`{what}` must be a mapping keyed by name, not {type_name(node)}",
                            node.span)
            return
        for key, decl in node.items:
            name = str(key.value)
            if not isinstance(decl, YMap):
                code = "WFS108" if what != "outputs" and label.startswith("step") else "WFS103"
                self.sink.error(code, f"{label} {name!r} must be a mapping with `type`, not {type_name(decl)}",
                                decl.span)
                continue
            yield name, decl

    def _decl_type(self, decl: YMap, label: str) -> T.Type | None:
        tnode = decl.get("type")
        if tnode is None:
            self.sink.error("WFS104", f"{label} has no `type` (one of {', '.join(F.TYPE_NAMES)})", decl.span)
            return None
        if not (isinstance(tnode, YScalar) and tnode.value in F.TYPE_NAMES):
            hint = did_you_mean(tnode.value, F.TYPE_NAMES) if isinstance(tnode, YScalar) else None
            self.sink.error("WFS106", f"{label} has unknown type {_show(tnode)}; expected one of "
                            f"{', '.join(F.TYPE_NAMES)}", tnode.span, *([hint] if hint else []))
            return None
        return T.from_name(tnode.value)

    # ------------------------------------------------------------------ steps
    def _lower_step(self, info: _StepInfo) -> Node:
        step, stype, sid = info.node, info.type, info.id
        allowed = F.COMMON_STEP_KEYS + F.STEP_TYPE_KEYS[stype]
        self._check_keys(step, allowed, f"{stype} step {sid!r}")
        for req in F.STEP_REQUIRED[stype]:
            if req not in step:
                self.sink.error("WFS104", f"{stype} step {sid!r} needs `{req}`", step.span)
        self.current = info
        description = _string_of(step.get("description"))
        attrs: list[Attr] = []
        iteration = self._iteration(step, stype)
        guard = self._condition(step, stype, attrs)
        inputs = self._step_bindings(step.get("inputs"), "inputs", iteration is not None)
        outputs = self._step_bindings(step.get("outputs"), "outputs", iteration is not None)
        if stype == "tool":
            op = self._lower_tool(step, attrs)
        elif stype == "transform":
            op = self._lower_transform(step, sid, attrs)
        elif stype == "conditional":
            op = "branch"
            for arm in ("then", "else"):
                self._check_branch_arm(step.get(arm), arm, info)
        else:
            op = self._lower_exit(step, attrs)
        on_error = self._error_policy(step.get("on_error"))
        retry = self._retry(step.get("retry"))
        return Node(
            id=sid, op=op, kind=stype, span=step.span, description=description,
            attrs=tuple(attrs), inputs=tuple(inputs), outputs=tuple(outputs), guard=guard,
            iteration=iteration, on_error=on_error, retry=retry,
        )

    def _iteration(self, step: YMap, stype: str) -> Iteration | None:
        """`each` (and its `delay`): the step runs once per item."""
        iteration = None
        each = step.get("each")
        if each is not None:
            if stype not in F.EACH_ALLOWED:
                self.sink.error("WFS113", f"`each` is not valid on {stype} steps", each.span)
            else:
                over = self._expression(each, "each", context="step")
                if over is not None:
                    iteration = Iteration(over=over, span=each.span)
        delay = step.get("delay")
        if delay is not None:
            if each is None:
                self.sink.error("WFS113", "`delay` requires `each`", delay.span)
            ms = self._duration(delay, "delay")
            if iteration is not None and ms is not None:
                iteration = Iteration(over=iteration.over, delay_ms=ms, span=iteration.span)
        return iteration

    def _condition(self, step: YMap, stype: str, attrs: list[Attr]) -> Guard | None:
        """A conditional's `condition` is its branch attr; any other step's is its guard."""
        cond = step.get("condition")
        if cond is None:
            return None
        expr = self._expression(cond, "condition", context="step")
        if expr is None:
            return None
        if stype != "conditional":
            return Guard(expr, "js_boolean", cond.span)
        attrs.append(Attr("condition", expr, cond.span))
        attrs.append(Attr("truthiness", E.Literal("js_boolean", "string"), cond.span))
        return None

    def _lower_tool(self, step: YMap, attrs: list[Attr]) -> str:
        tool = step.get("tool")
        attrs.append(Attr("capability", E.Literal("tool", "string"), step.span))
        if tool is not None:
            if isinstance(tool, YScalar) and isinstance(tool.value, str) and tool.value:
                attrs.append(Attr("name", E.Literal(tool.value, "string", tool.span), tool.span))
            else:
                self.sink.error("WFS103", f"`tool` must be a tool name, not {type_name(tool)}", tool.span)
        return "call"

    def _lower_exit(self, step: YMap, attrs: list[Attr]) -> str:
        status = step.get("status")
        if status is not None:
            if isinstance(status, YScalar) and status.value in F.EXIT_STATUSES:
                attrs.append(Attr("status", E.Literal(status.value, "string", status.span), status.span))
            else:
                self.sink.error("WFS106", f"exit `status` must be success or failed, not {_show(status)}",
                                status.span)
        attrs.append(Attr("output", self._exit_output(step.get("output")), step.span))
        return "exit"

    def _error_policy(self, oe: YNode | None) -> ErrorPolicy:
        if oe is None:
            return ErrorPolicy()
        if isinstance(oe, YScalar) and oe.value in F.ON_ERROR:
            return ErrorPolicy(oe.value, None, oe.span)
        self.sink.error("WFS106", f"`on_error` must be fail or ignore, not {_show(oe)}", oe.span)
        return ErrorPolicy()

    def _lower_transform(self, step: YMap, sid: str, attrs: list[Attr]) -> str:
        opnode = step.get("operation")
        if not (isinstance(opnode, YScalar) and opnode.value in F.TRANSFORM_OPERATIONS):
            if opnode is not None:
                hint = did_you_mean(opnode.value, F.TRANSFORM_OPERATIONS) if isinstance(opnode, YScalar) else None
                self.sink.error("WFS106", f"transform `operation` must be filter, map or sort, not "
                                f"{_show(opnode)}", opnode.span, *([hint] if hint else []))
            # Whatever the operation was meant to be, its expressions are
            # checked now: their findings come with this one, not after it.
            if step.get("where") is not None:
                self._expression(step.get("where"), "where", context="item")
            if isinstance(step.get("expression"), YMap):
                self._map_expression(step.get("expression"))
            return "transform.filter"
        operation = opnode.value
        wanted = F.TRANSFORM_OPERATIONS[operation]
        optional = F.TRANSFORM_OPTIONAL[operation]
        for key in ("where", "expression", "field", "direction"):
            node = step.get(key)
            if node is not None and key not in wanted and key not in optional:
                self.sink.error("WFS105", f"`{key}` is not used by a {operation} transform",
                                step.key_node(key).span)
        for key in wanted:
            if key not in step:
                self.sink.error("WFS104", f"{operation} transform {sid!r} needs `{key}`", step.span)
        if operation == "filter" and step.get("where") is not None:
            expr = self._expression(step.get("where"), "where", context="item")
            if expr is not None:
                attrs.append(Attr("where", expr, step.get("where").span))
                attrs.append(Attr("truthiness", E.Literal("js_boolean", "string"), step.get("where").span))
        elif operation == "map" and step.get("expression") is not None:
            node = step.get("expression")
            if isinstance(node, YMap):
                attrs.append(Attr("expression", self._map_expression(node), node.span))
            else:
                self.sink.error("WFS103", f"map `expression` must be a mapping of output fields, not "
                                f"{type_name(node)}", node.span)
        elif operation == "sort":
            fnode = step.get("field")
            if fnode is not None:
                if isinstance(fnode, YScalar) and isinstance(fnode.value, str) and fnode.value:
                    attrs.append(Attr("field", E.Literal(fnode.value, "string", fnode.span), fnode.span))
                else:
                    self.sink.error("WFS103", f"sort `field` must be a field name, not {type_name(fnode)}",
                                    fnode.span)
            dnode = step.get("direction")
            direction = "asc"
            if dnode is not None:
                if isinstance(dnode, YScalar) and dnode.value in F.SORT_DIRECTIONS:
                    direction = dnode.value
                else:
                    self.sink.error("WFS106", f"sort `direction` must be asc or desc, not {_show(dnode)}",
                                    dnode.span)
            attrs.append(Attr("direction", E.Literal(direction, "string",
                                                     dnode.span if dnode else step.span),
                              dnode.span if dnode else step.span))
        return "transform." + operation

    def _map_expression(self, node: YMap) -> E.MapExpr:
        """Map values: `$`-strings are expressions, other strings literal (no
        templates), nested mappings recurse, everything else is verbatim."""
        entries = []
        for key, value in node.items:
            kexpr = E.Literal(str(key.value), "string", key.span)
            if isinstance(value, YMap):
                vexpr: E.Expr = self._map_expression(value)
            elif isinstance(value, YScalar) and isinstance(value.value, str) and value.value.startswith("$"):
                vexpr = self._expression(value, "expression", context="item") or literal(None, value.span)
            else:
                vexpr = literal((value.plain()), value.span)
            entries.append(E.MapEntry(kexpr, vexpr, key.span.cover(value.span)))
        return E.MapExpr(tuple(entries), node.span)

    def _exit_output(self, node: YNode | None) -> E.Expr:
        if node is None:
            return literal(None, self.current.span)
        if isinstance(node, YScalar) and isinstance(node.value, str):
            if node.value == "":
                return literal(None, node.span)
            return self._expression(node, "output", context="step") or literal(None, node.span)
        if isinstance(node, YMap):
            entries = []
            for key, value in node.items:
                name = str(key.value)
                if self.output_names and name not in self.output_names:
                    hint = did_you_mean(name, self.output_names)
                    self.sink.error("WFS211", f"exit output key {name!r} is not a declared workflow output",
                                    key.span, *([hint] if hint else []))
                if isinstance(value, YScalar) and isinstance(value.value, str):
                    vexpr = self._value(value, context="step") or literal(None, value.span)
                else:
                    vexpr = literal((value.plain()), value.span)
                entries.append(E.MapEntry(E.Literal(name, "string", key.span), vexpr,
                                          key.span.cover(value.span)))
            return E.MapExpr(tuple(entries), node.span)
        self.sink.error("WFS103", f"exit `output` must be an expression string or a mapping, not "
                        f"{type_name(node)}", node.span)
        return literal(None, node.span)

    def _check_branch_arm(self, node: YNode | None, arm: str, info: _StepInfo) -> None:
        if node is None:
            return
        if isinstance(node, YScalar) and isinstance(node.value, str):
            items = [node]
        elif isinstance(node, YSeq):
            items = node.items
            if arm == "then" and not items:
                self.sink.error("WFS103", "`then` must list at least one step id", node.span)
        else:
            self.sink.error("WFS103", f"`{arm}` must be a list of step ids, not {type_name(node)}", node.span)
            return
        for item in items:
            if not (isinstance(item, YScalar) and isinstance(item.value, str)):
                self.sink.error("WFS103", f"`{arm}` entries must be step ids, not {type_name(item)}", item.span)
                continue
            target = self.by_id.get(item.value)
            if target is None and item.value in self.unusable_ids:
                continue  # declared; its type is the finding
            if target is None:
                hint = did_you_mean(item.value, self.by_id)
                self.sink.error("WFS209", f"branch target {item.value!r} is not a declared step", item.span,
                                *([hint] if hint else []))
            elif target.index <= info.index:
                self.sink.error("WFS210", f"branch target {item.value!r} is declared before its conditional "
                                f"{info.id!r}", item.span, "branch targets must be declared after the conditional")

    def _step_bindings(self, node: YNode | None, which: str, in_iteration: bool) -> list[Binding]:
        bindings = []
        sid = self.current.id
        if node is None:
            return bindings
        if not isinstance(node, YMap):
            self.sink.error("WFS103", f"step `{which}` must be a mapping keyed by name, not {type_name(node)}",
                            node.span)
            return bindings
        for key, decl in node.items:
            name = str(key.value)
            if not isinstance(decl, YMap):
                self.sink.error("WFS108", f"step {which[:-1]} {name!r} of {sid!r} must be a mapping with "
                                f"`type` and `value`, not {type_name(decl)}", decl.span)
                continue
            if which == "inputs" and "default" in decl:
                self.sink.error("WFS107", 'step inputs do not support "default"; use "value"',
                                decl.key_node("default").span)
            keys = F.STEP_BINDING_KEYS + (("default",) if which == "inputs" else ())
            self._check_keys(decl, keys, f"step {which[:-1]} {name!r}")
            ty = self._decl_type(decl, f"step {which[:-1]} {name!r} of {sid!r}")
            context = "result" if which == "outputs" else ("item" if in_iteration else "step")
            value = self._value(decl.get("value"), context=context)
            bindings.append(Binding(name, ty or T.ANY, value, decl.span))
        return bindings

    def _retry(self, node: YNode | None) -> RetryPolicy | None:
        if node is None:
            return None
        if not isinstance(node, YMap):
            self.sink.error("WFS112", f"`retry` must be a mapping with max, delay and backoff, not "
                            f"{type_name(node)}", node.span)
            return None
        self._check_keys(node, F.RETRY_KEYS, "`retry`")
        ok = True
        for key in F.RETRY_KEYS:
            if key not in node:
                self.sink.error("WFS112", f"`retry` needs `{key}` (max, delay and backoff go together)", node.span)
                ok = False
        mx, delay, backoff = node.get("max"), node.get("delay"), node.get("backoff")
        count = as_count(mx.value) if isinstance(mx, YScalar) else None
        if count is not None and count > MAX_RETRIES:
            self.sink.error("LIM104", f"retry count {shown(mx.text)} exceeds {MAX_RETRIES}", mx.span)
            ok = False
        elif mx is not None and not (isinstance(mx, YScalar) and type(mx.value) is int and mx.value > 0):
            self.sink.error("WFS112", f"retry `max` must be an integer > 0, not {_show(mx)}", mx.span)
            ok = False
        delay_ms = self._duration(delay, "retry delay") if delay is not None else None
        if delay is not None and delay_ms is None:
            ok = False
        factor = as_count(backoff.value) if isinstance(backoff, YScalar) else None
        if factor is not None and factor > MAX_BACKOFF:
            self.sink.error("LIM103", f"retry backoff {shown(backoff.text)} exceeds {MAX_BACKOFF}", backoff.span)
            ok = False
        elif backoff is not None and not (isinstance(backoff, YScalar) and _is_number(backoff.value)
                                          and backoff.value > 0):
            self.sink.error("WFS112", f"retry `backoff` must be a number > 0, not {_show(backoff)}", backoff.span)
            ok = False
        if not ok:
            return None
        return RetryPolicy(mx.value, delay_ms, float(backoff.value), "tool_error", node.span)

    def _duration(self, node: YNode, what: str) -> int | None:
        if isinstance(node, YScalar) and isinstance(node.value, str):
            ms = parse_duration_ms(node.value)
            if ms is not None and ms > MAX_DURATION_MS:
                self.sink.error("LIM105", f"{what} {shown(node.value)} exceeds {MAX_DURATION_MS}ms "
                                "(about 24.8 days)", node.span)
                return None
            if ms is not None:
                return ms
        self.sink.error("WFS111", f"{what} must be a duration such as \"500ms\" or \"2s\", not {_show(node)}",
                        node.span)
        return None

    # ------------------------------------------------------------ expressions
    def _expression_syntax(self, step: YMap) -> None:
        """The syntax of a step's expressions, for a step that is otherwise
        dropped (its type is unknown): its expression errors are reported with
        the type's, not after the type is fixed. References are not resolved:
        where the step runs is unknown."""
        for key in ("condition", "where", "each"):
            node = step.get(key)
            if isinstance(node, YScalar) and isinstance(node.value, str):
                self._syntax(node, f"invalid expression in `{key}`", parse_expression)
        expression = step.get("expression")
        pending = [expression] if isinstance(expression, YMap) else []
        while pending:
            for _, value in pending.pop().items:
                if isinstance(value, YMap):
                    pending.append(value)
                elif isinstance(value, YScalar) and isinstance(value.value, str) and value.value.startswith("$"):
                    self._syntax(value, "invalid expression in `expression`", parse_expression)
        for section in ("inputs", "outputs"):
            decls = step.get(section)
            for _, decl in decls.items if isinstance(decls, YMap) else ():
                value = decl.get("value") if isinstance(decl, YMap) else None
                if isinstance(value, YScalar) and isinstance(value.value, str):
                    self._syntax(value, "invalid expression", parse_value)

    def _syntax(self, node: YScalar, what: str, parse) -> None:
        try:
            parse(node.value, self._origin(node))
        except ExpressionError as exc:
            self.sink.error("WFS201", f"{what}: {exc.plain}", exc.span)

    def _origin(self, node: YScalar) -> Span:
        s = node.span
        col = s.col + 1 if node.quoted and s.line == s.end_line else s.col
        return Span(s.file, s.line, col, s.end_line, s.end_col)

    def _expression(self, node: YNode, what: str, context: str) -> E.Expr | None:
        """A bare `$`-expression field (condition, each, where, map values, exit output)."""
        if not (isinstance(node, YScalar) and isinstance(node.value, str)):
            self.sink.error("WFS103", f"`{what}` must be an expression string, not {type_name(node)}", node.span)
            return None
        try:
            expr = parse_expression(node.value, self._origin(node))
        except ExpressionError as exc:
            self.sink.error("WFS201", f"invalid expression in `{what}`: {exc.plain}", exc.span)
            return None
        self._check_refs(expr, context)
        return expr

    def _value(self, node: YNode | None, context: str) -> E.Expr | None:
        """A `value` field: literal, `$`-expression, `${}` template or `$$` escape."""
        if node is None:
            return None
        if isinstance(node, YScalar) and isinstance(node.value, str):
            try:
                expr = parse_value(node.value, self._origin(node))
            except ExpressionError as exc:
                self.sink.error("WFS201", f"invalid expression: {exc.plain}", exc.span)
                return None
            self._check_refs(expr, context)
            return expr
        return literal((node.plain()), node.span)

    def _check_refs(self, expr: E.Expr, context: str) -> None:
        """Resolve every reference: roots exist, steps are declared and have
        run before, `$result` only in step outputs, `$item` only in iteration."""
        for ref in E.refs(expr):
            root = ref.root
            if root not in F.ROOTS:
                hint = did_you_mean(root, F.ROOTS)
                self.sink.error("WFS202", f"unknown reference ${root}", ref.span, *([hint] if hint else []))
                continue
            if root == "result" and context != "result":
                self.sink.error("WFS203", "$result is only valid in a step output's `value`", ref.span)
            elif root in ("item", "index") and context != "item":
                if not (context == "result" and self.current is not None
                        and self.current.node.get("each") is not None):
                    self.sink.error("WFS212", f"${root} exists only inside `each`, `where` and map "
                                    "expressions", ref.span)
            elif root == "steps" and context == "result":
                self.sink.error("WFS206", 'step output values map the raw result with "$result", not "$steps"',
                                ref.span)
            elif root == "inputs" and ref.path and isinstance(ref.path[0], E.Field):
                name = ref.path[0].name
                if name not in self.input_names:
                    hint = did_you_mean(name, self.input_names)
                    self.sink.warning("WFS208", f"$inputs.{name} is not a declared workflow input", ref.span,
                                      *([hint] if hint else []))
            if root == "steps":
                self._check_step_ref(ref, context)

    def _check_step_ref(self, ref: E.Ref, context: str) -> None:
        target_id = ref.step_id()
        if target_id is None:
            return
        target = self.by_id.get(target_id)
        current = self.current if context != "workflow_output" else None
        if target is None and target_id in self.unusable_ids:
            return  # declared; its type is the finding
        if target is None:
            hint = did_you_mean(target_id, self.by_id)
            who = f'step "{current.id}"' if current else "a workflow output"
            self.sink.error("WFS204", f'{who} references step "{target_id}", which is not declared',
                            ref.span, *([hint] if hint else []))
            return
        if current is None:
            return
        if not self._runs_before(target, current):
            self.sink.error("WFS205", f'step "{current.id}" references step "{target_id}", which has not run '
                            "before it", ref.span, f'"{target_id}" is declared at line {target.span.line}')

    def _runs_before(self, target: _StepInfo, current: _StepInfo) -> bool:
        """Has `target` run (or been skipped) whenever `current` runs?"""
        if target.index < current.index and target.id not in self.branch_refs:
            return True
        selectors = self.branch_refs.get(current.id)
        if target.id in self.branch_refs:
            # A branch step has run before `current` only when they share a
            # branch list and it is listed first; otherwise it may never run.
            # Reading it is allowed (it is null then) if it was declared earlier.
            return target.index < current.index
        if selectors:
            return all(target.index < cond.index for cond, _ in selectors)
        return False

    # ------------------------------------------------------------------ edges
    def _edges(self, infos: list[_StepInfo], nodes: list[Node]) -> list[Edge]:
        edges: list[Edge] = []
        node_by_id = {n.id: n for n in nodes}
        top = [i for i in infos if i.id not in self.branch_refs]
        chain = [i.id for i in top] + [END_NODE_ID]
        for a, b in itertools.pairwise(chain):
            node = node_by_id.get(a)
            # An exit without a guard always ends the run: nothing follows it.
            if node is not None and node.op == "exit" and node.guard is None:
                continue
            edges.append(Edge(a, b, EdgeKind.SEQUENCE, span=node.span if node else Span()))
        seen_ids: set[str] = set()
        for info in infos:
            if info.type != "conditional" or info.id in seen_ids:
                continue
            seen_ids.add(info.id)
            for arm in ("then", "else"):
                for pos, target in enumerate(self._id_list(info.node.get(arm), arm, info)):
                    if target.value in self.by_id:
                        edges.append(Edge(info.id, target.value, EdgeKind.BRANCH, arm, pos, target.span))
        return edges

    # ---------------------------------------------------------------- helpers
    def _check_keys(self, node: YMap, allowed: tuple[str, ...], where: str) -> None:
        for key, _ in node.items:
            if key.value not in allowed:
                hint = did_you_mean(key.value, allowed)
                self.sink.error("WFS105", f"unknown key {_show(key)} in {where}", key.span,
                                *([hint] if hint else []))


def _show(node: YNode | None) -> str:
    if isinstance(node, YScalar):
        return repr(node.value) if isinstance(node.value, str) else str(node.value)
    return type_name(node)


def _string_of(node: YNode | None) -> str | None:
    return node.value if isinstance(node, YScalar) and isinstance(node.value, str) else None


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _literal_fits(value, ty: T.Type) -> bool:
    if ty.kind == "int" and isinstance(value, float) and value.is_integer():
        return True
    return T.is_assignable(T.of_value(value), ty)


def compile_workflowskill(text: str, file: str):
    """Parse and check a WorkflowSkill document. Returns (Workflow | None, diagnostics)."""
    fe = WorkflowSkillFrontEnd(text, file)
    try:
        workflow = fe.compile()
    except RecursionError:
        fe.sink.error("ANA406", "the workflow nests too deeply to compile", Span(file, 1, 1, 1, 2))
        workflow = None
    return workflow, fe.sink.items
