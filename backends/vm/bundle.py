"""One file a device needs to load, verify and run flowc programs.

``build_bundle()`` starts at the device entry (:mod:`flowc.backends.vm.device`),
follows the module-level imports of flowc modules to their closure, checks
that every module of it is device-safe (MicroPython: no typing, no attrs,
no third-party import without a fallback) and writes the modules into one
source file, dependencies first:

- the ``try: from flowc... import ... / except ImportError: import ...``
  blocks that let a module run side by side on a device are dropped; a
  module alias's attributes (``_c.to_json``) and imported names become the
  flat names they stand for;
- a top-level name bound by two modules is renamed in every module but the
  entry (``Program`` of plan_vm.py becomes ``Program_plan_vm``), as is a name
  one module binds and another uses as a builtin; only identical plain
  imports (``import math``) are shared;
- a bundle of some scheduling models only (``models``: the one model of a
  dialect, ``flowc bundle --dialect``) keeps only their rows of the tables
  a module keys by model (those its ``BY_MODEL`` names);
- a top-level definition no code reaches is dropped: what the entry's
  ``load`` and ``__all__``, the host API (:data:`HOST_API`) and the
  statements that must run at import read, transitively across the
  modules, is kept; the flowc imports no kept code reads go, and the
  modules nothing needs then (a bundle of one model holds no other
  model's schedulers, expression builtins or VM);
- a small bundle (``small``, ``flowc bundle --small``) keeps no row of the
  tables of optional parts (those a module's ``BY_FEATURE`` names: the
  compiled filter/map loops of WorkflowSkill's steps), so the code only
  they reach goes too;
- names get short where no code can tell: top-level names no host reads
  (not classes), locals, a method's ``self`` and the parameters of private
  functions no call passes by keyword (``minify=False`` keeps them);
- docstrings, comments and ``__all__`` go (the source is rebuilt from its
  syntax tree), a block is indented by one space, a space is left only
  between two words and simple statements share lines;
- an import of a flowc module inside a function (a CPython convenience:
  the asyncio driver, the command line) becomes ``raise ImportError``, and
  what follows it in that function goes where nothing else needs it (it
  never runs).

The same tree always gives the same bytes (on one Python version: the text
is ``ast.unparse``'s). See docs/embedding.md.
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import itertools
import keyword
import string
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["DEVICE_STDLIB", "ENTRY", "HOST_API", "Bundle", "BundleError", "build_bundle", "closure", "entry_of",
           "models_of", "write_bundle"]

ENTRY = "flowc.backends.vm.device"   # every bundle starts there: each model is a row of its LOADERS
# The name of a module's tuple that names its tables keyed by scheduling
# model: a bundle of some models keeps only their rows.
BY_MODEL = "BY_MODEL"
# The name of a module's tuple that names its tables of optional parts (a
# speed-up a device can do without): a small bundle keeps none of their rows.
BY_FEATURE = "BY_FEATURE"
# What a host may use besides the entry's load and __all__ (docs/embedding.md):
# kept wherever a module of the bundle defines them, and never renamed.
HOST_API = ("VMError", "VerifyError", "unpackb", "copy_json", "to_json", "to_json_text", "json_dumps")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# Standard modules a MicroPython build provides (a module may import others
# only under a try with an ImportError fallback).
DEVICE_STDLIB = frozenset({"array", "binascii", "collections", "errno", "gc", "io", "json", "math", "re",
                           "struct", "sys", "time"})


class BundleError(Exception):
    """The closure cannot be bundled (a module is not device-safe, or a
    construct the flattening cannot rewrite)."""


@dataclass
class Module:
    """One module of the closure, as read and analysed."""

    name: str                        # dotted, e.g. flowc.runtime.cel
    path: Path
    tree: ast.Module
    deps: list[str] = field(default_factory=list)            # closure modules it imports, in source order
    aliases: dict[str, str] = field(default_factory=dict)    # local alias -> module
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)   # local name -> (module, name)
    bindings: dict[str, str] = field(default_factory=dict)   # top-level name -> how it is bound
    free: set[str] = field(default_factory=set)              # names it reads as builtins
    dropped: list[str] = field(default_factory=list)         # top-level names no code reaches, in source order

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


@dataclass
class Bundle:
    """The bundle's text and what it came from."""

    text: str
    modules: list[str]               # dotted names, dependencies first, the entry last
    renamed: dict[str, dict[str, str]]   # module -> {name: new name}
    source_bytes: int                # raw size of the modules' files
    parts: list[tuple[str, int, int]]    # (module, raw bytes, bytes in the bundle)
    dropped: dict[str, list[str]] = field(default_factory=dict)   # module -> top-level names no code reaches

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


# ------------------------------------------------------------------ reading


def _module_path(name: str) -> Path:
    parts = name.split(".")
    base = PACKAGE_ROOT.joinpath(*parts[1:])
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        raise BundleError(f"{name} is a package: the device side imports modules only")
    raise BundleError(f"{name}: no such module")


def _flowc_imports(stmt: ast.stmt) -> list[tuple[str, str | None, str]]:
    """(module, attribute or None, local name) for each flowc module or name
    ``stmt`` imports; [] when it imports nothing of flowc."""
    out: list[tuple[str, str | None, str]] = []
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            if a.name == "flowc" or a.name.startswith("flowc."):
                if a.asname is None:
                    raise BundleError(f"`import {a.name}` needs an alias (`as`) to be flattened")
                out.append((a.name, None, a.asname))
    elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module and \
            (stmt.module == "flowc" or stmt.module.startswith("flowc.")):
        for a in stmt.names:
            local = a.asname or a.name
            sub = stmt.module + "." + a.name
            if _is_module(sub):
                out.append((sub, None, local))
            else:
                out.append((stmt.module, a.name, local))
    return out


def _is_module(name: str) -> bool:
    base = PACKAGE_ROOT.joinpath(*name.split(".")[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _is_import(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Import, ast.ImportFrom))


def _handles_import_error(node: ast.Try) -> bool:
    for h in node.handlers:
        names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if h.type is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "Exception") for n in names):
            return True
    return False


def _read(name: str, models: tuple[str, ...] | None = None, small: bool = False) -> Module:
    path = _module_path(name)
    mod = Module(name, path, _parse(path, models, small))
    _scan_imports(mod, mod.tree.body, guarded=False)
    return mod


