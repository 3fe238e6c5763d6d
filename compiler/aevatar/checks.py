"""The aevatar engine's rules that its validator does not enforce, as findings.

These are the ways a workflow runs "successfully" and still does the wrong
thing (seeds/aevatar-workflow-authoring.md, Engine rules and Gotchas):

- AEV301 no terminal: the last step in document order routes on with ``next``,
  so no run can complete;
- AEV302 a step without ``next`` falls through, by document order, into a step
  that other steps route to explicitly (a second terminal, or a step after
  the terminal);
- AEV303 a branch arm falls through into a sibling arm of the same branch
  (the sibling runs too and overwrites the arm's output);
- AEV210 / AEV211 ``${steps.<id>.text}`` (always empty), also for an assign
  capture; AEV212 an unknown step; AEV213 a field the kernel never sets;
  AEV214 a step that has not run before; AEV215 a variable that is probably
  misspelt; AEV216 a variable outside a while condition's scope;
- AEV126 ``$input`` outside ``assign.value`` (literal text there);
- AEV304 ``switch.on`` that can resolve to empty (then the whole input is matched);
- AEV305 arithmetic or counting asked of an llm_call (best effort);
- AEV306 ``parallel``/``race`` given per-item input;
- AEV308 / AEV309 branches a step can never take.
"""

from __future__ import annotations

import re

from flowc.compiler.aevatar import dotnet
from flowc.compiler.aevatar import primitives as P
from flowc.compiler.aevatar.model import StepInfo, StepTable
from flowc.compiler.suggest import did_you_mean
from flowc.ir import expr as E
from flowc.ir import graph as G
from flowc.ir.diagnostics import Diagnostic, error, warning
from flowc.ir.graph import control_graph
from flowc.ir.workflow import EdgeKind, Workflow

_SUB_STEP = re.compile(r"^(?P<parent>.+)_(item|sub|race|map|iter)_\d+$|^(?P<parent2>.+)_(reduce|vote)$")
_WHILE_SCOPE = ("output", "input", "iteration", "max_iterations")
_KERNEL_VARS = frozenset({"input"})

# Things people ask a model to compute that a transform computes exactly.
_ARITHMETIC = re.compile(
    r"\b(count (the|how many|all|each|every|up)|how many (items|rows|lines|entries|records|times)|"
    r"(calculate|compute|sum up|add up|total up)\b|(the )?(sum|total|average|mean) of\b|"
    r"\b(deduplicate|de-duplicate|remove duplicates|group by)\b)",
    re.IGNORECASE)
_PER_ITEM = ("delimiter", "separator", "items", "items_source", "sub_step_type", "step")


def check_workflow(table: StepTable, wf: Workflow) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    graph = control_graph(wf)
    out.extend(_terminal_rules(table, wf, graph))
    out.extend(_reference_rules(table, wf, graph))
    out.extend(_parameter_rules(table))
    out.extend(_branch_key_rules(table))
    return out


