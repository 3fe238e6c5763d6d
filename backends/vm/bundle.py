"""One file a device needs to load, verify and run flowc programs.

``build_bundle()`` starts at the device entry (:mod:`flowc.backends.vm.device`,
or one dialect's loader),
follows the module-level imports of flowc modules to their closure, checks
that every module of it is device-safe (MicroPython: no typing, no attrs,
no third-party import without a fallback) and writes the modules into one
source file, dependencies first:

- the ``try: from flowc... import ... / except ImportError: import ...``
  blocks that let a module run side by side on a device are dropped; a
  module alias's attributes (``_c.to_json``) and imported names become the
  flat names they stand for;
- a top-level name bound by two modules is renamed in every module but the
  entry (``load`` of dataflow.py becomes ``load_dataflow``), as is a name
  one module binds and another uses as a builtin; only identical plain
  imports (``import math``) are shared;
- a top-level definition no code reaches (from the statements that must
  run at import, the entry's public names and :data:`EXPORTS`) is dropped;
- names get short where no code can tell: top-level names no host reads
  (not classes), locals, a method's ``self`` and the parameters of private
  functions no call passes by keyword (``minify=False`` keeps them);
- docstrings, comments and ``__all__`` go (the source is rebuilt from its
  syntax tree), a block is indented by one space, a space is left only
  between two words and simple statements share lines;
- an import of a flowc module inside a function (a CPython convenience:
  the asyncio driver, the command line) becomes ``raise ImportError``.

The same tree always gives the same bytes (on one Python version: the text
is ``ast.unparse``'s). See docs/embedding.md.
"""

from __future__ import annotations

import ast
import builtins
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

__all__ = ["DEVICE_STDLIB", "DIALECT_ENTRIES", "ENTRY", "EXPORTS", "Bundle", "BundleError", "build_bundle",
           "closure", "write_bundle"]

ENTRY = "flowc.backends.vm.device"
# A device that runs one dialect only needs that loader's closure (smaller:
# the WorkflowSkill VM alone is one module); the API is the same.
DIALECT_ENTRIES = {"workflowskill": "flowc.backends.vm.sequential", "aevatar": "flowc.backends.vm.aevatar_vm",
                   "instruction": "flowc.backends.vm.dataflow"}
# What a host may use besides the entry module's public names (docs/embedding.md):
# kept whenever a module of the closure defines them.
EXPORTS = ("load", "VMError", "VerifyError", "unpackb", "copy_json", "to_json", "to_json_text", "json_dumps")
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


def _read(name: str) -> Module:
    path = _module_path(name)
    source = path.read_text(encoding="utf-8")
    mod = Module(name, path, ast.parse(source, str(path)))
    _scan_imports(mod, mod.tree.body, guarded=False)
    return mod


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


def closure(entry: str = ENTRY) -> list[Module]:
    """The modules the entry needs, dependencies first (the entry last)."""
    modules: dict[str, Module] = {}
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, chain: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            raise BundleError("import cycle: " + " -> ".join([*chain, name]))
        state[name] = "open"
        mod = modules[name] = _read(name)
        for dep in mod.deps:
            visit(dep, [*chain, name])
        state[name] = "done"
        order.append(name)

    visit(entry, [])
    return [modules[n] for n in order]


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
        node.body = self._visit_body(node.body)
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

    def _visit_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            new = self.visit(stmt)
            if new is None:
                continue
            out.extend(new if isinstance(new, list) else [new])
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


# ------------------------------------------------------------------ shaking

# Builtins whose call at import only builds a value (no side effect a later
# statement could depend on).
_PURE_CALLS = frozenset({"float", "int", "str", "bytes", "bytearray", "tuple", "list", "dict", "set", "frozenset",
                         "type", "object", "range", "len", "chr", "ord"})