def _parse(path: Path, models: tuple[str, ...] | None, small: bool = False) -> ast.Module:
    """The module's syntax tree; with ``models``, its tables keyed by model
    keep only their rows; ``small``: its tables of optional parts keep none
    (see :func:`_keep_rows`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    if models is not None:
        _keep_rows(tree, BY_MODEL, models)
    if small:
        _keep_rows(tree, BY_FEATURE, ())
    return tree


def _named_tables(tree: ast.Module, marker: str) -> set[str]:
    """The names the module's tuple ``marker`` lists (``BY_MODEL``: its
    tables keyed by model; ``BY_FEATURE``: its tables of optional parts)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [marker]:
            if not isinstance(stmt.value, ast.Tuple) or not all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.value.elts):
                raise BundleError(f"line {stmt.lineno}: {marker} must be a tuple of table names")
            return {e.value for e in stmt.value.elts}   # type: ignore[attr-defined]
    return set()


def _keep_rows(tree: ast.Module, marker: str, keys: tuple[str, ...]) -> None:
    """Drop the rows but those of ``keys`` from the tables ``marker`` names
    (module-level dicts whose keys are string constants), then the flowc
    imports no code of the module uses any more."""
    tables = _named_tables(tree, marker)
    found = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                getattr(stmt.targets[0], "id", None) in tables:
            table = stmt.value
            if not isinstance(table, ast.Dict) or not all(
                    isinstance(k, ast.Constant) and isinstance(k.value, str) for k in table.keys):
                raise BundleError(f"line {stmt.lineno}: a table {marker} names must be a dict of string keys")
            rows = [(k, v) for k, v in zip(table.keys, table.values) if k.value in keys]  # type: ignore[union-attr]
            table.keys, table.values = [k for k, _ in rows], [v for _, v in rows]
            found.add(stmt.targets[0].id)   # type: ignore[attr-defined]
    if found != tables:
        raise BundleError(f"{marker} names tables that are not there: {', '.join(sorted(tables - found))}")
    if tables:
        _drop_unused_imports(tree)


def _exported(tree: ast.Module) -> set[str] | None:
    """The names of the module's ``__all__``; None without one."""
    for stmt in tree.body:
        if _is_dunder_all(stmt) and isinstance(stmt.value, (ast.List, ast.Tuple)):   # type: ignore[attr-defined]
            return {e.value for e in stmt.value.elts if isinstance(e, ast.Constant)}   # type: ignore[attr-defined]
    return None


