"""IR -> the source of a Python module that imports flowc's runtime (no other
part of flowc, none of its dependencies).

The module is the workflow's sequential plan as data (``PLAN``,
:mod:`flowc.plan.sequential`), a table of its step functions (``STEPS``)
and structured code, one function per step: a conditional evaluates its
condition and names the arm it chose, ``each`` is a ``for`` loop, filter
and map are comprehensions, and the workflow outputs are ``_end``. The
order of the steps is no code: the scheduler of
:mod:`flowc.runtime.sequence_run` (imported as ``_rt``) walks the plan's
``sequence`` edges at run time, and runs a chosen arm by its ``branch``
edges. Semantics that differ from Python's are
calls into ``_rt`` too: expressions via :mod:`flowc.backends.python.expr`,
and the run orchestration (host calls with retries, records, outputs).

The steps that call the host or sleep are generators, tasks of the
sans-I/O kernel (flowc.runtime.kernel): ``yield from ctx.call(...)`` yields
the request and receives the driver's answer; the scheduler ``yield from``s
them (``STEPS`` says which steps are generators).
Transforms and exits stay plain functions, so their loops run as plain
Python. ``run``, ``run_async`` and ``run_virtual`` bind
the run to the sync, asyncio and virtual-time drivers (docs/runtime.md).

Safety: ids, tool names, keys, strings, descriptions and the file name are
hostile input. They reach the generated text only through
:mod:`flowc.backends.python.pysource`: as constants (``pysource.const``) or
comments (``pysource.comment``: printable ASCII, no quote, no line break),
or reduced to a fixed alphabet in identifiers (``_step_<index>_<[A-Za-z0-9_]
chars of the id>``). The docstring holds no workflow text. The same workflow
always gives the same bytes.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from flowc.backends.python import pysource
from flowc.backends.python.expr import ENV_NAME, ENV_ROOTS, RUNTIME_NAME, ExprCompileError, compile_expr
from flowc.ir import expr as E
from flowc.ir.ops import OPERATIONS
from flowc.ir.workflow import Node, Workflow
from flowc.plan import NO_BODIES, PlanError, build_plan, runs_under
from flowc.plan.sequential import arms as plan_arms

__all__ = ["BackendError", "generate"]

RT = RUNTIME_NAME

# The roots a run provides from its state; the others are bound by the
# construct they belong to (each loop, filter/map item, step output result).
_STATE_ROOTS = ("inputs", "steps")
_LOCAL_ROOTS = ("item", "index", "result")

_TRUTHINESS = {"js_boolean": "js_boolean", "wfs_truthy": "wfs_truthy"}
# IR type kinds -> the names the run-time type checks (and their messages) use
_TYPE_NAMES = {"string": "string", "int": "int", "float": "float", "bool": "boolean", "array": "array",
               "object": "object"}
_SUPPORTED_OPS = ("call", "transform.filter", "transform.map", "transform.sort", "branch", "exit", "end")
_IDENT_CHARS = re.compile(r"[^A-Za-z0-9_]")


class BackendError(Exception):
    """The workflow uses something this backend can't compile."""


# ------------------------------------------------------------ text helpers

def _const(value: Any) -> str:
    """Python source for a plain constant (see pysource.const)."""
    try:
        return pysource.const(value, RT)
    except pysource.NotAConstant as exc:
        raise BackendError(str(exc)) from None


def _data(value: Any, depth: int = 0) -> str:
    """Python source for a JSON-shaped constant (a fresh object each time
    it is evaluated)."""
    if depth > 100:
        raise BackendError("a constant nests too deeply to compile")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_data(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise BackendError(f"an object key is not a string: {type(k).__name__}")
            parts.append(f"{_const(k)}: {_data(v, depth + 1)}")
        return "{" + ", ".join(parts) + "}"
    return _const(value)


def _filled(parts: list[str], lead: str, indent: str, close: str, width: int = 100) -> list[str]:
    """``lead``, the ``parts`` joined by commas, then ``close``, as lines of
    at most ``width`` columns where the parts allow (a part is never split;
    the lines after the first start with ``indent``)."""
    lines: list[str] = []
    line = lead
    for i, part in enumerate(parts):
        piece = part + (", " if i < len(parts) - 1 else close)
        if line.strip() and line != lead and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip() if parts else lead + close)
    return lines


def _tuple(items: list[str]) -> str:
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def mangle(text: str) -> str:
    """The identifier-safe part of ``text``: its [A-Za-z0-9_] characters,
    runs of underscores collapsed, at most 40 characters."""
    return re.sub(r"__+", "_", _IDENT_CHARS.sub("", str(text)))[:40].strip("_")


def _ident(prefix: str, index: int, node_id: str, suffix: str = "") -> str:
    """A function name: prefix, node index (unique), the id's safe part."""
    return "_".join(part for part in (prefix, str(index), mangle(node_id), suffix) if part)


# ------------------------------------------------------- expression helpers

class _Localize(ast.NodeTransformer):
    """``_rt.env_root(env, 'x')`` -> the local name ``x``: the generated
    functions keep the roots in locals instead of an environment dict."""

    def __init__(self) -> None:
        self.roots: set[str] = set()

    def visit_Call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "env_root" and isinstance(f.value, ast.Name)
                and f.value.id == RT and len(node.args) == 2 and not node.keywords
                and isinstance(node.args[0], ast.Name) and node.args[0].id == ENV_NAME
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in ENV_ROOTS):
            root = node.args[1].value
            self.roots.add(root)
            return ast.copy_location(ast.Name(id=root, ctx=ast.Load()), node)
        self.generic_visit(node)
        return node


# Helpers that are pure and never raise on run-time values: a call of one of
# them whose arguments don't depend on the loop variables can be evaluated
# once, before a filter or map loop, without changing what the run does.
_PURE_HELPERS = frozenset({
    "wfs_get_field", "wfs_get_fields", "wfs_get_index", "wfs_eq", "wfs_ne", "wfs_lt", "wfs_le",
    "wfs_gt", "wfs_ge", "wfs_contains", "wfs_truthy", "wfs_not", "wfs_all", "wfs_any", "js_boolean",
})
_LOOP_VARS = frozenset({"item", "index"})


