"""The aevatar front end: workflow YAML (roles + steps) -> checked IR.

It reads the document the way the engine's parser does (the c8db46d
generation, and the newer one's extra keys), reports what the engine's
validator reports, and lowers every step to an IR node:

- the parameters become one ``parameters`` attr, a MapExpr in the engine's
  order (the YAML order, then ergonomic defaults, then lifted root
  shorthands), each value a Literal or an aevatar Template (all strings);
- the primitive's meaning becomes the node's op and attrs (primitives.py);
- ``next`` is a SEQUENCE edge, ``branches`` BRANCH edges, a missing ``next``
  an explicit FALLTHROUGH edge to the following step in document order,
  on_error fallbacks ERROR edges;
- composite primitives get Regions holding their sub-steps;
- the last step in document order is the workflow's terminal.

The engine rules that are not validation errors in the engine (dangerous
fall-through, `.text` references, ...) are checked on the result by
:mod:`flowc.compiler.aevatar.checks`.
"""

from __future__ import annotations

import os
import re

import attrs
from flowc.compiler import yamlsrc
from flowc.compiler.aevatar import dotnet, registry
from flowc.compiler.aevatar import primitives as P
from flowc.compiler.aevatar.expressions import Locator, Lowering
from flowc.compiler.aevatar.values import looks_typed, param_text, scalar_text
from flowc.compiler.numbers import shown
from flowc.compiler.suggest import did_you_mean
from flowc.compiler.yamlsrc import YMap, YNode, YScalar, YSeq, type_name
from flowc.ir import expr as E
from flowc.ir import types as T
from flowc.ir.diagnostics import DiagnosticSink
from flowc.ir.limits import MAX_STEPS
from flowc.ir.span import Span
from flowc.ir.workflow import (
    Actor,
    Attr,
    Binding,
    Edge,
    EdgeKind,
    ErrorPolicy,
    Node,
    Param,
    Region,
    RetryPolicy,
    Workflow,
)

DIALECT = "aevatar"
IMPLICIT_ROLE = "assistant"

# Model names people put in target_role (it names a role, never a model).
_MODEL_NAME = re.compile(
    r"^(gpt|o[134]|chatgpt|claude|gemini|gemma|llama|mistral|mixtral|qwen|deepseek|grok|phi|command|"
    r"sonnet|opus|haiku|ernie|glm|kimi|moonshot|yi|doubao)([-_.:0-9]|$)", re.IGNORECASE)


@attrs.define
class Branch:
    key: str
    target: str
    key_node: YNode
    target_node: YNode
    order: int


@attrs.define
class StepInfo:
    """What the front end knows about one step (top-level or child)."""

    id: str
    index: int                      # position among top-level steps; -1 for children
    node: YMap
    raw_type: str
    canonical: str
    prim: P.Primitive | None
    role: str | None = None
    role_node: YNode | None = None
    params: dict[str, str] = attrs.Factory(dict)
    param_nodes: dict[str, YNode | None] = attrs.Factory(dict)
    param_keys: dict[str, YScalar | None] = attrs.Factory(dict)
    next: str | None = None
    next_node: YNode | None = None
    branches: list[Branch] = attrs.Factory(list)
    is_child: bool = False
    extension: bool = False
    lowered: dict[str, E.Expr] = attrs.Factory(dict)

    @property
    def span(self) -> Span:
        return self.node.span

    def id_span(self) -> Span:
        n = self.node.get("id")
        return n.span if n is not None else self.node.span

    def type_span(self) -> Span:
        n = self.node.get("type")
        return n.span if n is not None else self.id_span()

    def param_span(self, key: str) -> Span:
        n = self.param_nodes.get(key)
        return n.span if n is not None else self.id_span()

    def key_span(self, key: str) -> Span:
        k = self.param_keys.get(key)
        return k.span if k is not None else self.param_span(key)