def _drop_unused_imports(tree: ast.Module, reexported: set[str] | frozenset[str] = frozenset()) -> None:
    """Drop the names of the module's flowc import blocks that no code reads
    (and no other module reads through it: ``reexported``)."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | reexported
    body = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Try) and any(_flowc_imports(s) for s in stmt.body):
            stmt.body = _used_imports(stmt.body, used)
            stmt.handlers[0].body = _used_imports(stmt.handlers[0].body, used)
            if not stmt.body:
                continue
        body.append(stmt)
    tree.body = body


def _used_imports(stmts: list[ast.stmt], used: set[str]) -> list[ast.stmt]:
    out = []
    for stmt in stmts:
        stmt.names = [a for a in stmt.names  # type: ignore[attr-defined]
                      if (a.asname or a.name.split(".")[0]) in used]
        if stmt.names:   # type: ignore[attr-defined]
            out.append(stmt)
    return out


def _scan_imports(mod: Module, body: list[ast.stmt], guarded: bool) -> None:
    """Record the module-level imports of ``body`` (also in if/try blocks);
    fail on an unguarded import a device does not have."""
    for stmt in body:
        if isinstance(stmt, ast.Try):
            if any(_flowc_imports(s) for s in stmt.body):
                _check_fallback_block(mod, stmt)
                for s in stmt.body:
                    for target, attr, local in _flowc_imports(s):
                        _bind_import(mod, target, attr, local)
                continue
            _scan_imports(mod, stmt.body, guarded or _handles_import_error(stmt))
            for h in stmt.handlers:
                _scan_imports(mod, h.body, guarded)
            _scan_imports(mod, stmt.orelse + stmt.finalbody, guarded)
        elif isinstance(stmt, ast.If):
            _scan_imports(mod, stmt.body + stmt.orelse, guarded)
        elif _is_import(stmt):
            found = _flowc_imports(stmt)
            for target, attr, local in found:
                _bind_import(mod, target, attr, local)
            if not found and not guarded:
                _check_device_import(mod, stmt)


def _check_fallback_block(mod: Module, stmt: ast.Try) -> None:
    """A try block that imports flowc modules holds imports only, and its
    ImportError fallback binds the same names."""
    if not all(_is_import(s) for s in stmt.body) or stmt.orelse or stmt.finalbody or len(stmt.handlers) != 1:
        raise BundleError(f"{mod.name}:{stmt.lineno}: a try block importing flowc modules must hold imports only")
    handler = stmt.handlers[0]
    if not all(_is_import(s) for s in handler.body):
        raise BundleError(f"{mod.name}:{handler.lineno}: the ImportError fallback must hold imports only")

    def bound(stmts: list[ast.stmt]) -> set[str]:
        return {a.asname or a.name.split(".")[0] for s in stmts for a in s.names}  # type: ignore[attr-defined]

    if bound(stmt.body) != bound(handler.body):
        raise BundleError(f"{mod.name}:{stmt.lineno}: the fallback imports bind other names than the flowc imports")


def _bind_import(mod: Module, target: str, attr: str | None, local: str) -> None:
    if target not in mod.deps:
        mod.deps.append(target)
    if attr is None:
        mod.aliases[local] = target
    else:
        mod.imported[local] = (target, attr)


def _check_device_import(mod: Module, stmt: ast.Import | ast.ImportFrom) -> None:
    names = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else [stmt.module or ""]
    for n in names:
        if n.split(".")[0] not in DEVICE_STDLIB:
            raise BundleError(f"{mod.name}:{stmt.lineno}: imports {n} unconditionally: not device-safe "
                              "(MicroPython has no such module; import it under try/except ImportError)")


def closure(entry: str = ENTRY, models: tuple[str, ...] | None = None, small: bool = False) -> list[Module]:
    """The modules the entry needs, dependencies first (the entry last),
    each with only the top-level definitions some code reaches
    (:func:`_live_closure`); for ``models`` only, when given, with only
    their rows of the tables keyed by model; ``small``: without the
    optional parts (the rows of the tables ``BY_FEATURE`` names)."""
    return _live_closure(_import_closure(entry, models, small), entry)


def _import_closure(entry: str, models: tuple[str, ...] | None, small: bool = False) -> list[Module]:
    """The modules the entry imports, transitively, dependencies first."""
    modules: dict[str, Module] = {}
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, chain: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            raise BundleError("import cycle: " + " -> ".join([*chain, name]))
        state[name] = "open"
        mod = modules[name] = _read(name, models, small)
        for dep in mod.deps:
            visit(dep, [*chain, name])
        state[name] = "done"
        order.append(name)

    visit(entry, [])
    return [modules[n] for n in order]


# ------------------------------------------------------------------ what a bundle keeps

# Builtins whose call at import only builds a value (no side effect a later
# statement could depend on).
_PURE_CALLS = frozenset({"float", "int", "str", "bytes", "bytearray", "tuple", "list", "dict", "set", "frozenset",
                         "type", "object", "range", "len", "chr", "ord"})


def _is_pure(node: ast.AST, factories: frozenset[str] = frozenset()) -> bool:
    """Whether evaluating ``node`` at import only computes a value: dropping
    its statement, when no code reads the name it binds, changes nothing.
    A call of one of ``factories`` (see :func:`_factories`) computes one."""
    def pure(sub: ast.AST) -> bool:
        return _is_pure(sub, factories)

    if isinstance(node, (ast.Constant, ast.Name, ast.Lambda)):
        return True
    if isinstance(node, ast.Attribute):
        return pure(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(pure(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or pure(k) for k in node.keys) and all(pure(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return pure(node.left) and pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return pure(node.operand)
    if isinstance(node, (ast.BoolOp, ast.Compare)):
        return all(pure(e) for e in ast.iter_child_nodes(node) if isinstance(e, ast.expr))
    if isinstance(node, ast.IfExp):
        return pure(node.test) and pure(node.body) and pure(node.orelse)
    if isinstance(node, ast.Subscript):
        return pure(node.value) and pure(node.slice)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and (node.func.id in _PURE_CALLS or node.func.id in factories) \
            and not node.keywords and all(pure(a) for a in node.args)
    return False


def _factories(tree: ast.Module) -> frozenset[str]:
    """The module's top-level functions whose call only makes a value: a
    body (its docstring aside) of undecorated functions with plain
    defaults and a ``return`` of a plain value (``_text_field("id")``
    returns a closure). A name the module binds twice is none."""
    counts: dict[str, int] = {}
    for stmt in tree.body:
        for name in _Binder().scan([stmt]).local:
            counts[name] = counts.get(name, 0) + 1
    out = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list and counts.get(stmt.name) == 1:
            body = stmt.body[1:] if ast.get_docstring(stmt) is not None else stmt.body
            *defs, last = body or [ast.Pass()]
            if isinstance(last, ast.Return) and (last.value is None or _is_pure(last.value)) and all(
                    isinstance(d, ast.FunctionDef) and not d.decorator_list
                    and all(_is_pure(v) for v in [*d.args.defaults, *d.args.kw_defaults] if v is not None)
                    for d in defs):
                out.add(stmt.name)
    return frozenset(out)


def _definition(stmt: ast.stmt, factories: frozenset[str] = frozenset()) -> set[str] | None:
    """The names a top-level statement binds when binding them is all it
    does (a def, a class, an assignment of a pure value); None for a
    statement that must run (a call, an if, a try, an import ...)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.decorator_list:
        return {stmt.name}
    if isinstance(stmt, ast.ClassDef) and not stmt.decorator_list and not stmt.keywords \
            and all(_is_pure(b) for b in stmt.bases):
        return {stmt.name}
    if isinstance(stmt, ast.Assign) and _is_pure(stmt.value, factories) and not _is_dunder_all(stmt):   # __all__ goes anyway
        names = [t for t in stmt.targets if isinstance(t, ast.Name)]
        if len(names) == len(stmt.targets):
            return {t.id for t in names}
    return None


def _entry_names(tree: ast.Module) -> list[str]:
    """The names a host reads from the entry module: its ``load`` and the
    names of its ``__all__`` (besides :data:`HOST_API`, wherever defined)."""
    return ["load", *sorted(_exported(tree) or ())]


class _Liveness:
    """Which top-level definitions of which modules the entry needs: from
    the entry's load and ``__all__``, the host API and the statements that
    must run in every module reached, the definitions their code mentions,
    transitively, across the modules (a read of an imported name or of a
    module alias's attribute is a read of the module that defines it). A
    module is reached when kept code reads one of its names: its
    statements that must run are kept then, not before. Any name a kept
    statement mentions keeps every definition that binds it."""

    def __init__(self, modules: list[Module]) -> None:
        self.modules = {m.name: m for m in modules}
        self.defs: dict[str, dict[str, list[ast.stmt]]] = {}
        self.factories = {m.name: _factories(m.tree) for m in modules}
        for m in modules:
            table: dict[str, list[ast.stmt]] = {}
            for stmt in m.tree.body:
                for name in sorted(_definition(stmt, self.factories[m.name]) or ()):
                    table.setdefault(name, []).append(stmt)
            self.defs[m.name] = table
        self.reached: list[str] = []
        self.reexported: dict[str, set[str]] = {}   # module -> the imported names others read through it
        self.live: set[int] = set()
        self.work: list[tuple[Module, ast.stmt]] = []

    def run(self, entry: str) -> None:
        self.reach(entry)
        for name in _entry_names(self.modules[entry].tree):
            self.use(entry, name)
        while self.work:
            mod, stmt = self.work.pop()
            for target, name in self.references(mod, stmt):
                self.use(target, name)

    def reach(self, name: str) -> None:
        if name in self.reached:
            return
        self.reached.append(name)
        mod = self.modules[name]
        for stmt in mod.tree.body:
            if _definition(stmt, self.factories[name]) is None:
                self.mark(mod, stmt)
        for api in HOST_API:
            self.use(name, api)

    def use(self, module: str, name: str) -> None:
        """Top-level ``name`` of ``module`` is read by live code."""
        self.reach(module)
        for stmt in self.defs[module].get(name, ()):
            self.mark(self.modules[module], stmt)

    def mark(self, mod: Module, stmt: ast.stmt) -> None:
        if id(stmt) not in self.live:
            self.live.add(id(stmt))
            self.work.append((mod, stmt))

    def resolve(self, module: str, name: str) -> tuple[str, str]:
        """The module that defines ``name`` as ``module`` sees it (following
        re-exports: a module a name passes through is reached and keeps
        that import)."""
        seen = set()
        while name not in self.defs[module] and name in self.modules[module].imported and (module, name) not in seen:
            seen.add((module, name))
            self.reach(module)
            self.reexported.setdefault(module, set()).add(name)
            module, name = self.modules[module].imported[name]
        return module, name

    def references(self, mod: Module, stmt: ast.stmt):
        """(module, name) of every top-level name ``stmt`` may read."""
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in mod.aliases:
                yield self.resolve(mod.aliases[node.value.id], node.attr)
            elif isinstance(node, ast.Name):
                if node.id in mod.imported:
                    yield self.resolve(*mod.imported[node.id])
                elif node.id in self.defs[mod.name]:
                    yield mod.name, node.id