def _invariant(node: ast.AST) -> bool:
    """Is ``node`` pure, unable to raise, and free of the loop variables?"""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id not in _LOOP_VARS
    if isinstance(node, ast.Tuple):
        return all(_invariant(e) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == RT
    if isinstance(node, ast.Call):
        f = node.func
        return (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == RT
                and f.attr in _PURE_HELPERS and not node.keywords and all(_invariant(a) for a in node.args))
    return False


class _Hoist(ast.NodeTransformer):
    """Replace the largest loop-invariant helper calls by names bound before
    the loop (``_c0``, ``_c1`` ...)."""

    def __init__(self, fn: _Func) -> None:
        self.fn = fn
        self.bound: list[tuple[str, str]] = []

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _invariant(node):
            name = f"_c{self.fn.hoisted}"
            self.fn.hoisted += 1
            self.bound.append((name, ast.unparse(node)))
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        self.generic_visit(node)
        return node


# --------------------------------------------------- the fast path of a loop
#
# A filter or map loop is emitted twice: the general comprehension (helper
# calls, exactly the semantics keys), and before it a fast one for the common
# case, tried first. The fast one reads a field of the item with
# ``dict.get(item, key, MISSING)``, which raises TypeError when the item is
# not an object, and inlines the helpers' commonest cases (numbers that are
# exact JavaScript numbers, strings, booleans) behind cheap type checks, with
# the helper itself on every other path. So the fast comprehension gives the
# general one's result whenever it completes; it has no effects, so when it
# raises one of the errors the general one reports as the step's (STEP_ERRORS)
# the general one runs from the start and decides (its result, or the step's
# error). Any other exception is a bug of the fast path, and surfaces.

_MAX_SAFE = 9007199254740992  # 2**53: ints up to this magnitude are exact JavaScript numbers
# helpers whose result is always a bool (or never missing)
_BOOL_HELPERS = frozenset({"wfs_eq", "wfs_ne", "wfs_lt", "wfs_le", "wfs_gt", "wfs_ge", "wfs_contains",
                           "wfs_truthy", "wfs_not", "wfs_all", "wfs_any", "js_boolean"})
_NEVER_MISSING_HELPERS = _BOOL_HELPERS | {"wfs_template", "compact"}
_COMPARE = {"wfs_lt": "<", "wfs_le": "<=", "wfs_gt": ">", "wfs_ge": ">="}


def _helper(node: ast.AST) -> str | None:
    """The runtime helper ``node`` calls (``_rt.<name>(...)``), if any."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == RT and not node.keywords):
        return node.func.attr
    return None


def _raw(source: str) -> ast.Name:
    """A node that unparses as ``source`` verbatim (a rewritten operand; always an
    atom: a call, a name or a parenthesized expression)."""
    node = ast.Name(id=source, ctx=ast.Load())
    node.flowc_raw = True
    return node


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and not getattr(node, "flowc_raw", False)


def _src(node: ast.AST) -> str:
    return node.id if getattr(node, "flowc_raw", False) else ast.unparse(node)


class _Fast(ast.NodeTransformer):
    """Rewrites the body of a filter/map comprehension into its fast form
    (see above). ``item`` and ``index`` are the loop variables; names in
    ``invariant`` (hoisted values) and constants are the same for every
    item, so what the fast path derives from them is hoisted too."""

    def __init__(self, fn: _Func, invariant: set[str]) -> None:
        self.fn = fn
        self.invariant = invariant
        self.changed = False

    # ------------------------------------------------------------ helpers
    def temp(self) -> str:
        name = f"_t{self.fn.temps}"
        self.fn.temps += 1
        return name

    def hoist(self, source: str) -> str:
        """A name bound before the loop to ``source`` (an invariant value)."""
        for name, bound in self.fn.pending:
            if bound == source:
                return name
        name = f"_h{self.fn.derived}"
        self.fn.derived += 1
        self.fn.pending.append((name, source))
        return name

    def fixed(self, node: ast.AST) -> bool:
        """The same for every item, and unable to raise?"""
        return _constant(node) is not _NOT_CONSTANT or (_is_name(node) and node.id in self.invariant)

    def bind(self, node: ast.AST) -> tuple[str, str]:
        """(the code that evaluates ``node``, the name to reuse its value by):
        a name as it is, anything else assigned to a temporary (``_t := ...``,
        to be parenthesized except as a lone call argument)."""
        if _is_name(node):
            return node.id, node.id
        name = self.temp()
        return f"{name} := {_src(node)}", name

    @staticmethod
    def par(first: str, name: str) -> str:
        return name if first == name else f"({first})"

    def is_number(self, first: str, name: str) -> str:
        """A test that the value is its own toNumber: a float, or an int that
        is an exact JavaScript number."""
        kind = self.temp()
        return f"(({kind} := type({first})) is int and -{_MAX_SAFE} <= {name} <= {_MAX_SAFE} or {kind} is float)"

    def number(self, node: ast.AST) -> tuple[str, str | None]:
        """An operand of <, <=, >, >=: (its value's name or source, a test
        that the value is its own toNumber, None when it always is)."""
        if _is_name(node) and node.id == "index":
            return "index", None  # an enumerate counter: a small int
        value = _constant(node)
        if value is not _NOT_CONSTANT:
            return _const(_runtime_to_number(value)), None
        if self.fixed(node):
            return self.hoist(f"{RT}.to_number({node.id})"), None
        first, name = self.bind(node)
        return name, self.is_number(first, name)

    def done(self, source: str) -> ast.Name:
        self.changed = True
        return _raw(source)

    # ------------------------------------------------------------ rewrites
    def visit_Call(self, node: ast.Call) -> ast.AST:
        fname = _helper(node)
        if fname == "compact" and len(node.args) == 1 and isinstance(node.args[0], ast.Dict):
            return self.compact(node)
        # what the operands call, before they are rewritten
        arg_helpers = [_helper(a) for a in node.args]
        elt_helpers = [_helper(e) for e in node.args[0].elts] \
            if node.args and isinstance(node.args[0], ast.Tuple) else []
        node = self.generic_visit(node)
        if fname is None:
            return node
        args = node.args
        if fname == "wfs_get_field" and len(args) == 2 and isinstance(args[1], ast.Constant) \
                and type(args[1].value) is str:
            return self.field(args[0], args[1].value)
        if fname == "wfs_get_fields" and len(args) == 2 and isinstance(args[1], ast.Tuple) \
                and all(isinstance(e, ast.Constant) and type(e.value) is str for e in args[1].elts):
            value = args[0]
            for key in args[1].elts:
                value = self.field(value, key.value)
            return value
        if fname == "js_boolean" and len(args) == 1:
            if arg_helpers[0] in _BOOL_HELPERS:
                return args[0]
            first, v = self.bind(args[0])
            return self.done(f"({self.par(first, v)} is True or ({v} is not False and {RT}.js_boolean({v})))")
        if fname in _COMPARE and len(args) == 2:
            return self.compare(_COMPARE[fname], args[0], args[1])
        if fname in ("wfs_eq", "wfs_ne") and len(args) == 2:
            return self.equal(fname, args[0], args[1])
        if fname == "wfs_contains" and len(args) == 2 and isinstance(args[1], ast.Constant) \
                and type(args[1].value) is str:
            return self.contains(args[0], args[1].value)
        if fname in ("wfs_all", "wfs_any") and len(args) == 1 and isinstance(args[0], ast.Tuple) \
                and all(h in _BOOL_HELPERS for h in elt_helpers):
            # every operand is a bool already: & and | evaluate them all, as the helpers do
            joiner = " & " if fname == "wfs_all" else " | "
            return self.done("(" + joiner.join(_src(e) for e in args[0].elts) + ")")
        if fname in ("wfs_truthy", "wfs_not") and len(args) == 1 and arg_helpers[0] in _BOOL_HELPERS:
            return self.done(_src(args[0]) if fname == "wfs_truthy" else f"(not {_src(args[0])})")
        return node

    def field(self, value: ast.AST, key: str) -> ast.Name:
        """``value.key`` (wfs_get_field)."""
        k = _const(key)
        if _is_name(value) and value.id == "item":
            return self.done(f"_get(item, {k}, _MISSING)")  # TypeError when the item is no object
        first, v = self.bind(value)
        return self.done(f"(_get({v}, {k}, _MISSING) if type({first}) is dict else {RT}.wfs_get_field({v}, {k}))")

    def contains(self, left: ast.AST, needle: str) -> ast.Name:
        """``left contains "needle"``: a case-insensitive substring test on a
        string; on a list, membership by SameValueZero, which for a string
        needle is ``==`` on elements that are exactly ``str``. Python's ``in``
        finds every such element; the first element it finds equal is checked
        to be a ``str`` (else the helper decides, element by element)."""
        first, a = self.bind(left)
        n = _const(needle)
        kind = self.temp()
        return self.done(
            f"({_const(needle.lower())} in {a}.lower() if ({kind} := type({first})) is str "
            f"else ({n} in {a} and (type({a}[{a}.index({n})]) is str or {RT}.wfs_contains({a}, {n}))) "
            f"if {kind} is list else {RT}.wfs_contains({a}, {n}))")

    def compare(self, op: str, left: ast.AST, right: ast.AST) -> ast.Name:
        a, test_a = self.number(left)
        b, test_b = self.number(right)
        if test_a is None and test_b is None:
            return self.done(f"({a} {op} {b})")
        if test_a is not None and test_b is not None:
            test = f"({test_a}, {test_b}) == (True, True)"  # both operands are evaluated, left first
        else:
            test = test_a or test_b
        slow_a = a if test_a is None else f"{RT}.to_number({a})"
        slow_b = b if test_b is None else f"{RT}.to_number({b})"
        return self.done(f"({a} {op} {b} if {test} else {slow_a} {op} {slow_b})")

    def equal(self, fname: str, left: ast.AST, right: ast.AST) -> ast.Name:
        negate = fname == "wfs_ne"
        if self.fixed(left) and not self.fixed(right):
            left, right = right, left  # == is symmetric, and a fixed operand can't raise
        value = _constant(right)
        if value is None or type(value) is bool:
            # null and booleans equal only themselves (numbers and strings never do)
            first, a = self.bind(left)
            return self.done(f"({self.par(first, a)} is {'not ' if negate else ''}{_const(value)})")
        first, a = self.bind(left)
        fast = "!=" if negate else "=="
        if type(value) is str:
            b = _const(value)
            test = f"type({first}) is str"
        elif type(value) in (int, float) and -_MAX_SAFE <= value <= _MAX_SAFE:
            b = _const(value)
            test = self.is_number(first, a)
        elif value is not _NOT_CONSTANT:
            return self.done(f"{RT}.{fname}({first}, {_src(right)})")
        elif _is_name(right) and right.id in self.invariant:
            b = right.id
            test = f"type({first}) is str and {self.hoist(f'type({b}) is str')}"
        else:
            first_b, b = self.bind(right)
            test = f"type({first}) is type({first_b}) is str"  # evaluates both operands
        return self.done(f"({a} {fast} {b} if {test} else {RT}.{fname}({a}, {b}))")

    def compact(self, node: ast.Call) -> ast.Name:
        """``compact({...})``: when no value is missing, the object as it is."""
        slow = ast.unparse(node)
        display = node.args[0]
        keys = [ast.unparse(k) for k in display.keys]
        checks = []
        values = []
        for value in display.values:
            never_missing = (isinstance(value, (ast.Constant, ast.Dict, ast.List))
                             or _helper(value) in _NEVER_MISSING_HELPERS
                             or (_is_name(value) and value.id == "index"))
            fast = _src(self.visit(value))
            if never_missing:
                values.append(fast)
            else:
                name = self.temp()
                checks.append(f"({name} := {fast}) is not _MISSING")
                values.append(name)
        obj = "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, values)) + "}"
        if not checks:
            return self.done(obj)
        return self.done(f"({obj} if {' and '.join(checks)} else {slow})")


_NOT_CONSTANT = object()
_WIDTH = 100  # generated lines are wrapped to about this many characters


def _comprehension_test(test: str) -> str:
    """``test`` fit for a comprehension's ``if`` clause, which takes no bare
    conditional expression, lambda or ``:=`` (``if a if c else b`` would
    read as two clauses): those get parentheses."""
    try:
        alone = ast.dump(ast.parse(test, mode="eval").body)
    except SyntaxError:
        return test
    try:
        ifs = ast.parse(f"[_ for _ in _ if {test}]", mode="eval").body.generators[0].ifs
        if len(ifs) == 1 and ast.dump(ifs[0]) == alone:
            return test
    except SyntaxError:
        pass
    return f"({test})"


def _wrap(line: str, indent: str) -> list[str]:
    """``line`` (a part of a comprehension: an element, ``for ...`` or
    ``if ...``), indented, over several lines when it is long: a conditional
    expression, a chain of ``and``/``or``/``&``/``|``, a call or an object
    display breaks inside its own parentheses, one piece per line. The
    wrapped text must parse to the same tree as the line, else the line
    stays whole."""
    if len(indent) + len(line) <= _WIDTH or line.startswith("for "):
        return [indent + line]
    keyword = "if " if line.startswith("if ") else ""
    if keyword and _comprehension_test(line[len(keyword):]) != line[len(keyword):]:
        return [indent + line]  # its parentheses are needed; wrapping would drop them
    lines = wrap_expression(line[len(keyword):], indent, keyword)
    # a piece printed alone loses its own parentheses: the test must still be one clause
    test = " ".join(x.strip() for x in lines)[len(keyword):]
    if keyword and _comprehension_test(test) != test:
        return [indent + line]
    return lines


def wrap_expression(source: str, indent: str, lead: str = "", tail: str = "") -> list[str]:
    """The lines of ``indent + lead + source + tail`` (``source`` a Python
    expression), broken inside its parentheses when longer than about 100
    columns. The wrapped text must parse to the same tree, else it stays one
    line."""
    if len(indent) + len(lead) + len(source) + len(tail) <= _WIDTH:
        return [indent + lead + source + tail]
    try:
        tree = ast.parse(source, mode="eval")
        lines = _Wrapper(source).wrap(tree.body, indent, lead, tail)
        joined = "\n".join(x.strip() for x in lines)
        same = ast.dump(ast.parse(joined[len(lead):len(joined) - len(tail)], mode="eval")) == ast.dump(tree)
    except (SyntaxError, RecursionError):
        return [indent + lead + source + tail]
    return lines if same else [indent + lead + source + tail]


_ATOMS = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant, ast.Dict, ast.List, ast.Tuple)
_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
        ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


class _Wrapper:
    """Breaks one long expression of generated code into lines. Pieces are
    printed as they were written (source segments), so parentheses stay
    as the generator put them, except those around a piece printed alone,
    which _needs_paren puts back."""

    def __init__(self, source: str) -> None:
        self.source = source

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    def wrap(self, node: ast.AST, indent: str, lead: str = "", tail: str = "", paren: bool = False) -> list[str]:
        """The lines of ``lead + node + tail``, broken inside brackets when too
        long; ``paren``: the node needs parentheses as an operand."""
        text = self.text(node)
        if paren:
            text = f"({text})"
        if len(indent) + len(lead) + len(text) + len(tail) <= _WIDTH:
            return [indent + lead + text + tail]
        inner = indent + "    "
        if isinstance(node, ast.IfExp):
            return [indent + lead + "(",
                    *self.wrap(node.body, inner, "", "", _needs_paren(node.body, ast.IfExp)),
                    *self.wrap(node.test, inner, "if ", "", _needs_paren(node.test, ast.IfExp)),
                    *self.wrap(node.orelse, inner, "else ", "", isinstance(node.orelse, (ast.Lambda, ast.NamedExpr))),
                    indent + ")" + tail]
        if isinstance(node, ast.BoolOp) or (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr))):
            if isinstance(node, ast.BoolOp):
                word = "and " if isinstance(node.op, ast.And) else "or "
                operands = node.values
                within: type = ast.BoolOp
            else:
                word = "& " if isinstance(node.op, ast.BitAnd) else "| "
                operands = _chain(node, type(node.op))
                within = ast.BinOp
            lines = [indent + lead + "("]
            for i, operand in enumerate(operands):
                lines += self.wrap(operand, inner, word if i else "", "", _needs_paren(operand, within))
            return lines + [indent + ")" + tail]
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            return self.wrap(node.value, indent, f"{lead}({node.target.id} := ", ")" + tail,
                             isinstance(node.value, (ast.Lambda, ast.NamedExpr)))
        if isinstance(node, ast.Compare) and all(type(op) in _OPS for op in node.ops):
            lines = [indent + lead + "("]
            lines += self.wrap(node.left, inner, "", "", _needs_paren(node.left, ast.Compare))
            for op, right in zip(node.ops, node.comparators):
                lines += self.wrap(right, inner, _OPS[type(op)] + " ", "", _needs_paren(right, ast.Compare))
            return lines + [indent + ")" + tail]
        if isinstance(node, ast.Call) and node.args and not node.keywords:
            lines = [indent + lead + self.text(node.func) + "("]
            for arg in node.args:
                lines += self.wrap(arg, inner, "", ",", isinstance(arg, ast.NamedExpr))
            return lines + [indent + ")" + tail]
        if isinstance(node, ast.Tuple) and node.elts:
            lines = [indent + lead + "("]
            for elt in node.elts:
                lines += self.wrap(elt, inner, "", ",", isinstance(elt, ast.NamedExpr))
            return lines + [indent + ")" + tail]
        if isinstance(node, ast.Dict) and None not in node.keys:
            lines = [indent + lead + "{"]
            for key, value in zip(node.keys, node.values):
                lines += self.wrap(value, inner, self.text(key) + ": ", ",", isinstance(value, ast.NamedExpr))
            return lines + [indent + "}" + tail]
        return [indent + lead + text + tail]




def _needs_paren(node: ast.AST, within: type) -> bool:
    """Does ``node``, printed alone, need parentheses as an operand of a
    ``within`` expression? (ast.unparse drops those its parent gave it.)"""
    if isinstance(node, (ast.NamedExpr, ast.Lambda, ast.IfExp)):
        return True
    if within is ast.IfExp:
        return False
    if within is ast.BoolOp:
        return isinstance(node, ast.BoolOp)
    return not isinstance(node, _ATOMS)  # | & and comparisons: anything but an atom


def _chain(node: ast.AST, op: type) -> list[ast.AST]:
    """The operands of ``a | b | c`` (left-nested BinOps of one operator)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, op):
        return _chain(node.left, op) + [node.right]
    return [node]