def _is_pure(node: ast.AST) -> bool:
    """Whether evaluating ``node`` at import only computes a value: dropping
    its statement, when no code reads the name it binds, changes nothing."""
    if isinstance(node, (ast.Constant, ast.Name, ast.Lambda)):
        return True
    if isinstance(node, ast.Attribute):
        return _is_pure(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_is_pure(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _is_pure(k) for k in node.keys) and all(_is_pure(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _is_pure(node.left) and _is_pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return _is_pure(node.operand)
    if isinstance(node, (ast.BoolOp, ast.Compare)):
        return all(_is_pure(e) for e in ast.iter_child_nodes(node) if isinstance(e, ast.expr))
    if isinstance(node, ast.IfExp):
        return _is_pure(node.test) and _is_pure(node.body) and _is_pure(node.orelse)
    if isinstance(node, ast.Subscript):
        return _is_pure(node.value) and _is_pure(node.slice)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in _PURE_CALLS and not node.keywords \
            and all(_is_pure(a) for a in node.args)
    return False


def _definition(stmt: ast.stmt) -> set[str] | None:
    """The names a top-level statement binds when binding them is all it
    does (a def, a class, an assignment of a pure value); None for a
    statement that must run (a call, an if, a try, an import ...)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.decorator_list:
        return {stmt.name}
    if isinstance(stmt, ast.ClassDef) and not stmt.decorator_list and not stmt.keywords \
            and all(_is_pure(b) for b in stmt.bases):
        return {stmt.name}
    if isinstance(stmt, ast.Assign) and _is_pure(stmt.value):
        names = [t for t in stmt.targets if isinstance(t, ast.Name)]
        if len(names) == len(stmt.targets):
            return {t.id for t in names}
    return None


def _names_in(node: ast.AST) -> set[str]:
    """Every name ``node`` mentions, read, written or declared global (a
    local of the same name counts too: more is kept, never less)."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            out.update(sub.names)
    return out


def _shake(trees: list[ast.Module], roots: set[str]) -> dict[int, list[str]]:
    """Drop the top-level definitions no code of the bundle reaches from the
    statements that must run and the ``roots`` names; returns, per tree
    index, the names dropped. Any name a kept statement mentions keeps every
    statement that binds it."""
    entries = []   # (tree index, stmt, names it binds or None, names it mentions)
    for i, tree in enumerate(trees):
        for stmt in tree.body:
            binds = _definition(stmt)
            entries.append((i, stmt, binds, _names_in(stmt)))
    binders: dict[str, list[int]] = {}
    for k, (_, _, binds, _) in enumerate(entries):
        for name in binds or ():
            binders.setdefault(name, []).append(k)
    kept = [binds is None for _, _, binds, _ in entries]
    todo = set(roots)
    for k, (_, _, binds, mentions) in enumerate(entries):
        if binds is None:
            todo |= mentions
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for k in binders.get(name, ()):
            if not kept[k]:
                kept[k] = True
                todo |= entries[k][3] - seen
    dropped: dict[int, list[str]] = {}
    for i, tree in enumerate(trees):
        tree.body = [stmt for k, (j, stmt, _, _) in enumerate(entries) if j == i and kept[k]]
    for k, (i, _, binds, _) in enumerate(entries):
        if not kept[k]:
            dropped.setdefault(i, []).extend(sorted(binds or ()))
    return dropped


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
    reads: the entry's public names, EXPORTS), dunders and classes (a
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


def build_bundle(entry: str = ENTRY, minify: bool = True) -> Bundle:
    """The bundle of ``entry``'s closure; raises BundleError when it cannot
    be built. ``minify=False`` keeps the modules' own names (flat names
    aside): a bundle to read, larger."""
    modules = closure(entry)
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
            tree = ast.parse(mod.path.read_text(encoding="utf-8"), str(mod.path))
            _strip_docstring(tree)
            mod.free = set()
            rewriter = _Rewriter(mod, flat, by_name)
            tree.body = rewriter._visit_body(tree.body)
            trees.append(ast.fix_missing_locations(tree))
        if not _rename_builtin_shadows(modules, flat):
            break
    else:
        raise BundleError("builtin names keep colliding with top-level names")
    roots = {flat[(entry, n)] for n in modules[-1].bindings if not n.startswith("_")} | set(EXPORTS)
    dropped = _shake(trees, roots)
    shorter = _minify(trees, roots) if minify else {}
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
                  {modules[i].name: gone for i, gone in sorted(dropped.items())})


def write_bundle(directory: str | Path, dialect: str | None = None, minify: bool = True) -> tuple[Path, Bundle]:
    """Write ``flowc_vm.py`` into ``directory`` (created when missing): for
    every dialect, or for ``dialect`` only; ``minify=False``: with the
    modules' own names (a bundle to read, larger)."""
    bundle = build_bundle(DIALECT_ENTRIES[dialect] if dialect else ENTRY, minify)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "flowc_vm.py"
    path.write_bytes(bundle.text.encode("utf-8"))
    return path, bundle