def _live_closure(modules: list[Module], entry: str) -> list[Module]:
    """The closure with only the definitions the entry needs (see
    :class:`_Liveness`; each module's ``dropped`` names the others), the
    flowc imports no kept code reads, and the modules still imported then."""
    liveness = _Liveness(modules)
    liveness.run(entry)
    kept = []
    for mod in modules:
        if mod.name not in liveness.reached:
            continue
        body = []
        for stmt in mod.tree.body:
            binds = _definition(stmt, liveness.factories[mod.name])
            if binds is None or id(stmt) in liveness.live:
                body.append(stmt)
            else:
                mod.dropped.extend(sorted(binds))
        mod.tree.body = body
        _drop_unused_imports(mod.tree, liveness.reexported.get(mod.name, set()))
        mod.deps, mod.aliases, mod.imported = [], {}, {}
        _scan_imports(mod, mod.tree.body, guarded=False)
        kept.append(mod)
    needed = {entry}
    for mod in reversed(kept):   # dependencies come first: walk from the entry back
        if mod.name in needed:
            needed.update(mod.deps)
    return [m for m in kept if m.name in needed]


# ------------------------------------------------------------------ scopes


class Scope:
    """A function, lambda, comprehension or class body: the names it binds."""

    def __init__(self, kind: str, parent: Scope | None, local: set[str], declared_global: set[str],
                 nonlocal_: set[str]):
        self.kind, self.parent = kind, parent
        self.local, self.declared_global, self.nonlocal_ = local, declared_global, nonlocal_

    def is_global(self, name: str) -> bool:
        """Whether ``name`` read or written here is the module's global."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if scope.kind == "module":
                return True
            if name in scope.declared_global:
                return True
            visible = scope.kind != "class" or first   # a class body's names are not seen by its methods
            if visible and (name in scope.local or name in scope.nonlocal_):
                return False
            first = False
            scope = scope.parent
        return True


class _Binder(ast.NodeVisitor):
    """The names one scope binds (not those of the scopes nested in it)."""

    def __init__(self) -> None:
        self.local: set[str] = set()
        self.declared_global: set[str] = set()
        self.nonlocal_: set[str] = set()

    def scan(self, body: list[ast.AST]) -> _Binder:
        for node in body:
            self.visit(node)
        return self

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.local.add(node.id)

    def visit_Global(self, node: ast.Global) -> None:
        self.declared_global.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.nonlocal_.update(node.names)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for a in node.names:
            self.local.add(a.asname or a.name.split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.local.add(node.name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.local.add(node.name)
        for d in node.decorator_list:
            self.visit(d)
        if isinstance(node, ast.ClassDef):
            for b in [*node.bases, *node.keywords]:
                self.visit(b)
        else:
            self.visit(node.args)   # defaults belong to this scope (the Binder skips ast.arg names)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_arguments(self, node: ast.arguments) -> None:
        for d in [*node.defaults, *[k for k in node.kw_defaults if k is not None]]:
            self.visit(d)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)

    def _comprehension(self, node: ast.AST) -> None:
        self.visit(node.generators[0].iter)  # type: ignore[attr-defined]
        for sub in ast.walk(node):   # a walrus in a comprehension binds here
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                self.local.add(sub.target.id)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Match(self, node: ast.AST) -> None:
        raise BundleError(f"line {node.lineno}: match statements are not bundled")  # type: ignore[attr-defined]


def _args_of(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


# ------------------------------------------------------------------ rewriting


class _Rewriter(ast.NodeTransformer):
    """Rewrites one module for the flat namespace: global names to their
    flat names, module aliases' attributes to the names they stand for."""

    def __init__(self, mod: Module, flat: dict[tuple[str, str], str], modules: dict[str, Module]):
        self.mod, self.flat, self.modules = mod, flat, modules
        self.scope = Scope("module", None, set(), set(), set())

    def resolve(self, name: str) -> str | None:
        """The flat name of global ``name`` of this module, None for a builtin."""
        if name in self.mod.imported:
            return self.lookup(self.mod.imported[name])
        if name in self.mod.bindings:
            return self.flat[(self.mod.name, name)]
        return None

    def lookup(self, key: tuple[str, str]) -> str:
        """The flat name of top-level name ``key[1]`` of module ``key[0]``,
        following a name that module itself imported from another."""
        seen = set()
        while key not in self.flat:
            source = self.modules[key[0]].imported.get(key[1])
            if source is None or key in seen:
                raise BundleError(f"{self.mod.name}: {key[0]} has no top-level name {key[1]}")
            seen.add(key)
            key = source
        return self.flat[key]

    def _where(self, node: ast.AST) -> str:
        return f"{self.mod.name}:{getattr(node, 'lineno', '?')}"

    # -- names
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not self.scope.is_global(node.id):
            return node
        if node.id in self.mod.aliases:
            raise BundleError(f"{self._where(node)}: module alias {node.id} used as a value "
                              "(only its attributes can be flattened)")
        new = self.resolve(node.id)
        if new is None:
            self.mod.free.add(node.id)
            return node
        return ast.copy_location(ast.Name(new, node.ctx), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        value = node.value
        if isinstance(value, ast.Name) and value.id in self.mod.aliases and self.scope.is_global(value.id):
            if not isinstance(node.ctx, ast.Load):
                raise BundleError(f"{self._where(node)}: assigns {value.id}.{node.attr} (another module's global)")
            target = self.mod.aliases[value.id]
            return ast.copy_location(ast.Name(self.lookup((target, node.attr)), ast.Load()), node)
        return self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name and self.scope.kind == "module":
            node.name = self.resolve(node.name) or node.name
        return self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self.resolve(n) or n for n in node.names]
        return node

    # -- statements the flattening drops or replaces
    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        if self.scope.kind == "module" and _is_dunder_all(node):
            return None   # a module's export list: the bundle is one namespace
        return self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> ast.AST | None:
        if self.scope.kind == "module" and any(_flowc_imports(s) for s in node.body):
            return None   # recorded by _scan_imports: the names become flat names
        return self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> ast.AST | None:
        found = _flowc_imports(node)
        if found and self.scope.kind != "module":
            names = ", ".join(sorted({t for t, _, _ in found}))
            message = ast.Constant(f"{names}: not in the bundle (flowc is needed for this)")
            return ast.copy_location(ast.Raise(ast.Call(ast.Name("ImportError", ast.Load()), [message], []), None),
                                     node)
        if found:
            return None
        if self.scope.kind == "module":
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                new = self.resolve(local)
                if new is not None and new != local:
                    if isinstance(node, ast.Import) and "." in a.name:
                        raise BundleError(f"{self._where(node)}: cannot rename `import {a.name}`")
                    a.asname = new
        return node

    visit_ImportFrom = visit_Import

    # -- scopes
    def _enter(self, kind: str, body: list[ast.AST], extra: set[str]) -> Scope:
        b = _Binder().scan(body)
        saved = self.scope
        self.scope = Scope(kind, saved, b.local | extra, b.declared_global, b.nonlocal_)
        return saved

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        _strip_docstring(node)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self._visit_defaults(node.args)
        if self.scope.kind == "module":
            node.name = self.resolve(node.name) or node.name
        saved = self._enter("function", node.body, _args_of(node.args))
        node.body = self._visit_body(node.body, function=True)
        self.scope = saved
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _visit_defaults(self, args: ast.arguments) -> ast.arguments:
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [None if d is None else self.visit(d) for d in args.kw_defaults]
        return args

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node.args = self._visit_defaults(node.args)
        saved = self._enter("function", [node.body], _args_of(node.args))
        node.body = self.visit(node.body)
        self.scope = saved
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        _strip_docstring(node)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        if self.scope.kind == "module":
            node.name = self.resolve(node.name) or node.name
        saved = self._enter("class", node.body, set())
        node.body = self._visit_body(node.body)
        self.scope = saved
        return node

    def _comprehension(self, node: ast.AST) -> ast.AST:
        gens: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        gens[0].iter = self.visit(gens[0].iter)
        targets = {n.id for g in gens for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        saved = self.scope
        self.scope = Scope("function", saved, targets, set(), set())
        for i, g in enumerate(gens):
            g.target = self.visit(g.target)
            if i:
                g.iter = self.visit(g.iter)
            g.ifs = [self.visit(x) for x in g.ifs]
        for attr in ("elt", "key", "value"):
            if hasattr(node, attr):
                setattr(node, attr, self.visit(getattr(node, attr)))
        self.scope = saved
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def _visit_body(self, body: list[ast.stmt], function: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(body):
            new = self.visit(stmt)
            if new is None:
                continue
            out.extend(new if isinstance(new, list) else [new])
            if function and new is not stmt and isinstance(new, ast.Raise) and _droppable(body[i + 1:], out):
                break   # an import the bundle has not, now a raise: what follows it never runs
        return out or [ast.Pass()]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, name, self._visit_body(value))
            elif isinstance(value, list):
                setattr(node, name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node


def _droppable(rest: list[ast.stmt], kept: list[ast.stmt]) -> bool:
    """Whether the statements of a function body after a raise can go:
    none makes the function a generator or declares a name global, and no
    name they bind (a local of the function) is read by the kept code."""
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)) for s in rest for n in ast.walk(s)):
        return False
    read = {n.id for s in kept for n in ast.walk(s) if isinstance(n, ast.Name)}
    return not _Binder().scan(rest).local & read