class AevatarFrontEnd:
    def __init__(self, text: str, file: str, strict: bool = False,
                 known_workflows: frozenset[str] | set[str] | None = None) -> None:
        self.text = text
        self.file = file
        self.strict = strict
        self.known_workflows = known_workflows
        # The registry ignores case, as the engine's (registry.key).
        self.known_keys = None if known_workflows is None else {registry.key(n) for n in known_workflows}
        self.sink = DiagnosticSink()
        self.roles: dict[str, Actor] = {}
        self.role_spans: dict[str, Span] = {}
        self.steps: list[StepInfo] = []       # top level, document order
        self.too_many_steps = False             # LIM002: nothing past the count is checked
        self.children: list[StepInfo] = []
        self.by_id: dict[str, StepInfo] = {}
        self.children_data: dict[str, list] = {}

    # ------------------------------------------------------------ findings
    def _newer(self, code: str, message: str, span: Span, *notes: str) -> None:
        """Something only the newer engine generation accepts."""
        if self.strict:
            self.sink.error(code, message, span, *notes)
        else:
            self.sink.warning(code, message, span, *notes)

    # ------------------------------------------------------------ document
    def compile(self) -> Workflow | None:
        here = Span(self.file, 1, 1, 1, 2)
        text = self.text.replace("\r\n", "\n")
        root, diags = yamlsrc.load(text, self.file)
        self.sink.extend(diags)
        if diags and root is None:
            return None
        if root is None or (isinstance(root, YScalar) and scalar_text(root) is None):
            self.sink.error("AEV101", "the document is empty (the engine: YAML 为空)", here)
            return None
        if not isinstance(root, YMap):
            self.sink.error("AEV102", f"a workflow is a mapping with name, roles and steps, not "
                            f"{type_name(root)}", root.span)
            return None
        self._check_keys(root, P.ROOT_KEYS, P.ROOT_KEYS_NEWER, "the workflow")
        name = self._name(root)
        description = self._string(root, "description", "the workflow") or ""
        meta: dict = {}
        self._configuration(root, meta)
        for key in P.ROOT_KEYS_NEWER:
            if key in root:
                meta[key] = root.get(key).plain()
        self._roles(root.get("roles"))
        self._collect_steps(root)
        if self.too_many_steps:
            return None
        self._index_ids()
        for info in [*self.steps, *self.children]:
            self._check_step_refs(info)
            self._type_rules(info)
        if self.children_data:
            meta["children"] = self.children_data
        nodes = [self._lower_step(info) for info in self.steps]
        edges = self._edges()
        actors = list(self.roles.values())
        if IMPLICIT_ROLE not in self.roles and any(n.actor == IMPLICIT_ROLE for n in _all_nodes(nodes)):
            actors.append(Actor(IMPLICIT_ROLE, IMPLICIT_ROLE, (Attr("implicit", E.Literal("true", "string")),)))
        last = self.steps[-1] if self.steps else None
        terminal = last.id if last is not None and last.next is None else None
        workflow = Workflow(
            name=name or os.path.splitext(os.path.basename(self.file))[0] or "workflow",
            dialect=DIALECT,
            semantics=DIALECT,
            nodes=tuple(nodes),
            edges=tuple(edges),
            entry=(self.steps[0].id,) if self.steps else (),
            terminal=terminal,
            inputs=(Param("input", T.STRING, "", True, "the run prompt: the first step's input"),
                    Param("input_file_refs", T.ARRAY, [], True, "the run's input files")),
            outputs=(Binding("output", T.STRING, None, root.span),),
            actors=tuple(actors),
            description=description,
            metadata=meta,
            span=root.span,
        )
        from flowc.compiler.aevatar.checks import check_workflow

        self.sink.extend(check_workflow(self, workflow))
        return workflow

    def _name(self, root: YMap) -> str | None:
        node = root.get("name")
        if node is None or (isinstance(node, YScalar) and scalar_text(node) is None):
            self.sink.error("AEV104", "the workflow has no `name` (the engine: 缺少 name)",
                            root.key_node("name").span if "name" in root else root.span)
            return None
        if not isinstance(node, YScalar):
            self.sink.error("AEV102", f"`name` must be a string, not {type_name(node)}", node.span)
            return None
        text = scalar_text(node) or ""
        if dotnet.is_blank(text):
            self.sink.error("AEV104", "the workflow's `name` is blank (the engine: 缺少 name)", node.span)
        return text

    def _configuration(self, root: YMap, meta: dict) -> None:
        node = root.get("configuration")
        if node is None:
            return
        if not isinstance(node, YMap):
            if not (isinstance(node, YScalar) and scalar_text(node) is None):
                self.sink.error("AEV102", f"`configuration` must be a mapping, not {type_name(node)}", node.span)
            return
        self._check_keys(node, P.CONFIGURATION_KEYS, (), "configuration")
        cw = node.get("closed_world_mode")
        if cw is not None:
            self._typed(cw, "bool", "configuration.closed_world_mode")
        meta["configuration"] = node.plain()

    # ------------------------------------------------------------ roles
    def _roles(self, node: YNode | None) -> None:
        if node is None or (isinstance(node, YScalar) and scalar_text(node) is None):
            return
        if not isinstance(node, YSeq):
            self.sink.error("AEV102", f"`roles` must be a list of roles, not {type_name(node)}", node.span)
            return
        for item in node.items:
            if not isinstance(item, YMap):
                self.sink.error("AEV102", f"a role must be a mapping, not {type_name(item)}", item.span)
                continue
            self._role(item)

    def _role(self, node: YMap) -> None:
        self._check_keys(node, P.ROLE_KEYS, P.ROLE_KEYS_NEWER, "a role")
        texts: dict[str, str | None] = {}
        for key in ("id", "name", "system_prompt", "provider", "model", "event_modules", "event_routes",
                    "agent_kind"):
            texts[key] = self._string(node, key, "a role")
        role_id = texts["id"] if texts["id"] and not dotnet.is_blank(texts["id"]) else None
        role_name = texts["name"] if texts["name"] and not dotnet.is_blank(texts["name"]) else None
        rid = role_id or role_name
        if rid is None:
            self.sink.error("AEV107", "the role has no `id` (nor a `name` to stand in for it; the engine: "
                            "存在缺少 id 的角色)", node.span)
            return
        rid = dotnet.trim(rid)
        attrs_: list[Attr] = []
        for key, value in texts.items():
            if key not in ("id", "name") and value is not None:
                attrs_.append(Attr(key, E.Literal(value, "string", node.get(key).span), node.get(key).span))
        temp = node.get("temperature")
        if temp is not None and self._typed(temp, "double", "temperature") is not None:
            attrs_.append(Attr("temperature", E.Literal(scalar_text(temp), "string", temp.span), temp.span))
        for key in P.ROLE_INT_KEYS:
            v = node.get(key)
            if v is not None and self._typed(v, "int", key) is not None:
                attrs_.append(Attr(key, E.Literal(scalar_text(v), "string", v.span), v.span))
        for key in ("connectors", "allowed_tools", "tool_sets"):
            names = self._name_list(node.get(key), key)
            if names is not None:
                attrs_.append(Attr(key, E.ListExpr(tuple(E.Literal(n, "string", node.get(key).span)
                                                         for n in names), node.get(key).span),
                                   node.get(key).span))
        ext = node.get("extensions")
        if isinstance(ext, YMap):
            self._check_keys(ext, P.ROLE_EXTENSION_KEYS, (), "role extensions")
            # Carried as data so a translation can write it back.
            attrs_.append(Attr("extensions", E.Literal(ext.plain(), "object", ext.span), ext.span))
        elif ext is not None and not (isinstance(ext, YScalar) and scalar_text(ext) is None):
            self.sink.error("AEV102", f"`extensions` must be a mapping, not {type_name(ext)}", ext.span)
        if rid in self.roles:
            self.sink.warning("AEV110", f"role {rid!r} is declared twice; steps use the first", node.span,
                              f"first declared at line {self.role_spans[rid].line}")
            return
        self.roles[rid] = Actor(rid, role_name or rid, tuple(attrs_), node.span)
        self.role_spans[rid] = node.span

    def _name_list(self, node: YNode | None, what: str) -> list[str] | None:
        if node is None or (isinstance(node, YScalar) and scalar_text(node) is None):
            return None
        if isinstance(node, YSeq):
            out = []
            for item in node.items:
                if isinstance(item, YScalar):
                    text = scalar_text(item)
                    if text is not None and not dotnet.is_blank(text):
                        out.append(dotnet.trim(text))
                else:
                    self.sink.error("AEV102", f"`{what}` items must be strings, not {type_name(item)}",
                                    item.span)
            return out
        if isinstance(node, YScalar) and what != "connectors":
            text = scalar_text(node) or ""
            return [dotnet.trim(t) for t in text.split(",") if not dotnet.is_blank(t)]
        self.sink.error("AEV102", f"`{what}` must be a list, not {type_name(node)}", node.span)
        return None

    # ------------------------------------------------------------ steps
    def _collect_steps(self, root: YMap) -> None:
        node = root.get("steps")
        if node is None or (isinstance(node, YScalar) and scalar_text(node) is None):
            self.sink.error("AEV105", "the workflow has no steps (the engine: 至少需要一个 step)",
                            root.key_node("steps").span if "steps" in root else root.span)
            return
        if not isinstance(node, YSeq):
            self.sink.error("AEV102", f"`steps` must be a list of steps, not {type_name(node)}", node.span)
            return
        if not node.items:
            self.sink.error("AEV105", "the workflow has no steps (the engine: 至少需要一个 step)", node.span)
        if _count_steps(node) > MAX_STEPS:
            # Counted before any step is looked at: a huge list costs one walk.
            self.sink.error("LIM002", f"the workflow has more than {MAX_STEPS} steps, children included",
                            node.span)
            self.too_many_steps = True
            return
        for item in node.items:
            info = self._step(item, len(self.steps), None)
            if info is not None:
                self.steps.append(info)

    def _step(self, node: YNode, index: int, parent: StepInfo | None) -> StepInfo | None:
        if not isinstance(node, YMap):
            self.sink.error("AEV102", f"a step must be a mapping, not {type_name(node)}", node.span)
            return None
        self._check_step_keys(node)
        id_node = node.get("id")
        step_id = None
        if id_node is None or (isinstance(id_node, YScalar) and scalar_text(id_node) is None):
            self.sink.error("AEV106", "the step has no `id` (the engine: step 缺 id)", node.span)
        elif not isinstance(id_node, YScalar):
            self.sink.error("AEV102", f"a step `id` must be a string, not {type_name(id_node)}", id_node.span)
        else:
            step_id = scalar_text(id_node) or ""
            if dotnet.is_blank(step_id):
                self.sink.error("AEV106", "the step's `id` is blank (the engine: 存在缺少 id 的步骤)", id_node.span)
                step_id = None
        type_node = node.get("type")
        raw_type = "llm_call"
        if type_node is not None:
            if not isinstance(type_node, YScalar):
                self.sink.error("AEV102", f"`type` must be a string, not {type_name(type_node)}", type_node.span)
            else:
                t = scalar_text(type_node)
                raw_type = "llm_call" if t is None else t
        canonical = P.canonical_type(raw_type)
        prim = P.BY_NAME.get(canonical)
        info = StepInfo(step_id or "", index if parent is None else -1, node, raw_type, canonical, prim,
                        is_child=parent is not None)
        self._check_type(info)
        self._role_ref(info)
        self._parameters(info)
        self._next(info)
        self._branches(info)
        children = node.get("children")
        if children is not None and not (isinstance(children, YScalar) and scalar_text(children) is None):
            if not isinstance(children, YSeq):
                self.sink.error("AEV102", f"`children` must be a list of steps, not {type_name(children)}",
                                children.span)
            else:
                self.sink.warning("AEV160", "`children` are validated but never run by the engine",
                                  node.key_node("children").span)
                if step_id is not None and parent is None:
                    # Not lowered; kept as data so a translation can write them back.
                    self.children_data[step_id] = children.plain()
                for child in children.items:
                    sub = self._step(child, -1, info)
                    if sub is not None:
                        self.children.append(sub)
        if step_id is None:
            return None
        return info

    def _check_step_keys(self, node: YMap) -> None:
        allowed_old = P.STEP_KEYS + P.ROOT_SHORTHANDS
        allowed_new = P.STEP_KEYS_NEWER + P.ROOT_SHORTHANDS_NEWER + P.TRANSFORM_ROOT_KEYS
        self._check_keys(node, allowed_old, allowed_new, "a step")
        tm = node.get("timeout_ms")
        if tm is not None:
            self._typed(tm, "int", "timeout_ms")
        for key in ("next", "target_role", "role", "compensation", "display_name", "idempotency_key",
                    "delivery_target_id"):
            self._string(node, key, "a step")

    def _check_type(self, info: StepInfo) -> None:
        canonical = info.canonical
        span = info.type_span()
        where = f"step {info.id!r}: " if info.id else ""
        if info.prim is not None:
            if info.prim.status == "reserved":
                self.sink.error("AEV152", f"{where}`{canonical}` rewrites the running workflow; flowc compiles "
                                "fixed workflows only (the engine's validation paths reject it as a "
                                "reserved primitive: use workflow_call)", span)
            elif info.prim.status in ("import_only", "internal"):
                self.sink.error("AEV152", f"{where}`{canonical}` is {'import-only' if info.prim.status == 'import_only' else 'internal to the engine'} "
                                "and cannot run in a workflow", span)
            elif info.prim.since == P.NEWER or dotnet.lower_invariant(dotnet.trim(info.raw_type)) in P.NEWER_ALIASES:
                self._newer("AEV154", f"{where}`{info.raw_type}` exists only in the newer engine generation; the "
                            "c8db46d engine does not know it", span)
            return
        near = _near_miss(canonical)
        if near is not None:
            self.sink.error("AEV151", f"{where}unknown step type {info.raw_type!r}", span,
                            f'did you mean "{near}"?')
            return
        info.extension = True
        msg = (f"{where}{info.raw_type!r} is not an aevatar primitive: it compiles to an extension call the "
               "host must provide (the engine's strict validation: 使用未知原语 "
               f"'{info.raw_type}'（canonical='{canonical}'）)")
        if self.strict:
            self.sink.error("AEV150", msg, span)
        else:
            self.sink.warning("AEV150", msg, span)

    def _role_ref(self, info: StepInfo) -> None:
        node = info.node
        tr, ro = node.get("target_role"), node.get("role")
        tr_text = scalar_text(tr) if isinstance(tr, YScalar) else None
        ro_text = scalar_text(ro) if isinstance(ro, YScalar) else None
        if tr_text is not None and ro_text is not None and tr_text != ro_text:
            self.sink.warning("AEV112", f"both `target_role` ({tr_text!r}) and `role` ({ro_text!r}) are set; "
                              "the engine uses target_role", ro.span)
        if tr_text is not None:
            info.role, info.role_node = tr_text, tr
        elif ro_text is not None:
            info.role, info.role_node = ro_text, ro

    def _parameters(self, info: StepInfo) -> None:
        node = info.node
        pnode = node.get("parameters")
        params, pnodes, pkeys = info.params, info.param_nodes, info.param_keys
        if pnode is not None and not (isinstance(pnode, YScalar) and scalar_text(pnode) is None):
            if not isinstance(pnode, YMap):
                self.sink.error("AEV102", f"`parameters` must be a mapping, not {type_name(pnode)}", pnode.span)
            else:
                for key, value in pnode.items:
                    k = param_text(key)
                    params[k] = param_text(value)
                    pnodes[k] = value
                    pkeys[k] = key
                    self._typed_warning(info, k, value)
        # Ergonomic defaults keyed on the raw type.
        raw = dotnet.lower_invariant(dotnet.trim(info.raw_type))
        for key, value in P.RAW_DEFAULTS.get(raw, ()):
            if value == "=tool":
                if "operation" not in params and "action" not in params and not dotnet.is_blank(params.get("tool", "")):
                    params["operation"] = params["tool"]
                    pnodes["operation"] = pnodes.get("tool")
                continue
            if key not in params:
                params[key] = value
                pnodes[key] = None
        # Root shorthands, lifted when absent from parameters.
        lifted = P.ROOT_SHORTHANDS + P.ROOT_SHORTHANDS_NEWER
        for key in lifted:
            if key in node and key not in params:
                value = node.get(key)
                text = param_text(value)
                if not dotnet.is_blank(text):
                    params[key] = text
                    pnodes[key] = value
                    pkeys[key] = node.key_node(key)
        for key in P.TRANSFORM_ROOT_KEYS:
            if key not in node:
                continue
            if info.canonical != "transform":
                self.sink.warning("AEV113", f"step-root `{key}` is read on transform steps only; the engine "
                                  f"ignores it on a {info.canonical} step", node.key_node(key).span)
                continue
            if key not in params:
                text = param_text(node.get(key))
                if not dotnet.is_blank(text):
                    params[key] = text
                    pnodes[key] = node.get(key)
                    pkeys[key] = node.key_node(key)
        tm = node.get("timeout_ms")
        if tm is not None and "timeout_ms" not in params and info.canonical in P.TIMEOUT_LIFTED_TYPES:
            text = scalar_text(tm) if isinstance(tm, YScalar) else None
            if text is not None:
                params["timeout_ms"] = text
                pnodes["timeout_ms"] = tm
        # Step-type parameters are canonicalised.
        for key in list(params):
            if P.is_step_type_key(key):
                params[key] = P.canonical_type(params[key])

    def _typed_warning(self, info: StepInfo, key: str, value: YNode) -> None:
        def walk(node: YNode, path: str) -> None:
            if isinstance(node, YScalar):
                what = looks_typed(node)
                if what is not None:
                    self.sink.warning("AEV124", f"unquoted {node.text!r} in parameter `{path}` looks like "
                                      f"{what}, but the engine reads the text {node.text!r}"
                                      + (" (a JSON string inside the serialised value)" if path != key else ""),
                                      node.span, f'quote it: "{node.text}"')
            elif isinstance(node, YMap):
                for k, v in node.items:
                    walk(v, f"{path}.{param_text(k)}")
            elif isinstance(node, YSeq):
                for i, v in enumerate(node.items):
                    walk(v, f"{path}[{i}]")
        walk(value, key)

    def _next(self, info: StepInfo) -> None:
        node = info.node.get("next")
        if isinstance(node, YScalar):
            text = scalar_text(node)
            if text is not None and not dotnet.is_blank(text):
                info.next, info.next_node = text, node

    def _branches(self, info: StepInfo) -> None:
        node = info.node.get("branches")
        if node is None or (isinstance(node, YScalar) and scalar_text(node) is None):
            return
        found: dict[str, Branch] = {}
        if isinstance(node, YMap):
            for key, value in node.items:
                k = param_text(key)
                target, tnode = self._branch_target(value)
                self._add_branch(info, found, k, target, key, tnode)
        elif isinstance(node, YSeq):
            for item in node.items:
                if not isinstance(item, YMap):
                    self.sink.warning("AEV111", f"a branch list entry must be a mapping, not {type_name(item)}; "
                                      "the engine ignores it", item.span)
                    continue
                k, knode = self._mapping_value(item, P.BRANCH_LIST_KEY_NAMES)
                target, tnode = self._mapping_value(item, P.BRANCH_TARGET_NAMES)
                self._add_branch(info, found, k or "", target or "", knode or item, tnode or item)
        else:
            self.sink.error("AEV102", f"`branches` must be a mapping or a list, not {type_name(node)}", node.span)
            return
        info.branches = list(found.values())

    def _add_branch(self, info, found, key, target, knode, tnode) -> None:
        if dotnet.is_blank(key) or dotnet.is_blank(target):
            what = "key" if dotnet.is_blank(key) else "target"
            self.sink.warning("AEV111", f"branch with a blank {what}: the engine drops it", knode.span)
            return
        if key in found:
            self.sink.warning("AEV111", f"branch {key!r} is given twice; the engine keeps the last", knode.span)
            del found[key]
        found[key] = Branch(key, target, knode, tnode, len(found))

    def _branch_target(self, value: YNode) -> tuple[str, YNode]:
        if isinstance(value, YMap):
            target, tnode = self._mapping_value(value, P.BRANCH_TARGET_NAMES)
            if target:
                return target, tnode
        return param_text(value), value

    def _mapping_value(self, node: YMap, names: tuple[str, ...]) -> tuple[str | None, YNode | None]:
        for key, value in node.items:
            if param_text(key).lower() in names:
                text = self._branch_target(value)[0]
                if not dotnet.is_blank(text):
                    return text, value
        return None, None

    # ------------------------------------------------------------ references
    def _index_ids(self) -> None:
        seen: dict[str, StepInfo] = {}
        for info in [*self.steps, *self.children]:
            if not info.id:
                continue
            if info.id in seen:
                if info.is_child or seen[info.id].is_child:
                    self.sink.error("AEV139", f"duplicate step id {info.id!r} (children share the steps' "
                                    "namespace; the engine: 步骤 '{info.id}' 重复)", info.id_span(),
                                    f"first declared at line {seen[info.id].span.line}")
                continue
            seen[info.id] = info
        self.by_id = seen

    def _step_exists(self, step_id: str) -> bool:
        return step_id in self.by_id

    def _unknown_step(self, code: str, what: str, target: str, span: Span) -> None:
        hint = did_you_mean(target, self.by_id)
        self.sink.error(code, f"{what} names step {target!r}, which does not exist", span,
                        *([hint] if hint else []))

    def _check_step_refs(self, info: StepInfo) -> None:
        where = f"step {info.id!r}"
        if info.next is not None and not self._step_exists(info.next):
            self._unknown_step("AEV132", f"{where}: `next`", info.next, info.next_node.span)
        for br in info.branches:
            if not self._step_exists(br.target):
                self._unknown_step("AEV133", f"{where}: branch {br.key!r}", br.target, br.target_node.span)
        self._check_role(info)
        onerr = info.node.get("on_error")
        if isinstance(onerr, YMap):
            self._check_keys(onerr, P.ON_ERROR_KEYS, (), "on_error")
            strategy = self._string(onerr, "strategy", "on_error") or "fail"
            fb = self._string(onerr, "fallback_step", "on_error")
            if fb is None or dotnet.is_blank(fb):
                fb = self._string(onerr, "fallback", "on_error")
            self._string(onerr, "default_output", "on_error")
            if strategy not in ("fail", "skip", "fallback"):
                self.sink.warning("AEV122", f"{where}: on_error strategy {strategy!r} is not fail, skip or "
                                  "fallback; the engine fails the run", onerr.get("strategy").span)
            if strategy == "fallback":
                if fb is None or dotnet.is_blank(fb):
                    self.sink.error("AEV134", f"{where}: on_error strategy fallback needs `fallback_step`",
                                    onerr.span)
                elif not self._step_exists(fb):
                    fnode = onerr.get("fallback_step") or onerr.get("fallback")
                    self._unknown_step("AEV134", f"{where}: on_error fallback_step", fb, fnode.span)
        elif onerr is not None and not (isinstance(onerr, YScalar) and scalar_text(onerr) is None):
            self.sink.error("AEV102", f"`on_error` must be a mapping, not {type_name(onerr)}", onerr.span)
        retry = info.node.get("retry")
        if isinstance(retry, YMap):
            self._check_keys(retry, P.RETRY_KEYS, (), "retry")
            for key in ("max_attempts", "delay_ms"):
                if retry.get(key) is not None:
                    self._typed(retry.get(key), "int", f"retry.{key}")
            backoff = self._string(retry, "backoff", "retry")
            if backoff is not None and backoff not in ("fixed", "exponential"):
                self.sink.warning("AEV122", f"{where}: retry backoff {backoff!r} is not fixed or exponential; "
                                  "the engine uses fixed", retry.get("backoff").span)
        elif retry is not None and not (isinstance(retry, YScalar) and scalar_text(retry) is None):
            self.sink.error("AEV102", f"`retry` must be a mapping, not {type_name(retry)}", retry.span)
        comp = info.node.get("compensation")
        if isinstance(comp, YScalar) and scalar_text(comp) and not dotnet.is_blank(scalar_text(comp)):
            target = dotnet.trim(scalar_text(comp))
            if not self._step_exists(target):
                self._unknown_step("AEV136", f"{where}: `compensation`", target, comp.span)
            if info.canonical not in P.COMPENSATING_TYPES and not info.extension:
                self.sink.warning("AEV136", f"{where}: `compensation` is recorded only for side-effecting steps "
                                  f"(tool_call, connector_call, ...); the engine ignores it on {info.canonical}",
                                  info.node.key_node("compensation").span)
        tools = info.node.get("allowed_tools")
        if tools is not None and info.canonical != "llm_call":
            self.sink.warning("AEV144", f"{where}: step `allowed_tools` narrows an llm_call's tools; it has no "
                              f"effect on {info.canonical}", info.node.key_node("allowed_tools").span)
        for key in ("allowed_tools", "tool_sets"):
            if info.node.get(key) is not None:
                self._name_list(info.node.get(key), key)

    def _check_role(self, info: StepInfo) -> None:
        where = f"step {info.id!r}"
        agent_type = _get_ci(info.params, "agent_type")
        if info.role is not None and not dotnet.is_blank(info.role) and info.role not in self.roles \
                and (agent_type is None or dotnet.is_blank(agent_type)):
            self._unknown_role(f"{where}: `target_role`", info.role, info.role_node.span)
        for key, value in info.params.items():
            p = info.prim.param(key) if info.prim else None
            if p is None or "${" in value or dotnet.is_blank(value):
                continue
            if p.kind == "role" and value not in self.roles:
                self._unknown_role(f"{where}: parameter `{key}`", value, info.param_span(key))
            elif p.kind == "roles":
                for worker in _split_workers(value):
                    if worker not in self.roles:
                        self._unknown_role(f"{where}: worker in `{key}`", worker, info.param_span(key))

    def _unknown_role(self, what: str, role: str, span: Span) -> None:
        if _MODEL_NAME.match(role):
            self.sink.error("AEV131", f"{what} is {role!r}, a model name: target_role names a role (the actor), "
                            "never a model", span,
                            "declare a role and set `model` on it only if a specific model is required")
            return
        hint = did_you_mean(role, self.roles)
        known = ", ".join(sorted(self.roles)) or "none declared"
        self.sink.error("AEV130", f"{what} names role {role!r}, which is not declared (roles: {known}; the "
                        f"engine: 引用不存在的角色 '{role}')", span, *([hint] if hint else []))

    # ------------------------------------------------------------ type rules
    def _type_rules(self, info: StepInfo) -> None:
        where = f"step {info.id!r}"
        params = info.params
        self._agent_params(info)
        self._step_type_params(info)
        if info.prim is None or info.extension:
            return
        prim = info.prim
        agent_override = info.canonical == "llm_call" and not dotnet.is_blank(_get_ci(params, "agent_type") or "")
        for key, value in params.items():
            p = prim.param(key)
            if p is None:
                if prim.open_params or agent_override or key in ("agent_type", "agent_id", "allowed_connectors") \
                        or any(key.startswith(pre) for pre in prim.prefixes):
                    continue
                hint = did_you_mean(key, [q.name for q in prim.params])
                self.sink.warning("AEV120", f"{where}: {info.canonical} has no parameter `{key}`; the engine "
                                  "ignores it", info.key_span(key), *([hint] if hint else []))
                continue
            if p.since == P.NEWER:
                self._newer("AEV127", f"{where}: parameter `{key}` of {info.canonical} is read by the newer "
                            "engine generation only", info.key_span(key))
            if "${" in value:
                continue
            if p.kind == "enum" and p.choices and value not in p.choices and not dotnet.is_blank(value):
                if info.canonical == "workflow_call" and key == "lifecycle":
                    continue
                if info.canonical == "transform" and key == "op":
                    self.sink.warning("AEV122", f"{where}: transform op {value!r} is not one the engine knows; "
                                      "it passes the input through unchanged", info.param_span(key),
                                      *([h] if (h := did_you_mean(value, p.choices)) else []))
                    continue
                hint = did_you_mean(value, p.choices)
                self.sink.warning("AEV122", f"{where}: `{key}` is {value!r}, not one of "
                                  f"{', '.join(p.choices)}; the engine treats it as {p.default or 'unset'!r}",
                                  info.param_span(key), *([hint] if hint else []))
            elif p.name in ("delimiter", "separator") and value and dotnet.is_blank(value):
                default = self._delimiter_default(prim, p)
                if value != default:
                    self.sink.warning("AEV128", f"{where}: `{key}` is only white space ({value!r}), which the engine "
                                      f"treats as unset: it splits on {default!r}", info.param_span(key),
                                      "a YAML \"\\n\" is a real line break; write '\\n' (single quotes) for the "
                                      "engine's own escape")
            elif p.kind == "int" and not dotnet.is_blank(value) and dotnet.try_parse_int(value) is None:
                self.sink.warning("AEV123", f"{where}: `{key}` is {value!r}, not an integer; the engine uses "
                                  f"{p.default or 'its default'!r}", info.param_span(key))
        for p in prim.params:
            if p.required and dotnet.is_blank(_param_or_alias(params, prim, p.name) or ""):
                engine = f" (the engine: （{info.canonical}）缺少 {p.name} 参数)" \
                    if info.canonical == "workflow_call" else ""
                self.sink.error("AEV121", f"{where}: {info.canonical} needs parameter `{p.name}`{engine}",
                                info.id_span())
        rule = getattr(self, "_rule_" + info.canonical, None)
        if rule is not None:
            rule(info)

    @staticmethod
    def _delimiter_default(prim: P.Primitive, p: P.Param) -> str:
        target = prim.param(p.alias_of) if p.alias_of else p
        raw = (target.default if target is not None else None) or "\\n---\\n"
        return raw.replace("\\n", "\n")

    def _agent_params(self, info: StepInfo) -> None:
        where = f"step {info.id!r}"
        for key, value in info.params.items():
            lowered = key.lower()
            if lowered == "agent_type":
                trimmed = dotnet.trim(value)
                if not trimmed:
                    self.sink.error("AEV125", f"{where}: parameter `agent_type` is blank (the engine: 的参数 "
                                    "'agent_type' 不能为空)", info.param_span(key))
                elif "${" not in value and not _is_agent_type(trimmed):
                    self.sink.error("AEV125", f"{where}: parameter `agent_type` {trimmed!r} is not a type name "
                                    f"(the engine: 格式非法：'{trimmed}')", info.param_span(key))
            elif lowered == "agent_id" and dotnet.is_blank(value):
                self.sink.error("AEV125", f"{where}: parameter `agent_id` is blank (the engine: 的参数 'agent_id' "
                                "不能为空字符串)", info.param_span(key))

    def _step_type_params(self, info: StepInfo) -> None:
        where = f"step {info.id!r}"
        for key, value in info.params.items():
            if not P.is_step_type_key(key) or dotnet.is_blank(value) or "${" in value:
                continue
            if value in P.BY_NAME:
                prim = P.BY_NAME[value]
                if prim.status != "ok":
                    self.sink.error("AEV152", f"{where}: parameter `{key}` names `{value}`, which cannot run in "
                                    "a workflow", info.param_span(key))
                continue
            near = _near_miss(value)
            if near is not None:
                self.sink.error("AEV153", f"{where}: parameter `{key}` names unknown step type {value!r}",
                                info.param_span(key), f'did you mean "{near}"?')
                continue
            msg = (f"{where}: parameter `{key}` names {value!r}, which is not an aevatar primitive (an extension "
                   f"the host must provide; the engine's strict validation: 的参数 '{key}' 使用未知原语 '{value}')")
            if self.strict:
                self.sink.error("AEV153", msg, info.param_span(key))
            else:
                self.sink.warning("AEV153", msg, info.param_span(key))

    def _rule_conditional(self, info: StepInfo) -> None:
        keys = {b.key for b in info.branches}
        where = f"step {info.id!r} (conditional)"
        if not info.branches:
            self.sink.error("AEV140", f"{where} has no `branches`; it needs true and false (the engine: 必须定义 "
                            "branches)", info.id_span())
            return
        for key in ("true", "false"):
            if key not in keys:
                self.sink.error("AEV140", f"{where} has no {key!r} branch (the engine: 缺少 {key} 分支)",
                                info.node.key_node("branches").span)

    def _rule_switch(self, info: StepInfo) -> None:
        where = f"step {info.id!r} (switch)"
        if not info.branches:
            self.sink.error("AEV141", f"{where} has no `branches` (the engine: 必须定义 branches)", info.id_span())
        elif "_default" not in {b.key for b in info.branches}:
            self.sink.error("AEV141", f"{where} has no `_default` branch (the engine: 必须定义 _default 分支)",
                            info.node.key_node("branches").span,
                            "without it an unmatched value falls through to the next step in document order")

    def _rule_while(self, info: StepInfo) -> None:
        where = f"step {info.id!r} (while)"
        params = info.params
        cond = params.get("condition")
        has_cond = cond is not None and not dotnet.is_blank(cond)
        if not has_cond and "max_iterations" not in params:
            self.sink.error("AEV142", f"{where} needs `condition` or `max_iterations` (the engine: 至少需要 "
                            "condition 或 max_iterations)", info.id_span())
        if "max_iterations" in params:
            n = dotnet.try_parse_int(params["max_iterations"])
            if n is None or n <= 0:
                self.sink.error("AEV142", f"{where}: `max_iterations` must be a positive integer, not "
                                f"{shown(params['max_iterations'])!r} (the engine: max_iterations 必须是正整数)",
                                info.param_span("max_iterations"))
        if "step" in params and dotnet.is_blank(params["step"]):
            self.sink.error("AEV142", f"{where}: `step` is blank (the engine: step 参数不能为空)",
                            info.param_span("step"))

    def _rule_workflow_call(self, info: StepInfo) -> None:
        where = f"step {info.id!r} (workflow_call)"
        name = dotnet.trim(info.params.get("workflow", ""))
        if not name:
            return  # AEV121 reported it
        lifecycle = dotnet.trim(info.params.get("lifecycle", ""))
        if lifecycle and "${" not in lifecycle and lifecycle.lower() not in ("singleton", "transient", "scope"):
            self.sink.error("AEV143", f"{where}: lifecycle {lifecycle!r} is not singleton, transient or scope "
                            f"(the engine: lifecycle 仅支持 singleton/transient/scope，当前值 '{lifecycle}')",
                            info.param_span("lifecycle"))
        if self.known_keys is not None and "${" not in name and registry.key(name) not in self.known_keys:
            hint = did_you_mean(name, self.known_workflows or ())
            self.sink.error("AEV138", f"{where}: workflow {name!r} is not registered (the engine: 引用未注册工作流 "
                            f"'{name}')", info.param_span("workflow"), *([hint] if hint else []))

    def _rule_guard(self, info: StepInfo) -> None:
        where = f"step {info.id!r} (guard)"
        if info.params.get("on_fail") == "branch":
            target = info.params.get("branch_target")
            if target is None or dotnet.is_blank(target):
                self.sink.warning("AEV135", f"{where}: on_fail branch without `branch_target` fails the run like "
                                  "on_fail: fail", info.param_span("on_fail"))
            elif "${" not in target and not self._step_exists(target):
                self._unknown_step("AEV135", f"{where}: `branch_target`", target, info.param_span("branch_target"))

    def _rule_connector_call(self, info: StepInfo) -> None:
        connector = _param_or_alias(info.params, info.prim, "connector")
        if not connector or "${" in connector or info.role is None:
            return
        role = self.roles.get(info.role)
        allowed = _role_list(role, "connectors") if role else []
        if allowed and dotnet.trim(connector).lower() not in {a.lower() for a in allowed}:
            self.sink.error("AEV137", f"step {info.id!r}: connector {connector!r} is not in role {info.role!r}'s "
                            f"connectors ({', '.join(allowed)}); the engine refuses the call",
                            info.param_span("connector"))

    _rule_secure_connector_call = _rule_connector_call

    # ------------------------------------------------------------ lowering
    def _lower_params(self, info: StepInfo, deferred: tuple[str, ...] = (), ci_keys: tuple[str, ...] = ()) \
            -> E.MapExpr:
        entries = []
        for key, value in info.params.items():
            span = info.param_span(key)
            lowering = Lowering(self.sink, self._locator(info.param_nodes.get(key), value, span),
                                f"step {info.id!r}, parameter `{key}`: ")
            if key in deferred and "${" not in value:
                expr = lowering.expression(value) if value else E.Literal("true", "string", span)
            else:
                expr = lowering.template(value)
            info.lowered[key] = expr
            entries.append(E.MapEntry(E.Literal(key, "string", info.key_span(key)), expr, span))
        return E.MapExpr(tuple(entries), info.span)

    def _locator(self, node: YNode | None, text: str, span: Span) -> Locator:
        if isinstance(node, YScalar) and span.line == span.end_line:
            width = span.end_col - span.col
            if not node.quoted and width == len(text):
                return Locator(span, span.col)
            if node.quoted and width == len(text) + 2:
                return Locator(span, span.col + 1)
        return Locator(span)

    def _lower_step(self, info: StepInfo) -> Node:
        deferred = ("condition",) if info.canonical == "while" else ()
        params = self._lower_params(info, deferred)
        attrs_: list[Attr] = [Attr("parameters", params, params.span)]
        prim = info.prim
        actor = self._actor(info)
        op = "call"
        regions: tuple[Region, ...] = ()
        if info.extension or prim is None:
            attrs_ += [_lit("capability", "extension"), _lit("name", info.canonical)]
        else:
            op = prim.op
            if op == "call":
                attrs_ += [_lit("capability", prim.capability or "host"), _lit("name", self._call_name(info))]
            attrs_ += self._op_attrs(info)
            regions = self._regions(info)
        attrs_ += self._step_attrs(info)
        if op in _SHARED_OPS and not info.extension and prim is not None:
            attrs_.append(_lit("primitive", info.canonical))
        return Node(
            id=info.id, op=op, kind=info.raw_type, span=info.span, actor=actor, attrs=tuple(attrs_),
            on_error=self._error_policy(info), retry=self._retry(info), regions=regions,
        )

    def _actor(self, info: StepInfo) -> str | None:
        if info.role is not None and not dotnet.is_blank(info.role):
            return info.role
        if info.prim is not None and info.prim.role == "implicit":
            return IMPLICIT_ROLE
        return None

    def _call_name(self, info: StepInfo) -> str:
        p = info.params
        c = info.canonical
        if c == "tool_call":
            return p.get("tool", "")
        if c in ("connector_call", "secure_connector_call"):
            return _param_or_alias(p, info.prim, "connector") or ""
        if c == "workflow_call":
            return p.get("workflow", "")
        if c == "wait_signal":
            return dotnet.lower_invariant(_param_or_alias(p, info.prim, "signal_name") or "default")
        if c == "emit":
            return p.get("event_type", "custom")
        if c == "human_input":
            return "input"
        if c == "secure_input":
            return "secure_input"
        if c == "human_approval":
            return "approval"
        return c

    def _op_attrs(self, info: StepInfo) -> list[Attr]:
        c = info.canonical
        low = info.lowered
        span = info.span
        out: list[Attr] = []
        if c == "transform":
            op = info.params.get("op") or info.params.get("operation") or "identity"
            fn = "aevatar.transform" if "${" in op else f"aevatar.transform.{op}"
            from flowc.ir.semantics import FUNCTIONS
            if fn not in FUNCTIONS and "${" not in op:
                fn = "aevatar.transform.identity"
            out.append(_lit("function", fn))
        elif c == "retrieve_facts":
            out.append(_lit("function", "aevatar.retrieve_facts"))
        elif c == "assign":
            value = info.params.get("value", "")
            if value.startswith("$"):
                out.append(Attr("value", E.Ref("input", (), info.param_span("value")), span))
            else:
                out.append(Attr("value", low.get("value", E.Literal("", "string", span)), span))
            target = low.get("target")
            if target is not None and not dotnet.is_blank(info.params.get("target", "")):
                out.append(Attr("writes", target, span))
        elif c == "conditional":
            cond = low.get("condition", E.Literal("default", "string", span))
            out.append(Attr("condition", E.Call("aevatar.conditional_test", (cond, E.Ref("input", (), span)), span),
                            span))
            out.append(_lit("truthiness", "aevatar_truthy"))
        elif c == "switch":
            if "on" in low:
                out.append(Attr("on", low["on"], span))
            keys = [k[len("branch."):] for k in info.params if k.lower().startswith("branch.")]
            keys += [b.key for b in info.branches if b.key not in keys]
            out.append(Attr("keys", E.ListExpr(tuple(E.Literal(k, "string", span) for k in keys), span), span))
            out.append(_lit("match", "aevatar.switch"))
        elif c == "while":
            out.append(Attr("condition", low.get("condition", E.Literal("true", "string", span)), span))
            out.append(Attr("max_iterations", low.get("max_iterations", E.Literal("10", "string", span)), span))
        elif c == "delay":
            value = _param_or_alias(info.params, info.prim, "duration_ms")
            key = next((k for k in ("duration_ms", "duration", "delay_ms") if k in low), None)
            out.append(Attr("duration_ms", low[key] if key else E.Literal(value or "1000", "string", span), span))
        elif c == "guard":
            out.append(_lit("on_fail", info.params.get("on_fail", "fail")))
        elif c in ("human_approval", "evaluate"):
            out.append(_lit("branch_on", "true"))
        if info.prim is not None and info.prim.side_effect:
            out.append(_lit("secure", "true" if c == "secure_connector_call" else "false"))
        return out

    def _step_attrs(self, info: StepInfo) -> list[Attr]:
        out = []
        node = info.node
        tm = node.get("timeout_ms")
        if isinstance(tm, YScalar):
            n = dotnet.try_parse_int(scalar_text(tm) or "")
            if n is not None:
                out.append(Attr("timeout_ms", E.Literal(min(max(n, 100), 600_000), "int", tm.span), tm.span))
        comp = node.get("compensation")
        if isinstance(comp, YScalar) and scalar_text(comp) and not dotnet.is_blank(scalar_text(comp)):
            out.append(Attr("compensation", E.Literal(dotnet.trim(scalar_text(comp)), "string", comp.span),
                            comp.span))
        tools = self._name_list(node.get("allowed_tools"), "allowed_tools") if "allowed_tools" in node else None
        if tools is not None:
            s = node.get("allowed_tools").span
            out.append(Attr("allowed_tools", E.ListExpr(tuple(E.Literal(t, "string", s) for t in tools), s), s))
        onerr = node.get("on_error")
        if isinstance(onerr, YMap) and isinstance(onerr.get("default_output"), YScalar):
            d = onerr.get("default_output")
            text = scalar_text(d)
            if text is not None:
                out.append(Attr("default_output", E.Literal(text, "string", d.span), d.span))
        return out

    def _error_policy(self, info: StepInfo) -> ErrorPolicy:
        onerr = info.node.get("on_error")
        if not isinstance(onerr, YMap):
            return ErrorPolicy()
        strategy = _scalar(onerr.get("strategy")) or "fail"
        fb = _scalar(onerr.get("fallback_step"))
        if fb is None or dotnet.is_blank(fb):
            fb = _scalar(onerr.get("fallback"))
        if strategy == "skip":
            return ErrorPolicy("skip", None, onerr.span)
        if strategy == "fallback" and fb and not dotnet.is_blank(fb):
            return ErrorPolicy("fallback", fb, onerr.span)
        return ErrorPolicy("fail", None, onerr.span)

    def _retry(self, info: StepInfo) -> RetryPolicy | None:
        retry = info.node.get("retry")
        if not isinstance(retry, YMap):
            return None
        attempts = dotnet.try_parse_int(_scalar(retry.get("max_attempts")) or "3")
        delay = dotnet.try_parse_int(_scalar(retry.get("delay_ms")) or "1000")
        attempts = 3 if attempts is None else min(max(attempts, 1), 10)
        delay = 1000 if delay is None else min(max(delay, 0), 60_000)
        backoff = 2.0 if _scalar(retry.get("backoff")) == "exponential" else 1.0
        return RetryPolicy(attempts - 1, delay, backoff, "non_timeout", retry.span)

    # ------------------------------------------------------------ regions
    def _regions(self, info: StepInfo) -> tuple[Region, ...]:
        c = info.canonical
        p = info.params
        prim = info.prim
        sid = info.id
        if c == "while":
            sub = self._sub_node(info, f"{sid}_iter", p.get("step", "llm_call"), info.role, "sub_param_", ci=True)
            return (Region("body", (sub,), (), info.span),)
        if c == "foreach":
            stype = _param_or_alias(p, prim, "sub_step_type") or "parallel"
            role = _param_or_alias(p, prim, "sub_target_role") or info.role
            sub = self._sub_node(info, f"{sid}_item", stype, role, "sub_param_", ci=True)
            return (Region("body", (sub,), (), info.span),)
        if c in ("parallel", "race"):
            marker = "_sub" if c == "parallel" else "_race"
            workers = _split_workers(_param_or_alias(p, prim, "workers") or "")
            roles = workers or [info.role]
            subs = tuple(self._sub_node(info, f"{sid}{marker}_{i}", p.get("sub_step_type", "llm_call")
                                        if c == "parallel" else "llm_call", role,
                                        "sub_param_" if c == "parallel" else None)
                         for i, role in enumerate(roles))
            regions = [Region("workers", subs, (), info.span)]
            if c == "parallel" and not dotnet.is_blank(p.get("vote_step_type", "")):
                vote = self._sub_node(info, f"{sid}_vote", p["vote_step_type"], info.role, "vote_param_")
                regions.append(Region("vote", (vote,), (), info.span))
            return tuple(regions)
        if c == "map_reduce":
            mtype = _param_or_alias(p, prim, "map_step_type") or "llm_call"
            mrole = _param_or_alias(p, prim, "map_target_role") or info.role
            regions = [Region("map", (self._sub_node(info, f"{sid}_map", mtype, mrole, None),), (), info.span)]
            rtype = _param_or_alias(p, prim, "reduce_step_type")
            rtype = "llm_call" if rtype is None else rtype
            if not dotnet.is_blank(rtype):
                rrole = _param_or_alias(p, prim, "reduce_target_role") or info.role
                prefix = _param_or_alias(p, prim, "reduce_prompt_prefix")
                extra = {"prompt_prefix": prefix} if prefix else {}
                regions.append(Region("reduce", (self._sub_node(info, f"{sid}_reduce", rtype, rrole, None, extra),),
                                      (), info.span))
            return tuple(regions)
        if c == "cache":
            ctype = p.get("child_step_type", "llm_call")
            crole = p.get("child_target_role") or info.role
            return (Region("child", (self._sub_node(info, f"{sid}_child", ctype, crole, None),), (), info.span),)
        if c == "reflect":
            draft = self._sub_node(info, f"{sid}_draft", "llm_call", info.role, None)
            critique = self._sub_node(info, f"{sid}_critique", "llm_call", info.role, None)
            return (Region("round", (draft, critique),
                           (Edge(draft.id, critique.id, EdgeKind.SEQUENCE, span=info.span),), info.span),)
        return ()

    def _sub_node(self, info: StepInfo, node_id: str, stype: str, role: str | None, prefix: str | None,
                  extra: dict[str, str] | None = None, ci: bool = False) -> Node:
        canonical = P.canonical_type(stype) if "${" not in stype else stype
        prim = P.BY_NAME.get(canonical)
        entries = []
        for key, value in info.params.items():
            if prefix is None or not key.lower().startswith(prefix):
                continue
            entries.append(E.MapEntry(E.Literal(key[len(prefix):], "string", info.key_span(key)),
                                      info.lowered.get(key, E.Literal(value, "string")), info.param_span(key)))
        for key, value in (extra or {}).items():
            entries.append(E.MapEntry(E.Literal(key, "string", info.span), E.Literal(value, "string", info.span),
                                      info.span))
        attrs_ = [Attr("parameters", E.MapExpr(tuple(entries), info.span), info.span)]
        if ci:
            attrs_.append(_lit("variables", "case_insensitive"))
        if prim is None or prim.status != "ok":
            op = "call"
            attrs_ += [_lit("capability", "extension"), _lit("name", canonical)]
        else:
            op = prim.op
            if op == "call":
                attrs_ += [_lit("capability", prim.capability or "host"), _lit("name", canonical)]
            if op in _SHARED_OPS:
                attrs_.append(_lit("primitive", canonical))
        actor = role if role else (IMPLICIT_ROLE if prim is not None and prim.role == "implicit" else None)
        return Node(node_id, op, stype, info.span, actor=actor, attrs=tuple(attrs_))

    # ------------------------------------------------------------ edges
    def _edges(self) -> list[Edge]:
        edges: list[Edge] = []
        steps = self.steps
        for i, info in enumerate(steps):
            if info.next is not None:
                edges.append(Edge(info.id, info.next, EdgeKind.SEQUENCE, span=info.next_node.span))
            for br in info.branches:
                edges.append(Edge(info.id, br.target, EdgeKind.BRANCH, br.key, br.order, br.key_node.span))
            if info.canonical == "guard" and info.params.get("on_fail") == "branch":
                target = info.params.get("branch_target")
                if target and "${" not in target:
                    edges.append(Edge(info.id, target, EdgeKind.BRANCH, "on_fail", 0, info.param_span("branch_target")))
            onerr = info.node.get("on_error")
            if isinstance(onerr, YMap) and (_scalar(onerr.get("strategy")) or "") == "fallback":
                fb = _scalar(onerr.get("fallback_step"))
                if fb is None or dotnet.is_blank(fb):
                    fb = _scalar(onerr.get("fallback"))
                if fb and not dotnet.is_blank(fb):
                    edges.append(Edge(info.id, fb, EdgeKind.ERROR, "fallback", 0, onerr.span))
            if info.next is None and i + 1 < len(steps) and not self._exhaustive(info):
                edges.append(Edge(info.id, steps[i + 1].id, EdgeKind.FALLTHROUGH, span=info.span))
        return edges

    def _exhaustive(self, info: StepInfo) -> bool:
        """Does every run of the step take one of its branches?"""
        keys = {b.key for b in info.branches}
        if info.canonical == "conditional":
            return {"true", "false"} <= keys
        if info.canonical == "switch":
            return "_default" in keys
        if info.canonical == "human_approval":
            # Approval gives "true"; a rejection fails the run unless on_reject is not fail ("false").
            rejects_fail = info.params.get("on_reject", "fail") == "fail"
            return "true" in keys and (rejects_fail or "false" in keys)
        return False

    # ------------------------------------------------------------ helpers
    def _check_keys(self, node: YMap, allowed: tuple[str, ...], newer: tuple[str, ...], where: str) -> None:
        for key, _ in node.items:
            name = param_text(key)
            if name in allowed:
                continue
            if name in newer:
                self._newer("AEV109", f"`{name}` in {where} is read by the newer engine generation only; the "
                            "c8db46d parser rejects it", key.span)
                continue
            hint = did_you_mean(name, allowed + newer)
            self.sink.error("AEV103", f"unknown key {name!r} in {where} (the engine's parser fails: Property "
                            f"'{name}' not found)", key.span, *([hint] if hint else []))

    def _string(self, node: YMap, key: str, where: str) -> str | None:
        value = node.get(key)
        if value is None:
            return None
        if isinstance(value, YScalar):
            return scalar_text(value)
        self.sink.error("AEV102", f"`{key}` in {where} must be a string, not {type_name(value)}", value.span)
        return None

    def _typed(self, node: YNode, kind: str, what: str) -> str | None:
        """A scalar the engine converts to int, double or bool (an error if it cannot)."""
        if not isinstance(node, YScalar):
            self.sink.error("AEV108", f"`{what}` must be {_KIND_NAMES[kind]}, not {type_name(node)}", node.span)
            return None
        text = scalar_text(node)
        if text is None:
            return None
        ok = {"int": lambda t: dotnet.try_parse_int(t) is not None,
              "double": lambda t: dotnet.try_parse_double(t) is not None,
              "bool": lambda t: dotnet.try_parse_bool(t) is not None}[kind](text)
        if not ok:
            self.sink.error("AEV108", f"`{what}` must be {_KIND_NAMES[kind]}, not {shown(text)!r} "
                            "(the engine's parser "
                            "cannot convert it)", node.span)
            return None
        return text