def _constant(node: ast.AST) -> Any:
    """The value of a constant operand (``5``, ``-5``, ``'x'``), else _NOT_CONSTANT."""
    if isinstance(node, ast.Constant):
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)):
        return -node.operand.value
    return _NOT_CONSTANT


def _runtime_to_number(value: Any) -> Any:
    from flowc.runtime import wfs

    return wfs.to_number(value)


def _is_boolean(expr: E.Expr) -> bool:
    """Does ``expr`` always evaluate to a Python bool? (WorkflowSkill
    operators all return booleans.)"""
    if isinstance(expr, (E.Binary, E.Unary)):
        return expr.op.startswith("wfs.")
    return isinstance(expr, E.Literal) and isinstance(expr.value, bool)


def _may_be_missing(expr: E.Expr) -> bool:
    """Can ``expr`` evaluate to MISSING (JavaScript undefined)?"""
    if isinstance(expr, (E.Literal, E.Binary, E.Unary, E.MapExpr, E.ListExpr)):
        return False
    if isinstance(expr, E.Template):
        return expr.typed_whole and any(_may_be_missing(p) for p in expr.parts)
    return True


class _Func:
    """One generated function: its lines, and the roots its expressions use
    where the function must bind them itself."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.state_roots: set[str] = set()
        self.missing_roots: set[str] = set()
        self.hoisted = 0  # loop-invariant values bound so far (_c0, _c1 ...)
        self.derived = 0  # values the fast paths derive from them (_h0, _h1 ...)
        self.temps = 0  # the fast paths' temporaries (_t0, _t1 ...)
        self.pending: list[tuple[str, str]] = []  # (name, source) to bind before the next loop

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def prologue(self) -> list[str]:
        out = [f"    {r} = ctx.{r}" for r in _STATE_ROOTS if r in self.state_roots]
        out += [f"    {r} = {RT}.MISSING" for r in _LOCAL_ROOTS if r in self.missing_roots]
        return out


# ----------------------------------------------------------------- generator

class _Generator:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.nodes: dict[str, Node] = {}
        self.out: list[str] = []
        self.fn_names: dict[str, str] = {}
        self.arms: dict[str, dict[str, list[str]]] = {}
        self.plan: dict = {}  # the sequential plan (_check): the module holds it, the arms come from it
        self.effects: set[str] = set()  # steps whose function is a generator (see _find_effects)

    # ---------------------------------------------------------------- checks
    def _check(self) -> None:
        wf = self.wf
        why_not = runs_under(wf, "sequential")
        if why_not is not None:
            raise BackendError(f"the sequential code generator: {why_not}")
        for index, node in enumerate(wf.nodes):
            if not isinstance(node.id, str):
                raise BackendError("a node id is not a string")
            if node.op not in _SUPPORTED_OPS or node.op not in OPERATIONS:
                raise BackendError(f"step {node.id!r}: operation {node.op!r} is not supported by the "
                                   "Python backend")
            self.nodes[node.id] = node
            if node.op != "end":
                self.fn_names[node.id] = _ident("_step", index, node.id)
        try:
            self.plan = build_plan(wf, NO_BODIES, "sequential")
        except PlanError as exc:
            raise BackendError(str(exc)) from None
        self.arms = plan_arms(self.plan)
        self._check_acyclic()
        # The steps whose function is a generator (a kernel task): those that
        # call the host or sleep. The others (transforms, exits, conditionals:
        # the scheduler runs a conditional's arm) stay plain functions, so
        # their loops run as plain Python.
        self.effects = {node.id for node in wf.nodes
                        if node.op == "call" or (node.iteration is not None and node.iteration.delay_ms > 0)}

    def _check_acyclic(self) -> None:
        """A step in its own arm would run its arm forever."""
        state: dict[str, int] = {}

        def visit(node_id: str) -> None:
            if state.get(node_id) == 2:
                return
            if state.get(node_id) == 1:
                raise BackendError(f"step {node_id!r} is part of a cycle")
            state[node_id] = 1
            for label in ("then", "else"):
                for target in self.arms.get(node_id, {}).get(label, []):
                    visit(target)
            state[node_id] = 2

        for node_id in self.nodes:
            visit(node_id)

    # ----------------------------------------------------------- expressions
    def _x(self, fn: _Func, expr: E.Expr, node: Node | None, scope: tuple[str, ...] = (),
           hoist: bool = False) -> str:
        """Python source of ``expr``; roots not in ``scope`` are bound by
        ``fn``'s prologue (run state, or MISSING). With ``hoist`` (a filter
        or map loop body), loop-invariant calls go to ``fn.pending``."""
        try:
            source = compile_expr(expr)
        except ExprCompileError as exc:
            where = f"step {node.id!r}" if node is not None else "the workflow outputs"
            raise BackendError(f"{where}: {exc}") from None
        tree = ast.parse(source, mode="eval")
        localize = _Localize()
        tree = localize.visit(tree)
        for name in ast.walk(tree):
            if isinstance(name, ast.Name) and name.id == ENV_NAME:
                raise BackendError("an expression reads its environment in an unexpected way")
        for root in localize.roots:
            if root in scope:
                continue
            if root in _STATE_ROOTS:
                fn.state_roots.add(root)
            else:
                fn.missing_roots.add(root)
        if hoist and not _invariant(tree.body):
            hoister = _Hoist(fn)
            tree = hoister.visit(tree)
            fn.pending.extend(hoister.bound)
        return ast.unparse(tree)

    def _test(self, fn: _Func, expr: E.Expr, truthiness: str, node: Node, scope: tuple[str, ...] = (),
              hoist: bool = False) -> str:
        helper = _TRUTHINESS.get(truthiness)
        if helper is None:
            raise BackendError(f"step {node.id!r}: truthiness {truthiness!r} is not supported")
        source = self._x(fn, expr, node, scope, hoist)
        if _is_boolean(expr):
            return source
        return f"{RT}.{helper}({source})"

    def _object(self, fn: _Func, expr: E.MapExpr, node: Node | None, scope: tuple[str, ...],
                hoist: bool = False) -> str:
        """A MapExpr as a dict display; keys whose value is missing are
        dropped (``_rt.compact``). Nested MapExprs recurse."""
        parts, missing = self._object_parts(fn, expr, node, scope, hoist)
        text = "{" + ", ".join(parts) + "}"
        return f"{RT}.compact({text})" if missing else text

    def _object_parts(self, fn: _Func, expr: E.MapExpr, node: Node | None, scope: tuple[str, ...],
                      hoist: bool = False) -> tuple[list[str], bool]:
        """The ``key: value`` sources of a MapExpr, and whether a value can
        be missing."""
        parts = []
        missing = False
        for entry in expr.entries:
            if not (isinstance(entry.key, E.Literal) and isinstance(entry.key.value, str)):
                raise BackendError("object keys must be constant strings")
            if isinstance(entry.value, E.MapExpr):
                value = self._object(fn, entry.value, node, scope, hoist)
            else:
                value = self._x(fn, entry.value, node, scope, hoist)
                missing = missing or _may_be_missing(entry.value)
            parts.append(f"{_const(entry.key.value)}: {value}")
        return parts, missing

    @staticmethod
    def _emit_dict(fn: _Func, depth: int, lead: str, parts: list[str], compact: bool = False) -> None:
        """``lead`` followed by a dict display (in ``_rt.compact(...)`` when
        ``compact``): on one line when it fits, else one entry per line."""
        opening, closing = (f"{RT}.compact({{", "})") if compact else ("{", "}")
        line = lead + opening + ", ".join(parts) + closing
        if len(parts) < 2 or len("    " * depth + line) <= 100:
            fn.emit(depth, line)
            return
        fn.emit(depth, lead + opening)
        for part in parts:
            fn.emit(depth + 1, part + ",")
        fn.emit(depth, closing)

    def _value(self, fn: _Func, expr: E.Expr, node: Node | None, scope: tuple[str, ...] = ()) -> str:
        if isinstance(expr, E.MapExpr):
            return self._object(fn, expr, node, scope)
        return self._x(fn, expr, node, scope)

    # ----------------------------------------------------------------- steps
    def _attr_str(self, node: Node, name: str, default: str | None = None) -> str:
        value = node.attr(name)
        if value is None and default is not None:
            return default
        if not (isinstance(value, E.Literal) and isinstance(value.value, str)):
            raise BackendError(f"step {node.id!r}: `{name}` must be a constant string")
        return value.value

    def _header(self, node: Node, what: str) -> None:
        line = node.span.line if node.span.known else "?"
        self.out.append("")
        self.out.append("")
        self.out.append(pysource.comment(f"step {node.id} ({what}), source line {line}", 200))
        if node.description:
            self.out.append(pysource.comment(node.description))

    def _function(self, name: str, fn: _Func, step: str | None = None) -> None:
        self.out.append(f"def {name}(ctx):")
        if step is not None:
            # the step a run out of fuel names in its error, as the VM does
            self.out.append(f"    ctx.begin({_const(step)})")
        self.out.extend(fn.prologue())
        self.out.extend(fn.lines)

    def _args(self, fn: _Func, node: Node, scope: tuple[str, ...]) -> list[str]:
        parts = []
        for binding in node.inputs:
            if binding.value is None:
                continue  # no value: the key is left out
            parts.append(f"{_const(binding.name)}: {self._value(fn, binding.value, node, scope)}")
        return parts

    def _mapping(self, fn: _Func, node: Node, raw: str, scope: tuple[str, ...]) -> list[str]:
        """The entries of the step output built from the raw result ``raw``
        (an object of the declared outputs)."""
        parts = []
        for binding in node.outputs:
            if binding.value is None:
                parts.append(f"{_const(binding.name)}: {RT}.key_or_null({raw}, {_const(binding.name)})")
            else:
                parts.append(f"{_const(binding.name)}: "
                             f"{self._value(fn, binding.value, node, scope + ('result',))}")
        return parts

    def _dispatch(self, fn: _Func, node: Node, depth: int, scope: tuple[str, ...]) -> None:
        """Emit the lines that compute the step's ``output`` from its inputs,
        then check it against the declared output types."""
        uses_result = any(b.value is not None for b in node.outputs)
        raw = "result" if uses_result else "output"
        self._emit_dict(fn, depth, "args = ", self._args(fn, node, scope))
        if node.op == "call":
            capability = self._attr_str(node, "capability")
            name = self._attr_str(node, "name")
            call = f"ctx.call({_const(capability)}, {_const(name)}, args"
            if node.retry is not None:
                r = node.retry
                call += f", retry=({_const(int(r.max_retries))}, {_const(int(r.delay_ms))}, " \
                        f"{_const(float(r.backoff))})"
            fn.emit(depth, f"{raw} = yield from {call})")
        else:
            fn.emit(depth, f"items = {RT}.transform_items(args)")
            key = node.outputs[0].name if node.outputs else "items"
            lines = self._transform(fn, node, scope)
            fast = self._fast(fn, lines) if lines[0] == "[" else None
            for name, source in fn.pending:
                fn.emit(depth, f"{name} = {source}  # the same for every item")
            fn.pending.clear()
            lead = f"{raw} = {{{_const(key)}: "
            if fast is None:
                self._emit_result(fn, depth, lead, lines)
            else:
                fn.emit(depth, "try:  # the fast path: every item an object, plain numbers and strings")
                self._emit_result(fn, depth + 1, lead, fast)
                # Only what the general path turns into the step's error (an item
                # that is no object: TypeError; a helper's EvalError ...) sends it
                # there; anything else is a bug of the fast path and surfaces.
                fn.emit(depth, f"except {RT}.STEP_ERRORS:  # a case the fast path does not cover: "
                               "the general path decides")
                self._emit_result(fn, depth + 1, lead, lines)
        if uses_result:
            self._emit_dict(fn, depth, "output = ", self._mapping(fn, node, raw, scope), compact=True)
        declared = []
        for i, binding in enumerate(node.outputs):
            kind = _TYPE_NAMES.get(binding.type.kind)
            # a transform's first output holds its result array by definition
            if kind is None or (i == 0 and node.op != "call" and binding.value is None):
                continue
            declared.append(_tuple([_const(binding.name), _const(kind)]))
        if declared:
            fn.emit(depth, f"{RT}.check_output({_const(node.id)}, output, {_tuple(declared)})")

    @staticmethod
    def _emit_result(fn: _Func, depth: int, lead: str, lines: list[str]) -> None:
        if len(lines) == 1 or len("    " * depth + lead + " ".join(lines) + "}") <= 100:
            fn.emit(depth, lead + " ".join(lines) + "}")
        else:
            fn.emit(depth, lead + "[")
            for line in lines[1:-1]:
                fn.lines.extend(_wrap(line, "    " * (depth + 1)))
            fn.emit(depth, "]}")

    @staticmethod
    def _fast(fn: _Func, lines: list[str]) -> list[str] | None:
        """The fast form of a filter/map comprehension (see _Fast), or None
        when it would be the same."""
        tree = ast.parse(" ".join(lines), mode="eval")
        comp = tree.body
        if not (isinstance(comp, ast.ListComp) and len(comp.generators) == 1):
            return None
        fast = _Fast(fn, {name for name, _ in fn.pending})
        gen = comp.generators[0]
        elt = fast.visit(comp.elt)
        ifs = [fast.visit(test) for test in gen.ifs]
        if not fast.changed:
            return None
        return ["[", _src(elt), f"for {ast.unparse(gen.target)} in {ast.unparse(gen.iter)}",
                *(f"if {_comprehension_test(_src(test))}" for test in ifs), "]"]

    def _transform(self, fn: _Func, node: Node, scope: tuple[str, ...]) -> list[str]:
        """The transform's result array: one expression, or (for a list
        comprehension) ``["[", <parts of the comprehension>..., "]"]``."""
        op = node.op
        if op == "transform.sort":
            field = self._attr_str(node, "field")
            direction = self._attr_str(node, "direction", "asc")
            if direction not in ("asc", "desc"):
                raise BackendError(f"step {node.id!r}: sort direction {direction!r}")
            path = _tuple([_const(part) for part in field.split(".")])
            desc = ", descending=True" if direction == "desc" else ""
            return [f"{RT}.wfs_sort(items, {path}{desc})"]
        inner = scope + ("item", "index")
        if op == "transform.filter":
            where = node.attr("where")
            if where is None:
                raise BackendError(f"step {node.id!r}: a filter needs `where`")
            truthiness = self._attr_str(node, "truthiness", "js_boolean")
            test = self._test(fn, where, truthiness, node, inner, hoist=True)
            return ["[", f"item {self._loop_vars(where)}", f"if {test}", "]"]
        expression = node.attr("expression")
        if not isinstance(expression, E.MapExpr):
            raise BackendError(f"step {node.id!r}: a map needs an `expression` object")
        parts, missing = self._object_parts(fn, expression, node, inner, hoist=True)
        body = _Func()
        self._emit_dict(body, 0, "", parts, compact=missing)
        return ["[", *body.lines, self._loop_vars(expression), "]"]

    @staticmethod
    def _loop_vars(expr: E.Expr) -> str:
        uses_index = any(ref.root == "index" for ref in _refs(expr))
        # ctx.charge: one iteration of fuel per item, as the VM's loop charges
        return ("for index, item in enumerate(ctx.charge(items))" if uses_index
                else "for item in ctx.charge(items)")

    def _guard(self, fn: _Func, node: Node, depth: int) -> None:
        if node.guard is None:
            return
        test = self._test(fn, node.guard.expr, node.guard.truthiness, node)
        fn.emit(depth, f"if not {test}:")
        fn.emit(depth + 1, f"return ctx.skip({_const(node.id)})")

    def _fail(self, node: Node, error: str, output: str | None = None) -> str:
        extra = ", ignore=True" if node.on_error.action == "ignore" else ""
        if output is not None:
            extra += f", output={output}"
        return f"return ctx.fail({_const(node.id)}, {error}{extra})"

    def _step(self, node: Node) -> None:
        fn = _Func()
        sid = _const(node.id)
        if node.op == "branch":
            self._header(node, "conditional")
            self._branch(fn, node)
        elif node.op == "exit":
            self._header(node, "exit")
            status = self._attr_str(node, "status")
            if status not in ("success", "failed"):
                raise BackendError(f"step {node.id!r}: exit status {status!r}")
            output = node.attr("output")
            fn.emit(1, "try:")
            self._guard(fn, node, 2)
            if isinstance(output, E.MapExpr):
                parts, missing = self._object_parts(fn, output, node, ())
                self._emit_dict(fn, 2, "output = ", parts, compact=missing)
            else:
                fn.emit(2, f"output = {self._value(fn, output, node) if output is not None else 'None'}")
            fn.emit(1, f"except {RT}.STEP_ERRORS as exc:")
            fn.emit(2, self._fail(node, "exc"))
            fn.emit(1, f"return ctx.exit({sid}, {_const(status)}, output)")
        elif node.iteration is not None:
            self._header(node, self._what(node) + ", each")
            it = node.iteration
            fn.emit(1, "try:")
            self._guard(fn, node, 2)
            fn.emit(2, f"over = {RT}.each_items({self._x(fn, it.over, node)})")
            fn.emit(1, f"except {RT}.STEP_ERRORS as exc:")
            fn.emit(2, self._fail(node, "exc"))
            fn.emit(1, "outputs = []")
            fn.emit(1, "error = None")
            body = _Func()
            scope = ("item", "index")
            self._dispatch(body, node, 3, scope)
            body.emit(3, "outputs.append(output)")
            uses_index = it.delay_ms > 0 or any(
                ref.root == "index" for b in (*node.inputs, *node.outputs) if b.value is not None
                for ref in _refs(b.value))
            # ctx.each: one iteration of fuel as each item starts, as the VM's NEXT
            loop = "for index, item in enumerate(ctx.each(over)):" if uses_index else "for item in ctx.each(over):"
            fn.emit(1, loop)
            fn.emit(2, "try:")
            if it.delay_ms > 0:
                fn.emit(3, "if index:")
                fn.emit(4, f"yield from ctx.sleep({_const(int(it.delay_ms))})  # between iterations")
            fn.lines.extend(body.lines)
            fn.state_roots |= body.state_roots
            fn.missing_roots |= body.missing_roots
            fn.emit(2, f"except {RT}.STEP_ERRORS as exc:")
            fn.emit(3, "error = exc")
            fn.emit(3, "outputs.append(None)")
            fn.emit(1, "if error is not None:")
            fn.emit(2, self._fail(node, "error", "outputs"))
            fn.emit(1, f"return ctx.done({sid}, outputs)")
        else:
            self._header(node, self._what(node))
            fn.emit(1, "try:")
            self._guard(fn, node, 2)
            self._dispatch(fn, node, 2, ())
            fn.emit(1, f"except {RT}.STEP_ERRORS as exc:")
            fn.emit(2, self._fail(node, "exc"))
            fn.emit(1, f"return ctx.done({sid}, output)")
        self._function(self.fn_names[node.id], fn, node.id)

    def _what(self, node: Node) -> str:
        if node.op == "call":
            return f"{self._attr_str(node, 'capability')} {self._attr_str(node, 'name')}"
        return node.op

    def _branch(self, fn: _Func, node: Node) -> None:
        sid = _const(node.id)
        condition = node.attr("condition")
        if condition is None:
            raise BackendError(f"step {node.id!r}: a branch needs a condition")
        truthiness = self._attr_str(node, "truthiness", "js_boolean")
        fn.emit(1, "try:")
        self._guard(fn, node, 2)
        fn.emit(2, f"test = {self._test(fn, condition, truthiness, node)}")
        fn.emit(1, f"except {RT}.STEP_ERRORS as exc:")
        fn.emit(2, self._fail(node, "exc"))
        # the scheduler runs the chosen arm: the plan's branch edges so labelled
        fn.emit(1, f"return ctx.branch({sid}, {_const('then')} if test else {_const('else')})")

    # ------------------------------------------------------------- the module
    def _plan(self) -> None:
        """``PLAN``: the sequential plan the scheduler walks, a node or an
        edge a line (the name is the module's ``WORKFLOW``)."""
        out = self.out
        out.append("")
        out.append("# the sequential plan (flowc.plan): the run walks its sequence edges from the entry")
        out.append("PLAN = {")
        for key, value in self.plan.items():
            if key == "name":
                out.append(f"    {_const(key)}: WORKFLOW,")
            elif isinstance(value, list) and value:
                out.append(f"    {_const(key)}: [")
                for item in value:
                    if isinstance(item, dict):
                        parts = [f"{_const(k)}: {_data(v)}" for k, v in item.items()]
                        out.extend(_filled(parts, "        {", "         ", "},"))
                    elif isinstance(item, list):
                        out.extend(_filled([_data(v) for v in item], "        [", "         ", "],"))
                    else:
                        out.append(f"        {_data(item)},")
                out.append("    ],")
            else:
                out.append(f"    {_const(key)}: {_data(value)},")
        out.append("}")

    def _steps(self) -> None:
        """``STEPS``: each step's function, and whether it is a generator
        (the scheduler ``yield from``s those and calls the others)."""
        self.out.append("")
        self.out.append("")
        self.out.append("# each step's function by id, and whether it is a generator (it calls the host or sleeps)")
        rows = [f"    {_const(node_id)}: ({name}, {node_id in self.effects})," for node_id, name in self.fn_names.items()]
        self.out.extend(["STEPS = {", *rows, "}"] if rows else ["STEPS = {}"])

    def _end(self) -> None:
        wf = self.wf
        terminal = self.nodes.get(wf.terminal) if wf.terminal else None
        line = terminal.span.line if terminal is not None and terminal.span.known else "?"
        self.out.append("")
        self.out.append("")
        self.out.append(f"# the workflow outputs, source line {line}")
        fn = _Func()
        if not wf.outputs:
            fn.emit(1, "return {}")
        else:
            fn.emit(1, "if ctx.exited:")
            fn.emit(2, f"return {RT}.exit_outputs(OUTPUT_KEYS, ctx.exit_output)")
            if any(b.value is not None for b in wf.outputs):
                parts = []
                for binding in wf.outputs:
                    if binding.value is None:
                        value = f"{RT}.key_or_null(ctx.last, {_const(binding.name)})"
                    else:
                        value = self._value(fn, binding.value, None)
                    parts.append(f"{_const(binding.name)}: {value}")
                self._emit_dict(fn, 1, "return ", parts, compact=True)
            else:
                fn.emit(1, f"return {RT}.match_outputs(OUTPUT_KEYS, ctx.last)")
        self._function("_end", fn)

    def generate(self) -> str:
        """The module's text: its constants, the plan and the steps, then the
        entry points."""
        self._prologue()
        self._plan()
        for node in self.wf.nodes:
            if node.op == "end":
                continue
            self._step(node)
        self._steps()
        self._end()
        self._entry_points()
        return "\n".join(self.out)

    def _prologue(self) -> None:
        """The header, the docstring, the import of the runtime and the
        workflow's constants."""
        self._check()
        wf = self.wf
        step_ids = [n.id for n in wf.nodes if n.op != "end"]
        branch_targets = {t for arms in self.arms.values() for ts in arms.values() for t in ts}
        branch_ids = [i for i in step_ids if i in branch_targets]
        defaults = {}
        for param in wf.inputs:
            if not isinstance(param.name, str):
                raise BackendError("an input name is not a string")
            if param.has_default:
                defaults[param.name] = param.default
        out = self.out
        out.extend(pysource.header(wf.span.file, wf.dialect))
        out.append('"""A workflow compiled by flowc.')
        out.append("")
        out.append("``run(inputs, host)`` runs it and returns the run record (see flowc's")
        out.append("docs/host.md); ``run_async`` and ``run_virtual`` run it with the asyncio and")
        out.append("virtual-time drivers (docs/runtime.md). Run from a shell with a scripted host:")
        out.append("``python <this file> --inputs in.json --host script.json``.")
        out.append('"""')
        out.append("")
        out.append(f"from flowc.runtime import sequence_run as {RT}")
        out.append("")
        out.append(f"_MISSING = {RT}.MISSING")
        out.append("_get = dict.get  # raises TypeError for anything but an object")
        out.append(f"WORKFLOW = {_const(wf.name)}")
        out.append(f"INPUT_DEFAULTS = {_data(defaults)}")
        types = [_tuple([_const(p.name), _const(_TYPE_NAMES[p.type.kind])])
                 for p in wf.inputs if p.type.kind in _TYPE_NAMES]
        out.append(f"INPUT_TYPES = {_tuple(types) if types else '()'}")
        out.append("# every step in declaration order; those not run are recorded as skipped")
        out.append(f"STEP_IDS = {_tuple([_const(i) for i in step_ids]) if step_ids else '()'}")
        out.append("# the steps only a conditional runs")
        out.append(f"BRANCH_STEP_IDS = {_tuple([_const(i) for i in branch_ids]) if branch_ids else '()'}")
        keys = [b.name for b in wf.outputs]
        out.append(f"OUTPUT_KEYS = {_tuple([_const(k) for k in keys]) if keys else '()'}")

    def _entry_points(self) -> None:
        """new_run, run, run_async, run_virtual and the command line."""
        out = self.out
        out.append("")
        out.append("")
        out.append("def new_run(inputs, max_iterations=None, max_host_calls=None):")
        out.append('    """The run on the sans-I/O kernel, not started: a driver (or a caller by hand)')
        out.append('    answers its requests. ``record()`` is the run record once it has finished."""')
        out.append(f"    ctx = {RT}.Run(None, inputs, INPUT_DEFAULTS, STEP_IDS, BRANCH_STEP_IDS, max_iterations,")
        out.append("                  max_host_calls)")
        out.append(f"    return {RT}.SkillRun(ctx, INPUT_TYPES, PLAN, STEPS, _end)")
        out.append("")
        out.append("")
        out.append("def run(inputs, host, max_iterations=None, max_host_calls=None):")
        out.append('    """Run the workflow with ``inputs`` (a dict) against ``host``; return the run record.')
        out.append("    A run that exceeds ``max_iterations`` loop iterations or ``max_host_calls`` host")
        out.append('    calls (retries included) fails with "fuel exhausted" (defaults: see docs/host.md)."""')
        out.append(f"    return {RT}.drive_sync(new_run(inputs, max_iterations, max_host_calls), host)")
        out.append("")
        out.append("")
        out.append("def run_async(inputs, host, max_iterations=None, max_host_calls=None):")
        out.append('    """A coroutine: the run record, driven by asyncio (``host.call`` and ``host.sleep``')
        out.append('    may be coroutines); the steps still run one after another."""')
        out.append(f"    return {RT}.drive_async(new_run(inputs, max_iterations, max_host_calls), host)")
        out.append("")
        out.append("")
        out.append("def run_virtual(inputs, script, max_iterations=None, max_host_calls=None):")
        out.append('    """The run record on a virtual clock (``script``: see flowc.runtime.drivers.VirtualHost);')
        out.append('    its steps carry ``start_ms``/``end_ms``."""')
        out.append(f"    return {RT}.drive_virtual(new_run(inputs, max_iterations, max_host_calls), script)")
        out.append("")
        out.append("")
        out.append('if __name__ == "__main__":')
        out.append("    from flowc.hosts.runner import module_main")
        out.append("    raise SystemExit(module_main(run))")
        out.append("")

def _refs(expr: E.Expr):
    for node in E.walk(expr):
        if isinstance(node, E.Ref):
            yield node


def generate(workflow: Workflow) -> str:
    """The Python module source for ``workflow`` (checked IR)."""
    try:
        return _Generator(workflow).generate()
    except RecursionError:
        raise BackendError("the workflow nests too deeply to compile") from None