def _is_dunder_all(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == "__all__"


def _strip_docstring(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        node.body = body[1:] or [ast.Pass()]


# ------------------------------------------------------------------ naming


def _top_level_bindings(mod: Module) -> dict[str, str]:
    """Each name the module binds at top level -> how ("import math" for a
    plain import, else "def")."""
    out: dict[str, str] = {}

    def scan(body: list[ast.stmt], guarded: bool = False) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Try) and any(_flowc_imports(s) for s in stmt.body):
                continue
            if _is_import(stmt):
                if _flowc_imports(stmt):
                    continue
                for a in stmt.names:  # type: ignore[attr-defined]
                    local = a.asname or a.name.split(".")[0]
                    plain = isinstance(stmt, ast.Import) and not guarded
                    out[local] = f"import {a.name} as {local}" if plain else "def"
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out[stmt.name] = "def"
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Global):
                        for n in sub.names:
                            out.setdefault(n, "def")
                continue
            if isinstance(stmt, (ast.If, ast.Try, ast.For, ast.While, ast.With)):
                binder = _Binder().scan([s for s in ast.iter_child_nodes(stmt) if not isinstance(s, ast.stmt)])
                for n in binder.local:
                    out.setdefault(n, "def")
                for block in ("body", "orelse", "finalbody"):
                    scan(getattr(stmt, block, []), True)
                for h in getattr(stmt, "handlers", []):
                    if h.name:
                        out.setdefault(h.name, "def")
                    scan(h.body, True)
                continue
            if _is_dunder_all(stmt):
                continue
            for n in _Binder().scan([stmt]).local:
                out.setdefault(n, "def")

    scan(mod.tree.body)
    for name in mod.imported:
        out.pop(name, None)
    for name in mod.aliases:
        out.pop(name, None)
    return out