_KIND_NAMES = {"int": "an integer", "double": "a number", "bool": "true or false"}


# IR operations several primitives lower to (llm_call, tool_call, evaluate
# ... are all a `call`; transform and retrieve_facts a `transform.apply`):
# their nodes carry the canonical primitive as attr `primitive`, which the
# aevatar kernel dispatches on (the others' op names the primitive).
_SHARED_OPS = frozenset({"call", "transform.apply"})


def _lit(name: str, value: str) -> Attr:
    return Attr(name, E.Literal(value, "string"))


def _scalar(node: YNode | None) -> str | None:
    return scalar_text(node) if isinstance(node, YScalar) else None


def _get_ci(params: dict[str, str], key: str) -> str | None:
    if key in params:
        return params[key]
    for k, v in params.items():
        if k.lower() == key:
            return v
    return None


def _param_or_alias(params: dict[str, str], prim: P.Primitive | None, name: str) -> str | None:
    """The value of parameter ``name`` or of the first alias the engine reads."""
    if name in params:
        return params[name]
    if prim is not None:
        for p in prim.params:
            if p.alias_of == name and p.name in params:
                return params[p.name]
    return None


def _split_workers(text: str) -> list[str]:
    text = dotnet.trim(text)
    if not text:
        return []
    if text.startswith("["):
        import json

        try:
            data = json.loads(text)
            if isinstance(data, list):
                return [dotnet.trim(str(x)) for x in data if isinstance(x, str) and not dotnet.is_blank(x)]
        except ValueError:
            pass
    return [dotnet.trim(t) for t in re.split(r"[,;\n]", text) if not dotnet.is_blank(t)]