# ---------------------------------------------------------------- control flow
def _terminal_rules(table: StepTable, wf: Workflow, graph: G.Graph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    steps = table.steps
    if not steps:
        return out
    last = steps[-1]
    if last.next is not None:
        out.append(error("AEV301", f"the last step {last.id!r} has `next: {last.next}`, so no run can complete: "
                         "a run ends at the step with no `next` that is last in document order",
                         last.next_node.span, "make the final step the last one in the file, without `next`"))
    # Who routes to each step explicitly (next, branches, fallbacks, guard branches).
    explicit: dict[str, set[str]] = {}
    for edge in wf.edges:
        if edge.kind is not EdgeKind.FALLTHROUGH:
            explicit.setdefault(edge.target, set()).add(edge.source)
    arms: dict[str, dict[str, str]] = {}   # branching step -> {target: key}
    for edge in wf.edges:
        if edge.kind is EdgeKind.BRANCH:
            arms.setdefault(edge.source, {}).setdefault(edge.target, edge.label or "")
    arm_of = _arm_chains(wf, arms, explicit)
    reported: set[tuple[str, str]] = set()
    for edge in wf.edges:
        if edge.kind is not EdgeKind.FALLTHROUGH:
            continue
        src, dst = edge.source, edge.target
        info = table.by_id.get(src)
        if info is None:
            continue
        # AEV303: the arm that src belongs to falls into a sibling arm.
        for brancher, target, key in arm_of.get(src, ()):
            siblings = arms.get(brancher, {})
            if dst in siblings and dst != target:
                reported.add((src, dst))
                out.append(error(
                    "AEV303", f"branch {key!r} of step {brancher!r} ends at {src!r}, which has no `next` and falls "
                    f"through (document order) into {dst!r}, the {siblings[dst]!r} branch: {dst!r} then runs "
                    f"too and overwrites the output", info.span,
                    f"give {src!r} an explicit `next` (the step where the branches converge)"))
        if (src, dst) in reported:
            continue
        others = explicit.get(dst, set()) - {src}
        if others and explicit.get(src):
            routed = ", ".join(sorted(others))
            out.append(warning(
                "AEV302", f"step {src!r} has no `next` and falls through (document order) into {dst!r}, which "
                f"{routed} route to explicitly: if {src!r} is meant to end the run it must be the last step; "
                f"otherwise say `next: {dst}`", info.span))
    return out


def _arm_chains(wf: Workflow, arms: dict[str, dict[str, str]], explicit: dict[str, set[str]]):
    """step id -> [(branching step, arm target, key)]: the steps of each arm,
    from the target along next/fall-through while nobody else routes in."""
    succ: dict[str, list[tuple[str, EdgeKind]]] = {}
    for edge in wf.edges:
        if edge.kind in (EdgeKind.SEQUENCE, EdgeKind.FALLTHROUGH):
            succ.setdefault(edge.source, []).append((edge.target, edge.kind))
    branching = set(arms)
    out: dict[str, list[tuple[str, str, str]]] = {}
    for brancher, targets in arms.items():
        for target, key in targets.items():
            node = target
            seen = set()
            while node not in seen:
                seen.add(node)
                out.setdefault(node, []).append((brancher, target, key))
                if node in branching:
                    break
                nxt = succ.get(node, [])
                if len(nxt) != 1:
                    break
                follow, kind = nxt[0]
                if kind is EdgeKind.FALLTHROUGH:
                    break  # the fall-through edge itself is what the caller judges
                if explicit.get(follow, set()) - {node}:
                    break  # a convergence point, not part of this arm only
                node = follow
    return out


# ---------------------------------------------------------------- references
def _expressions(info: StepInfo):
    """(parameter key, expression) of a step."""
    yield from info.lowered.items()


def _reference_rules(table: StepTable, wf: Workflow, graph: G.Graph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    assigned = {info.params.get("target", "") for info in [*table.steps, *table.children] if info.canonical == "assign"}
    variables = {v for v in assigned if v} | set(table.by_id) | _KERNEL_VARS
    # human_input's `variable` names the reply, but the c8db46d engine does not
    # assign it: the reply is the step's output (vars[<step id>]).
    human_vars = {info.params.get("variable", "user_input"): info.id for info in table.steps
                  if info.canonical in ("human_input", "secure_input")}
    reach = G.Reachability(graph)
    for info in [*table.steps, *table.children]:
        if info.is_child:
            continue
        for key, expr in _expressions(info):
            while_scope = info.canonical == "while" and (key == "condition" or key.lower().startswith("sub_param_"))
            for ref in E.refs(expr):
                if while_scope:
                    name = _flat(ref)
                    if name.lower() not in _WHILE_SCOPE and not _literal_key(name):
                        out.append(warning("AEV216", f"step {info.id!r}, parameter `{key}`: only output, input, "
                                           f"iteration and max_iterations exist when a while evaluates it; "
                                           f"{name!r} is empty", ref.span))
                    continue
                if ref.root == "steps":
                    out.extend(_step_ref(table, graph, reach, info, key, ref))
                elif ref.root == "vars":
                    name = ref.path[0].name if ref.path else ""
                    if name in human_vars and name not in variables:
                        sid = human_vars[name]
                        out.append(warning("AEV215", f"step {info.id!r}, parameter `{key}`: {name!r} is the "
                                           f"`variable` of human step {sid!r}, which the c8db46d engine does not "
                                           f"assign (it is empty there)", ref.span,
                                           f"read the reply as ${{{sid}}} or ${{steps.{sid}.output}}"))
                        continue
                    if name in variables or _literal_key(name) or "." in name:
                        continue
                    hint = did_you_mean(name, variables)
                    if hint is not None:
                        out.append(warning("AEV215", f"step {info.id!r}, parameter `{key}`: no step assigns "
                                           f"variable {name!r} (unless a run parameter sets it, it is empty)",
                                           ref.span, hint))
    return out


def _flat(ref: E.Ref) -> str:
    names = [seg.name for seg in ref.path if isinstance(seg, E.Field)]
    if ref.root == "input":
        return "input"
    if ref.root == "steps":
        return "steps." + ".".join(names)
    return names[0] if names else ""


def _literal_key(name: str) -> bool:
    return dotnet.try_parse_double(name) is not None or dotnet.try_parse_bool(name) is not None


def _step_ref(table, graph, reach: G.Reachability, info, key, ref: E.Ref) -> list[Diagnostic]:
    names = [seg.name for seg in ref.path if isinstance(seg, E.Field)]
    where = f"step {info.id!r}, parameter `{key}`"
    if not names or not names[0]:
        return [warning("AEV213", f"{where}: `${{steps.}}` names no step; it is empty", ref.span)]
    target, fields = names[0], names[1:]
    tinfo = table.by_id.get(target)
    if tinfo is None:
        m = _SUB_STEP.match(target)
        parent = m and (m.group("parent") or m.group("parent2"))
        if parent and parent in table.by_id:
            return []
        hint = did_you_mean(target, table.by_id)
        return [error("AEV212", f"{where}: `${{steps.{target}...}}` names a step that does not exist (it is "
                      "always empty)", ref.span, *([hint] if hint else []))]
    if not fields:
        return [warning("AEV213", f"{where}: `${{steps.{target}}}` is not set by the engine; use "
                        f"`${{steps.{target}.output}}`", ref.span)]
    field = fields[0]
    if field == "text":
        if tinfo.canonical == "assign" and tinfo.params.get("target"):
            return [error("AEV211", f"{where}: `${{steps.{target}.text}}` is always empty: read the value "
                          f"assign {target!r} captured with `${{{tinfo.params['target']}}}` (or "
                          f"`${{steps.{target}.output}}`)", ref.span)]
        return [error("AEV210", f"{where}: `${{steps.{target}.text}}` is always empty; a step's text output is "
                      f"`${{steps.{target}.output}}`", ref.span)]
    if field in P.STEP_FIELDS:
        if len(fields) > 1:
            return [warning("AEV213", f"{where}: `{_flat(ref)}` is not set by the engine (lookup is by the "
                            f"whole dotted key); use `steps.{target}.json.<field>` for JSON fields", ref.span)]
    elif field in P.STEP_FIELD_PREFIXES:
        if len(fields) < 2:
            return [warning("AEV213", f"{where}: `${{steps.{target}.{field}}}` needs a field name after "
                            f"`{field}.`", ref.span)]
    else:
        hint = did_you_mean(field, P.STEP_FIELDS + P.STEP_FIELD_PREFIXES)
        return [warning("AEV213", f"{where}: steps.{target}.{field} is never set by the engine (steps.<id> has "
                        f"{', '.join(P.STEP_FIELDS)}, json.*, annotations.*, usage.*)", ref.span,
                        *([hint] if hint else []))]
    if target == info.id or target in graph and info.id in graph and reach.reaches(target, info.id):
        if target == info.id and not (info.id in graph and reach.reaches(info.id, info.id)):
            return [warning("AEV214", f"{where}: step {target!r} reads its own output, which is empty "
                            "while it runs", ref.span)]
        return []
    if target in graph and info.id in graph:
        return [warning("AEV214", f"{where}: step {target!r} never runs before {info.id!r}, so "
                        f"`{_flat(ref)}` is empty here", ref.span)]
    return []


# ---------------------------------------------------------------- parameters
def _parameter_rules(table: StepTable) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for idx, info in enumerate(table.steps):
        for key, value in info.params.items():
            if info.canonical == "assign" and key == "value":
                continue
            if re.search(r"(?<![$\w])\$input\b", value):
                where = f"step {info.id!r}, parameter `{key}`"
                extra = ""
                if info.canonical == "switch" and key == "on":
                    extra = "; the switch compares the literal text and never matches a branch key"
                out.append(warning("AEV126", f"{where}: `$input` is an expression only in assign's `value`; here "
                                   f"it is the literal text \"$input\"{extra}", info.param_span(key),
                                   "write ${input}" + (", or leave `on` out to switch on the input"
                                                       if info.canonical == "switch" else "")))
        if info.canonical == "switch":
            out.extend(_switch_on(info))
        if info.canonical == "llm_call":
            prefix = info.params.get("prompt_prefix", "")
            m = _ARITHMETIC.search(prefix)
            if m is not None:
                out.append(warning("AEV305", f"step {info.id!r}: the prompt asks the model to {m.group(0)!r}; "
                                   "models get amounts and counts wrong: compute them with a transform (sum, "
                                   "count, group_by, distinct, ...) and let the llm_call word the result",
                                   info.param_span("prompt_prefix")))
        if info.canonical in ("parallel", "race"):
            per_item = [k for k in _PER_ITEM if k in info.params] + \
                [k for k in info.params if k.startswith("sub_param_") and info.canonical == "race"]
            producer = table.steps[idx - 1] if idx > 0 and table.steps[idx - 1].next in (None, info.id) else None
            splits = producer is not None and producer.canonical == "transform" and \
                producer.params.get("op") == "split"
            if per_item or splits:
                why = (f"it has {', '.join('`' + k + '`' for k in per_item)}" if per_item
                       else f"its input comes from {producer.id!r} (transform op split)")
                out.append(warning("AEV306", f"step {info.id!r}: {info.canonical} gives every worker the SAME "
                                   f"input, but {why}: for one sub-step per item use foreach (outputs joined) or "
                                   "map_reduce (map, then reduce)", info.type_span()))
    return out


def _switch_on(info: StepInfo) -> list[Diagnostic]:
    expr = info.lowered.get("on")
    if expr is None or not _may_be_empty(expr):
        return []
    return [warning("AEV304", f"step {info.id!r}: `on` can resolve to empty, and then the switch matches the "
                    "whole input instead (exact, then contains, then _default), silently taking a wrong branch",
                    info.param_span("on"),
                    "switch on a never-empty token, e.g. on: \"${eq(steps.read.json.count, '0')}\" with branches "
                    "\"true\" / \"false\" / _default")]


def _may_be_empty(expr: E.Expr) -> bool:
    if isinstance(expr, E.Literal):
        return dotnet.is_blank(str(expr.value))
    if isinstance(expr, E.Ref):
        return not (expr.root == "vars" and expr.path and _literal_key(expr.path[0].name))
    if isinstance(expr, E.Template):
        return all(_may_be_empty(p) for p in expr.parts)
    if isinstance(expr, E.Conditional):
        return _may_be_empty(expr.then) or _may_be_empty(expr.otherwise)
    if isinstance(expr, E.Call):
        if expr.func in ("aevatar.concat",):
            return all(_may_be_empty(a) for a in expr.args)
        # upper/lower/trim/json keep an empty value empty; the others give
        # true/false, numbers or error texts, which are never empty.
        return expr.func in ("aevatar.upper", "aevatar.lower", "aevatar.trim", "aevatar.json")
    return True


# ---------------------------------------------------------------- branch keys
def _branch_key_rules(table: StepTable) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for info in [*table.steps, *table.children]:
        if not info.branches or info.extension or info.prim is None:
            continue
        c = info.canonical
        where = f"step {info.id!r} ({c})"
        if not info.prim.branch_keys:
            out.append(warning("AEV308", f"{where} produces no branch key, so its `branches` are never taken",
                               info.node.key_node("branches").span,
                               "route with `next`, or use conditional / switch"))
            continue
        if c in ("conditional", "human_approval"):
            for br in info.branches:
                if br.key not in ("true", "false"):
                    out.append(warning("AEV309", f"{where} produces only the keys 'true' and 'false'; branch "
                                       f"{br.key!r} is never taken", br.key_node.span))
        elif c == "switch":
            keys = {br.key for br in info.branches}
            for key in info.params:
                if key.lower().startswith("branch.") and key[len("branch."):] not in keys:
                    out.append(warning("AEV309", f"{where}: parameter `{key}` makes {key[len('branch.'):]!r} a "
                                       "key the switch can produce, but `branches` has no such key, so it routes "
                                       "to _default", info.key_span(key)))
        elif c == "evaluate":
            on_below = info.params.get("on_below", "")
            for br in info.branches:
                if br.key != on_below and br.key != "_default" and "${" not in on_below:
                    out.append(warning("AEV309", f"{where} produces only its `on_below` key "
                                       f"({on_below!r}); branch {br.key!r} is never taken", br.key_node.span))
    return out