def _flat_names(modules: list[Module], entry: str) -> dict[tuple[str, str], str]:
    """(module, name) -> its name in the bundle."""
    owners: dict[str, list[Module]] = {}
    for mod in modules:
        for name in mod.bindings:
            owners.setdefault(name, []).append(mod)
    taken = set(owners)
    flat: dict[tuple[str, str], str] = {}
    for name in sorted(owners):
        mods = owners[name]
        shared = len({m.bindings[name] for m in mods}) == 1 and mods[0].bindings[name].startswith("import ")
        for mod in mods:
            keep = len(mods) == 1 or shared or mod.name == entry
            flat[(mod.name, name)] = name if keep else _unique(name + "_" + mod.short, taken)
    return flat


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}{n}", n + 1
    taken.add(candidate)
    return candidate


def _rename_builtin_shadows(modules: list[Module], flat: dict[tuple[str, str], str]) -> bool:
    """A name one module reads as a builtin and another binds at top level:
    the binding module's name moves away. True when something changed."""
    free = {n for m in modules for n in m.free}
    taken = set(flat.values())
    changed = False
    for key in sorted(flat):
        if flat[key] in free:
            flat[key] = _unique(flat[key] + "_" + key[0].rsplit(".", 1)[-1], taken)
            changed = True
    return changed


# ------------------------------------------------------------------ short names

# A function that calls one of these reads its variables by name: its names stay.
_DYNAMIC = frozenset({"locals", "globals", "vars", "eval", "exec", "dir"})


def _short_names(prefix: str = "") -> Iterator[str]:
    """a, b, ... Z, aa, ab, ...: identifiers that are no keyword."""
    for length in itertools.count(1):
        for letters in itertools.product(string.ascii_letters, repeat=length):
            name = prefix + "".join(letters)
            if not keyword.iskeyword(name):
                yield name


def _identifiers(node: ast.AST) -> set[str]:
    """Every identifier ``node`` binds or reads as a variable (not attribute
    names): a new name taken from outside this set captures nothing."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.arg):
            out.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(sub.name)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            out.update(sub.names)
        elif isinstance(sub, ast.alias):
            out.add(sub.asname or sub.name.split(".")[0])
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            out.add(sub.name)
    return out


def _scope_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> tuple[set[str], set[str]]:
    """The names a function's scope binds for itself (parameters, locals,
    not nonlocals), and those it declares global."""
    body = node.body if isinstance(node.body, list) else [node.body]
    b = _Binder().scan(body)
    return _args_of(node.args) | (b.local - b.nonlocal_ - b.declared_global), b.declared_global


_Stack = list[tuple[str, set[str], set[str]]]   # (kind, names bound, names declared global) per nested scope


class _ScopedRenamer:
    """Renames the names ``mapping`` holds where they mean the binding of
    one scope: the scope the walk starts in (``stack`` empty: the module
    when ``module`` is true, else a function), and any nested scope that
    does not bind the name itself (a class body's names are not seen by its
    methods, as in Python; a name declared global is the module's)."""

    def __init__(self, mapping: dict[str, str], module: bool):
        self.mapping, self.module = mapping, module

    def resolves(self, name: str, stack: _Stack) -> bool:
        for i in range(len(stack) - 1, -1, -1):
            kind, bound, declared_global = stack[i]
            if kind == "class" and i != len(stack) - 1:
                continue
            if name in declared_global:
                return self.module
            if name in bound:
                return False
        return True

    def new(self, name: str, stack: _Stack) -> str:
        if name in self.mapping and self.resolves(name, stack):
            return self.mapping[name]
        return name

    def body(self, stmts: list[ast.stmt], stack: _Stack) -> None:
        for stmt in stmts:
            self.visit(stmt, stack)

    def visit(self, node: ast.AST, stack: _Stack) -> None:
        handler = getattr(self, "visit_" + type(node).__name__, None)
        if handler is not None:
            handler(node, stack)
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child, stack)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef, stack: _Stack) -> None:
        node.name = self.new(node.name, stack)
        self._signature(node, stack)
        self.body(node.body, [*stack, ("function", *_scope_names(node))])

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda, stack: _Stack) -> None:
        self._signature(node, stack)
        self.visit(node.body, [*stack, ("function", *_scope_names(node))])

    def visit_ClassDef(self, node: ast.ClassDef, stack: _Stack) -> None:
        node.name = self.new(node.name, stack)
        for sub in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(sub, stack)
        b = _Binder().scan(node.body)
        self.body(node.body, [*stack, ("class", b.local - b.nonlocal_ - b.declared_global, b.declared_global)])

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                       stack: _Stack) -> None:
        """The first iterable is evaluated outside; the rest sees the targets."""
        gens = node.generators
        self.visit(gens[0].iter, stack)
        targets = {n.id for g in gens for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        inner: _Stack = [*stack, ("function", targets, set())]
        for i, g in enumerate(gens):
            self.visit(g.target, inner)
            if i:
                self.visit(g.iter, inner)
            for cond in g.ifs:
                self.visit(cond, inner)
        for part in (getattr(node, "elt", None), getattr(node, "key", None), getattr(node, "value", None)):
            if part is not None:
                self.visit(part, inner)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Name(self, node: ast.Name, stack: _Stack) -> None:
        node.id = self.new(node.id, stack)

    def visit_Global(self, node: ast.Global | ast.Nonlocal, stack: _Stack) -> None:
        node.names = [self.new(n, stack) for n in node.names]

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node: ast.ExceptHandler, stack: _Stack) -> None:
        if node.name:
            node.name = self.new(node.name, stack)
        if node.type is not None:
            self.visit(node.type, stack)
        self.body(node.body, stack)

    def visit_Import(self, node: ast.Import | ast.ImportFrom, stack: _Stack) -> None:
        for a in node.names:
            local = a.asname or a.name
            new = self.new(local, stack)
            if new != local:
                a.asname = new

    visit_ImportFrom = visit_Import

    def _signature(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                   stack: _Stack) -> None:
        """Decorators, defaults and annotations: evaluated where the function is defined."""
        args = node.args
        parts: list[ast.AST] = [*args.defaults, *[d for d in args.kw_defaults if d is not None]]
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        parts += [a.annotation for a in every if a is not None and a.annotation is not None]
        if not isinstance(node, ast.Lambda):
            parts += node.decorator_list + ([node.returns] if node.returns else [])
        for part in parts:
            self.visit(part, stack)