def _role_list(role: Actor, key: str) -> list[str]:
    for a in role.attrs:
        if a.name == key and isinstance(a.value, E.ListExpr):
            return [item.value for item in a.value.items if isinstance(item, E.Literal)]
    return []


def _is_agent_type(value: str) -> bool:
    """The validator's IsLikelyAgentTypeString."""
    comma = value.find(",")
    type_part = (value[:comma] if comma >= 0 else value).strip()
    assembly = value[comma + 1:].strip() if comma >= 0 else ""
    if not type_part or (comma >= 0 and not assembly):
        return False
    if not (type_part[0].isalpha() or type_part[0] == "_"):
        return False
    if any(not (ch.isalnum() or ch in "_.+`") for ch in type_part):
        return False
    return ".." not in type_part


def _near_miss(name: str) -> str | None:
    """A known type this one is probably a typo of (edit distance, not prefix/suffix families)."""
    import difflib

    if not name:
        return None
    candidates = sorted(P.KNOWN_TYPES)
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.85)
    if not match:
        return None
    return match[0] if _edit_distance(name, match[0]) <= 2 else None


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _all_nodes(nodes):
    for n in nodes:
        yield n
        for r in n.regions:
            yield from _all_nodes(r.nodes)


def compile_aevatar(text: str, file: str, strict: bool = False,
                    known_workflows: frozenset[str] | set[str] | None = None):
    """Parse and check an aevatar workflow. Returns (Workflow | None, diagnostics)."""
    fe = AevatarFrontEnd(text, file, strict=strict, known_workflows=known_workflows)
    try:
        workflow = fe.compile()
    except RecursionError:
        fe.sink.error("ANA406", "the workflow nests too deeply to compile", Span(file, 1, 1, 1, 2))
        workflow = None
    return workflow, fe.sink.items


def _count_steps(steps: YSeq) -> int:
    """Steps of a step list, their `children` included, stopping soon after
    MAX_STEPS (one walk, no recursion)."""
    count = 0
    pending = [steps]
    while pending and count <= MAX_STEPS:
        seq = pending.pop()
        count += len(seq.items)
        for item in seq.items:
            children = item.get("children") if isinstance(item, YMap) else None
            if isinstance(children, YSeq):
                pending.append(children)
    return count