def _rename_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, private: bool,
                   keywords: set[str] | None) -> None:
    """Give ``fn``'s local variables short names, the most used the
    shortest, then do the same in the functions nested in it. A parameter
    is renamed where no caller can pass it by keyword: a method's ``self``,
    and the parameters of a private function (nested in a function, or
    named with one leading underscore) that no call of the bundle names
    (``keywords``; None when a call passes ``**`` and any might be). A
    function that reads its variables by name (locals(), eval ...) keeps its
    names and its nested functions'."""
    if any(isinstance(n, ast.Name) and n.id in _DYNAMIC for n in ast.walk(fn)):
        return
    b = _Binder().scan(fn.body)
    dotted = {a.name.split(".")[0] for n in ast.walk(fn) if isinstance(n, ast.Import)
              for a in n.names if "." in a.name and a.asname is None}
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg]
    movable = set()
    if method and fn.args.args and fn.args.args[0].arg in ("self", "cls"):
        movable.add(fn.args.args[0].arg)
    if private and keywords is not None:
        movable |= {a.arg for a in params if a is not None and a.arg not in keywords}
    # a nested function or class keeps its name: its __name__ may show (type(x).__name__)
    defined = {n.name for n in ast.walk(fn) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    candidates = (b.local - _args_of(fn.args) - b.declared_global - b.nonlocal_ - dotted - defined) | movable
    if candidates:
        uses: dict[str, int] = {}
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id in candidates:
                uses[n.id] = uses.get(n.id, 0) + 1
        taken = _identifiers(fn)
        fresh = (n for n in _short_names() if n not in taken)
        order = sorted(candidates, key=lambda n: (-uses.get(n, 0), n))
        mapping = {old: new for old, new in zip(order, fresh) if len(new) < len(old)}
        if mapping:
            for a in params:
                if a is not None and a.arg in mapping:
                    a.arg = mapping[a.arg]
            _ScopedRenamer(mapping, module=False).body(fn.body, [])
    for inner, inner_method, inner_private in _functions(fn.body, nested=True):
        _rename_locals(inner, inner_method, inner_private, keywords)


def _functions(body: list[ast.stmt], nested: bool, hidden: frozenset[str] = frozenset()
               ) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool, bool]]:
    """The functions defined in ``body`` (in classes and blocks too, not in
    other functions), each with whether it is a method (in a class body)
    and whether it is private: nested in a function, named with one
    leading underscore, or a top-level function no host can name (its name
    is in ``hidden``: the bundle gave it a short one)."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool, bool]] = []

    def walk(nodes: list[ast.AST], in_class: bool) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                private = (nested and not in_class) or (node.name.startswith("_") and not node.name.startswith("__")) \
                    or (not in_class and node.name in hidden)
                out.append((node, in_class, private))
            elif isinstance(node, ast.ClassDef):
                walk(node.body, True)
            else:
                walk(list(ast.iter_child_nodes(node)), False)

    walk(list(body), False)
    return out


def _reads_names_of_objects(trees: list[ast.Module]) -> bool:
    """Whether some code reads ``__name__`` or ``__qualname__`` of anything
    but ``type(...)`` (a class's name is kept anyway)."""
    for tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and n.attr in ("__name__", "__qualname__"):
                value = n.value
                if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "type"):
                    return True
    return False


def _rename_globals(trees: list[ast.Module], keep: set[str]) -> dict[str, str]:
    """Short names for the bundle's top-level names but ``keep`` (what a host
    reads: the entry's load and __all__, HOST_API), dunders and classes (a
    class's name shows in messages through ``type(x).__name__``; functions
    too when code reads the ``__name__`` of other things); returns old ->
    new."""
    named = {n.name for t in trees for n in ast.walk(t) if isinstance(n, ast.ClassDef)}
    if _reads_names_of_objects(trees):   # a function's __name__ may show too: keep them
        named |= {n.name for t in trees for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    bound: set[str] = set()
    for tree in trees:
        for stmt in tree.body:
            binds = _definition(stmt)
            bound |= binds if binds is not None else _Binder().scan([stmt]).local
        for n in ast.walk(tree):
            if isinstance(n, ast.Global):
                bound.update(n.names)
    private = sorted(n for n in bound if not n.startswith("__") and n not in named and n not in keep)
    taken = set().union(*(_identifiers(t) for t in trees)) | set(dir(builtins))
    uses: dict[str, int] = {}
    for tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and n.id in private:
                uses[n.id] = uses.get(n.id, 0) + 1
    fresh = (n for n in _short_names("_") if n not in taken)
    order = sorted(private, key=lambda n: (-uses.get(n, 0), n))
    mapping = {old: new for old, new in zip(order, fresh) if len(new) < len(old)}
    renamer = _ScopedRenamer(mapping, module=True)
    for tree in trees:
        renamer.body(tree.body, [])
    return mapping


def _minify(trees: list[ast.Module], keep: set[str]) -> dict[str, str]:
    """Shorter names where no code can tell: top-level names no host reads
    (old -> new is returned), then every function's locals and the
    parameters no caller names (a function no host can name is called by
    the bundle only, or by what the bundle hands it, positionally)."""
    renamed = _rename_globals(trees, keep)
    calls = [n for t in trees for n in ast.walk(t) if isinstance(n, ast.Call)]
    keywords: set[str] | None = {k.arg for c in calls for k in c.keywords if k.arg is not None}
    if any(k.arg is None for c in calls for k in c.keywords):
        keywords = None
    hidden = frozenset(renamed.values())
    for tree in trees:
        for fn, method, private in _functions(tree.body, nested=False, hidden=hidden):
            _rename_locals(fn, method, private, keywords)
    return renamed


# ------------------------------------------------------------------ writing


_WORDS = (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)


# A line that starts with one of these opens (or continues) a compound statement.
_COMPOUND = frozenset({"if", "elif", "else", "for", "while", "try", "except", "finally", "with", "def", "class",
                       "async", "@"})


def _compact(text: str, join: bool = False) -> str:
    """Each line rebuilt from its tokens: a block indented by one space
    instead of four, a space only between two words (names, numbers,
    strings). ast.unparse writes every statement on its own line and no
    token over two lines; both are checked. With ``join``, simple
    statements that follow each other share a line (``a=1;b=2``), and a
    block of simple statements goes on its header's line (``if x:return``)."""
    lines: dict[int, list[tokenize.TokenInfo]] = {}
    depth = 0
    indents: dict[int, int] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.INDENT:
            depth += 1
        elif tok.type == tokenize.DEDENT:
            depth -= 1
        elif tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT):
            continue
        else:
            if tok.start[0] != tok.end[0]:
                raise BundleError(f"a token spans lines in the bundle (line {tok.start[0]})")
            row = lines.setdefault(tok.start[0], [])
            if not row:
                indents[tok.start[0]] = depth
            row.append(tok)
    rows: list[tuple[int, str, str]] = []   # (depth, text, "simple" | "header" | "other")
    for number in sorted(lines):
        parts, prev = [], None
        for tok in lines[number]:
            if prev is not None and prev.type in _WORDS and tok.type in _WORDS:
                parts.append(" ")
            parts.append(tok.string)
            prev = tok
        first, last = lines[number][0].string, lines[number][-1].string
        kind = "simple" if first not in _COMPOUND else ("header" if last == ":" else "other")
        rows.append((indents[number], "".join(parts), kind))
    if join:
        rows = _join_rows(rows)
    return "\n".join(" " * d + t for d, t, _ in rows)


def _join_rows(rows: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """Simple statements of one block on one line; a header whose block is
    one such line takes it (a compound statement cannot follow a ``;``)."""
    runs: list[tuple[int, str, str]] = []
    for depth, text, kind in rows:
        if kind == "simple" and runs and runs[-1][2] == "simple" and runs[-1][0] == depth:
            runs[-1] = (depth, runs[-1][1] + ";" + text, "simple")
        else:
            runs.append((depth, text, kind))
    out: list[tuple[int, str, str]] = []
    i = 0
    while i < len(runs):
        depth, text, kind = runs[i]
        body = runs[i + 1] if i + 1 < len(runs) else None
        after = runs[i + 2] if i + 2 < len(runs) else None
        if kind == "header" and body is not None and body[2] == "simple" and body[0] == depth + 1 \
                and (after is None or after[0] <= depth):
            out.append((depth, text + body[1], "other"))
            i += 2
        else:
            out.append((depth, text, kind))
            i += 1
    return out


def entry_of(models: tuple[str, ...] | None) -> str:
    """The module a bundle of ``models`` (None: every model) starts at: the
    device entry, whose loaders keep the rows of ``models``."""
    return ENTRY


def build_bundle(entry: str | None = None, models: tuple[str, ...] | None = None, minify: bool = True,
                 small: bool = False) -> Bundle:
    """The bundle of ``entry``'s closure (by default the entry of
    ``models``), for every scheduling model or for ``models`` only; raises
    BundleError when it cannot be built. ``minify=False`` keeps the
    modules' own names (flat names aside): a bundle to read, larger.
    ``small`` leaves the optional parts out (``BY_FEATURE``): the same
    records, slower."""
    if entry is None:
        entry = entry_of(models)
    modules = closure(entry, models, small)
    for mod in modules:
        if any(isinstance(s, ast.ImportFrom) and s.module == "__future__" for s in mod.tree.body):
            raise BundleError(f"{mod.name} imports __future__: not a device module")
        mod.bindings = _top_level_bindings(mod)
    flat = _flat_names(modules, entry)
    by_name = {m.name: m for m in modules}
    trees: list[ast.Module] = []
    for _ in range(3):   # renaming a builtin shadow may reveal no new one; two passes settle it
        trees = []
        for mod in modules:
            tree = copy.deepcopy(mod.tree)
            _strip_docstring(tree)
            mod.free = set()
            rewriter = _Rewriter(mod, flat, by_name)
            tree.body = rewriter._visit_body(tree.body)
            trees.append(ast.fix_missing_locations(tree))
        if not _rename_builtin_shadows(modules, flat):
            break
    else:
        raise BundleError("builtin names keep colliding with top-level names")
    host = {flat[(entry, n)] for n in _entry_names(modules[-1].tree) if (entry, n) in flat} | set(HOST_API)
    shorter = _minify(trees, host) if minify else {}
    names = ", ".join(m.name.removeprefix("flowc.") for m in modules)
    header = f"# flowc VM bundle (flowc bundle DIR): {names}\n"
    bodies = [_compact(ast.unparse(t), join=minify) for t in trees]
    text = header + "\n".join(b for b in bodies if b) + "\n"
    renamed: dict[str, dict[str, str]] = {}
    for (mod_name, name), new in sorted(flat.items()):
        new = shorter.get(new, new)
        if new != name:
            renamed.setdefault(mod_name, {})[name] = new
    parts = [(m.name, m.path.stat().st_size, len(b.encode("utf-8")) + 1) for m, b in zip(modules, bodies, strict=True)]
    return Bundle(text, [m.name for m in modules], renamed, sum(p[1] for p in parts), parts,
                  {m.name: m.dropped for m in modules if m.dropped})


def models_of(dialect: str) -> tuple[str, ...]:
    """The scheduling models a device needs for ``dialect``'s programs: its
    profile's (the one flag it reads, never the dialect's name)."""
    from flowc.ir.semantics import PROFILES

    profile = PROFILES.get(dialect)
    if profile is None:
        raise BundleError(f"no dialect {dialect!r}")
    return (profile.scheduling,)


def write_bundle(directory: str | Path, dialect: str | None = None, minify: bool = True,
                 small: bool = False) -> tuple[Path, Bundle]:
    """Write ``flowc_vm.py`` into ``directory`` (created when missing): for
    every dialect, or for the scheduling model of ``dialect`` only;
    ``minify=False``: with the modules' own names (a bundle to read, larger);
    ``small``: without the optional parts (the compiled loops)."""
    bundle = build_bundle(None, models_of(dialect) if dialect else None, minify, small)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "flowc_vm.py"
    path.write_bytes(bundle.text.encode("utf-8"))
    return path, bundle
