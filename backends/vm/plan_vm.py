"""Programs of every scheduling model on the VM: load, verify and run
(docs/bytecode.md sections 2, 8 and 9).

Every model runs a workflow as plain data: WorkflowSkill's sequential
steps (the walk of :mod:`sequence_run`, one step function per row made by
:mod:`plan_steps`), kernel routing (the step loop of :mod:`routing_run`)
and dataflow (the ready-node scheduler of :mod:`dataflow_run`). A program
is the plan of :mod:`flowc.plan` as rows, with every expression of its
nodes a block of the VM's expression machine (:mod:`expr_vm`). Loading
checks the sections, verifies every block and the plan, and turns each
expression into a closure over the machine; running hands the plan to the
model's scheduler, which the Python backend uses too, so both backends
give the same run record.

What differs between the models is a row of :data:`MODELS`, keyed by the
plan's model (the container's header names it): how expressions are held
(:data:`EXPRESSIONS`: the constants, the key table, whether the plan names
an expression by its index in section ``exprs`` or by its block), the
layout of a node's row (:data:`LAYOUTS`: its fixed fields, the optional
fields its mask names, the key order of the node), the run-wide fields
around the graph, the scheduler and the run's options. A device that runs
one model only holds that model's rows (``flowc bundle --dialect``).

Standard library only (plus expr_vm, the schedulers, the kernel, drivers
and edges of flowc.runtime, and the container reader, container.py);
MicroPython-compatible. ``run`` drives the scheduler with the sync driver;
``run_async`` and ``run_virtual`` with asyncio and a virtual clock
(docs/runtime.md).
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.vm import expr_aevatar as _xa
    from flowc.backends.vm import expr_cel as _xc
    from flowc.backends.vm import expr_vm as _x
    from flowc.backends.vm import expr_wfs as _xw
    from flowc.backends.vm import plan_steps as _seq
    from flowc.backends.vm.container import MAX_NESTING, copy_json, read_section
    from flowc.backends.vm.errors import VerifyError
    from flowc.runtime import cel as _c
    from flowc.runtime import dataflow_run as _d
    from flowc.runtime import drivers as _drivers
    from flowc.runtime import edges as _edges
    from flowc.runtime import routing_run as _k
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import cel as _c
    import dataflow_run as _d
    import drivers as _drivers
    import edges as _edges
    import expr_aevatar as _xa
    import expr_cel as _xc
    import expr_vm as _x
    import expr_wfs as _xw
    import plan_steps as _seq
    import routing_run as _k
    from container import MAX_NESTING, copy_json, read_section
    from errors import VerifyError

__all__ = ["BY_MODEL", "EXPRESSIONS", "LAYOUTS", "MODELS", "Program", "load_plan", "plan_fields"]

# The tables keyed by model: a bundle of some models keeps only their rows
# (backends/vm/bundle.py), so a device holds only their schedulers and builtins.
BY_MODEL = ("EXPRESSIONS", "LAYOUTS", "MODELS", "QUICK")
# The tables of optional parts, a speed-up a device can do without: a small
# bundle (flowc bundle --small) keeps none of their rows (its loader checks
# every plan with the decoder, as thoroughly, and makes the nodes at load).
BY_FEATURE = ("QUICK",)

MAX_DEPTH = 8        # regions nest at most this deep
MAX_RETRIES = 1000   # a kernel step's retries

# ================================================================ checking values


def _str(v, what):
    if type(v) is not str:
        raise VerifyError("%s must be a string" % what)
    return v


def _list(v, what, size=None):
    if type(v) is not list or (size is not None and len(v) != size):
        raise VerifyError("%s must be an array%s" % (what, "" if size is None else " of %d" % size))
    return v


def _uint(v, what, high):
    if type(v) is not int or v < 0 or v > high:
        raise VerifyError("%s must be an integer in [0, %d]" % (what, high))
    return v


def _map(v, what):
    """A map; nil is the empty map."""
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise VerifyError("%s must be a map" % what)
    return v


# ================================================================ expressions


def _text_const(c):
    """A pool constant of a program whose constants are strings."""
    if type(c) is not str:
        raise VerifyError("a constant must be a string")
    return c


def _check_plain(v, depth):
    if depth > MAX_NESTING:
        raise VerifyError("a constant nests deeper than %d" % MAX_NESTING)
    t = type(v)
    if v is None or t is bool or t is int or t is float or t is str:
        return
    if t is list:
        for e in v:
            _check_plain(e, depth + 1)
        return
    if isinstance(v, dict):
        for k in v:
            if type(k) is not str:
                raise VerifyError("a constant object has a non-string key")
            _check_plain(v[k], depth + 1)
        return
    raise VerifyError("a constant is of an unsupported type (%s)" % type(v).__name__)


def _plain_const(c):
    """A pool constant of a program whose constants are plain JSON values."""
    _check_plain(c, 0)
    return c


class _EachBlock:
    """Expression ``b`` is ``(b, 0, 0)``: block b, no parameters, no slots."""

    def __init__(self, count):
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, b):
        if not 0 <= b < self.count:
            raise IndexError(b)
        return (b, 0, 0)


def _block_exprs(sections, blocks):
    """A model whose plan names an expression by its block: every block an
    expression of no parameters, on no frame."""
    return _EachBlock(len(blocks)), 0


def _section_exprs(sections, blocks):
    """Section exprs, ``block, params, slots`` triples, and the frame every
    block is verified against (a macro body shares its caller's frame: the
    largest)."""
    flat = sections.get("exprs")
    if type(flat) is not list or len(flat) % 3:
        raise VerifyError("section exprs must be block, params, slots triples")
    exprs = []
    slots_of = [0] * len(blocks)
    for i in range(0, len(flat), 3):
        e = flat[i:i + 3]
        if not all(type(x) is int and x >= 0 for x in e) or e[0] >= len(blocks) or e[1] > e[2]:
            raise VerifyError("an expression must be block, params, slots")
        exprs.append((e[0], e[1], e[2]))
        slots_of[e[0]] = max(slots_of[e[0]], e[2])
    return exprs, max(slots_of) if slots_of else 0


def _verified_blocks(exprs, sections, row):
    """Section code as an array of bin: every block verified on its own."""
    blocks = sections["code"]
    for b in blocks:
        if type(b) is not bytes:
            raise VerifyError("a block must be msgpack bin")
    exprs.exprs, exprs.frame = row["exprs"](sections, blocks)
    return _x.verify(blocks, len(exprs.consts), exprs.names, exprs.keys, exprs.frame, row["profile"])


def _verified_forms(exprs, sections, row):
    """Section code as forms (docs/bytecode.md section 2.3): each distinct form verified once."""
    decoded = _x.verify_forms(sections["code"], len(exprs.consts), exprs.names, exprs.keys, 0, row["profile"])
    exprs.exprs, exprs.frame = row["exprs"](sections, decoded)
    return decoded


# How a model's program holds its expressions: "profile" the builtins it
# may call (expr_vm), "const" how a pool constant decodes, "keys" the
# section of its builtin keys, "exprs" its expressions and their frame
# (what the plan's references index), "arity" the error of a call with the
# wrong number of arguments, "copy" how a constant array or object is copied
# on each evaluation (None: it is not), "forms" whether section code holds
# the blocks as forms (sequential; a form names no block, so no LAMBDA),
# "blocks" the verifier of section code (sets the expressions and frame).
EXPRESSIONS = {
    "kernel": {"profile": _xa.PROFILE, "const": _text_const, "keys": "names", "exprs": _block_exprs,
               "arity": VerifyError, "copy": None, "forms": False, "blocks": _verified_blocks},
    "dataflow": {"profile": _xc.PROFILE, "const": _xc.decode_const, "keys": "keys", "exprs": _section_exprs,
                 "arity": _c.CelError, "copy": None, "forms": False,
                 "blocks": _verified_blocks},
    # a constant array or object is a fresh copy on every evaluation (a run may hand it on)
    "sequential": {"profile": _xw.PROFILE, "const": _plain_const, "keys": "names", "exprs": _block_exprs,
                   "arity": VerifyError, "copy": copy_json, "forms": True,
                   "blocks": _verified_forms},
}


class _Expressions:
    """The verified expressions of a program, as closures over one machine."""

    def __init__(self, row, sections):
        for key in ("consts", "names", "code", row["keys"]):
            if type(sections.get(key)) is not list:
                raise VerifyError("section %s must be an array" % key)
        const = row["const"]
        self.consts = [const(c) for c in sections["consts"]]
        self.names = sections["names"]
        self.keys = sections[row["keys"]]
        if set(map(type, self.names)) - {str} or set(map(type, self.keys)) - {str}:
            raise VerifyError("names and keys are strings")
        self.arity = row["arity"]
        decoded = row["blocks"](self, sections, row)
        self.machine = _x.Machine(self.consts, self.names, self.keys, decoded, copy=row["copy"])

    def function(self, ref):
        """The expression the plan names by ``ref`` as a callable ``f(env, *args)``."""
        if type(ref) is not int or not 0 <= ref < len(self.exprs):
            raise VerifyError("an expression index is out of range")
        block, params = self.exprs[ref][0], self.exprs[ref][1]
        machine = self.machine
        frame = self.frame
        arity = self.arity

        def f(env, *args):
            if len(args) != params:
                raise arity("expression expects %d arguments, got %d" % (params, len(args)))
            return machine.evaluate(block, frame, env, args)
        return f

    def params(self, flat, what):
        """A step's parameters, ``[name, block...]``: ``V -> [(name, value)...]``."""
        _list(flat, what)
        if len(flat) % 2:
            raise VerifyError("%s must be name, block pairs" % what)
        exprs = self.exprs
        pairs = []
        for i in range(0, len(flat), 2):
            ref = flat[i + 1]
            if type(ref) is not int or not 0 <= ref < len(exprs) or exprs[ref][1]:
                raise VerifyError("%s: an expression index is out of range (or takes arguments)" % what)
            pairs.append((_str(flat[i], what + " name"), exprs[ref][0]))
        machine = self.machine
        frame = self.frame

        def params(variables):
            return [(key, machine.evaluate(block, frame, variables, ())) for key, block in pairs]
        return params


# ================================================================ node rows
#
# A field decoder is f(exprs, node, row, at, depth): it checks the row
# values of one field, from row[at], and sets the node's keys from them.
# A message names the node by its id, row[0] (made only when one is raised).


def _where(row):
    return "node %r" % (row[0],)


def _text_field(key, optional):
    """A string (or nil when ``optional``) as it is."""
    def field(exprs, node, row, at, depth):
        v = row[at]
        if type(v) is not str and (v is not None or not optional):
            raise VerifyError("%s %s must be a string%s" % (_where(row), key, " or nil" if optional else ""))
        node[key] = v
    return field


def _expression_field(key):
    def field(exprs, node, row, at, depth):
        node[key] = exprs.function(row[at])
    return field


def _params_field(exprs, node, row, at, depth):
    node["params"] = exprs.params(row[at], _where(row) + " parameters")


def _pairs_field(key, order, label):
    """A map ``[name, expression...]``: the map at ``key``, its names in order at ``order``."""
    def field(exprs, node, row, at, depth):
        flat = row[at]
        if type(flat) is not list or len(flat) % 2:
            raise VerifyError(label + " must be an array of name, expression pairs")
        mapping = {}
        names = []
        for i in range(0, len(flat), 2):
            name = flat[i]
            if type(name) is not str or name in mapping:
                raise VerifyError(label + ": names must be unique strings")
            mapping[name] = exprs.function(flat[i + 1])
            names.append(name)
        node[key] = mapping
        node[order] = names
    return field


def _kernel_on_error(exprs, node, row, at, depth):
    v = row[at]
    if type(v) is not int or not 0 <= v < len(KERNEL_ON_ERROR):
        raise VerifyError("%s on_error must be an index into %s" % (_where(row), ", ".join(KERNEL_ON_ERROR)))
    node["on_error"] = KERNEL_ON_ERROR[v]
    node["retry"] = None   # a loaded kernel step always has one (its row's mask may name it)


def _kernel_retry(exprs, node, row, at, depth):
    """[retries, delay_ms, 1 (fixed) or 2 (doubling delays)]."""
    retry = row[at:at + 3]
    what = _where(row)
    _uint(retry[0], what + " retry count", MAX_RETRIES)
    _uint(retry[1], what + " retry delay", 0x7FFFFFFF)
    if type(retry[2]) is not int or retry[2] not in (1, 2):
        raise VerifyError("%s retry backoff must be 1 (fixed) or 2 (exponential)" % what)
    node["retry"] = retry


def _timeout(exprs, node, row, at, depth):
    v = row[at]
    if type(v) is not int or v < 100 or v > 600000:
        raise VerifyError("%s timeout_ms must be an integer in [100, 600000]" % _where(row))
    node["timeout_ms"] = v


def _dataflow_op(exprs, node, row, at, depth):
    op = row[at]
    if type(op) is not int or not 0 <= op < len(DATAFLOW_OPS):
        raise VerifyError("unknown operation %r" % (op,))
    node["op"] = DATAFLOW_OPS[op]


def _display_kind(exprs, node, row, at, depth):
    # the source's spelling of the node, for listings; nothing runs by it
    if type(row[at]) is not str:
        raise VerifyError("a node's kind and on_error must be strings")
    node["kind"] = row[at]


def _dataflow_on_error(exprs, node, row, at, depth):
    on_error = row[at]
    if on_error is not None and type(on_error) is not str:
        raise VerifyError("a node's kind and on_error must be strings")
    node["on_error"] = "fail" if on_error is None else on_error


def _names(row, at, count):
    """Check that row[at:at + count] are strings (names a node's fields hold)."""
    for i in range(at, at + count):
        if type(row[i]) is not str:
            raise VerifyError("a node's names must be strings")


def _call(exprs, node, row, at, depth):
    _names(row, at, 2)
    node["capability"], node["call_name"] = row[at], row[at + 1]


def _item_policy(exprs, node, row, at, depth):
    _names(row, at, 1)
    node["item_policy"] = row[at]


def _dataflow_retry(exprs, node, row, at, depth):
    """(max, delay_ms, backoff, jitter)."""
    for i in range(4):
        v = row[at + i]
        number = type(v) is int or (i >= 2 and type(v) is float)
        if not number or v < 0:
            raise VerifyError("retry must be max, delay_ms (non-negative integers), backoff, jitter (numbers)")
    node["retry"] = (row[at], row[at + 1], row[at + 2], row[at + 3])


def _iteration(exprs, node, row, at, depth):
    node["over"] = exprs.function(row[at])
    _names(row, at + 1, 1)
    node["item_name"] = row[at + 1]
    if type(row[at + 2]) is not int or row[at + 2] < 0:
        raise VerifyError("batch_size must be a non-negative integer")
    node["batch_size"] = row[at + 2]


def _regions(layout, pair):
    """The field ``regions``, ``[name, rows, edges...]``: ``pair(name, graph)``
    each, the graphs' nodes of ``layout``."""
    def field(exprs, node, row, at, depth):
        flat = row[at]
        what = _where(row)
        if type(flat) is not list or len(flat) % 3:
            raise VerifyError("%s regions must be an array of name, nodes, edges triples" % what)
        regions = []
        for i in range(0, len(flat), 3):
            name = _str(flat[i], what + " region name")
            nodes, edges = _graph(exprs, flat[i + 1], flat[i + 2], layout, "%s region %r" % (what, name), depth + 1)
            regions.append(pair(name, {"nodes": nodes, "edges": edges}))
        node["regions"] = regions
    return field


def _list_pair(name, graph):
    return [name, graph]


def _tuple_pair(name, graph):
    return (name, graph)


# ---------------------------------------------------------------- sequential rows
# Section plan's codes (format.py SEQUENTIAL_OPS, TYPES; tests/test_plan_vm.py checks them).
SEQUENTIAL_OPS = ("call", "transform.filter", "transform.map", "transform.sort", "branch", "exit", "end")
TYPES = ("string", "int", "float", "boolean", "array", "object")
MAX_SEQ_RETRIES = 1000000   # a WorkflowSkill step's retries
MAX_DELAY_MS = 0xFFFFFFFF


def _sequential_op(exprs, node, row, at, depth):
    op = row[at]
    if type(op) is not int or not 0 <= op < len(SEQUENTIAL_OPS):
        raise VerifyError("%s: unknown step kind %r" % (_where(row), op))
    node["op"] = SEQUENTIAL_OPS[op]
    # the fields a row may leave out (its mask): None
    for key in ("retry", "each", "guard", "over", "args", "capability", "call_name", "body", "sort", "key",
                "mapping", "declared", "status"):
        node[key] = None


def _sequential_on_error(exprs, node, row, at, depth):
    v = row[at]
    if type(v) is not int or v not in (0, 1):
        raise VerifyError("%s on_error must be 0 (fail) or 1 (ignore)" % _where(row))
    node["on_error"] = "ignore" if v else "fail"


def _sequential_retry(exprs, node, row, at, depth):
    """(max, delay_ms, backoff)."""
    what = _where(row)
    _uint(row[at], what + " retry max", MAX_SEQ_RETRIES)
    _uint(row[at + 1], what + " retry delay", MAX_DELAY_MS)
    backoff = row[at + 2]
    if (type(backoff) is not float and type(backoff) is not int) or not 0 <= backoff <= 1e6:
        raise VerifyError("%s retry backoff must be a number in [0, 1e6]" % what)
    node["retry"] = (row[at], row[at + 1], backoff)


def _sequential_each(exprs, node, row, at, depth):
    node["each"] = {"delay_ms": _uint(row[at], _where(row) + " each delay", MAX_DELAY_MS)}
    node["over"] = exprs.function(row[at + 1])


def _block_field(key):
    def field(exprs, node, row, at, depth):
        node[key] = exprs.function(row[at])
    return field


def _loop_body(exprs, node, row, at, depth):
    """A filter's test, a map's object, a condition or an exit's output;
    a filter's or map's also as the fast loops compile it."""
    node["body"] = exprs.function(row[at])
    if exprs.machine is not None:   # a listing's plan runs nothing
        node["loop"] = (exprs.machine, row[at], _loops_not_yet)


def _sort(exprs, node, row, at, depth):
    path = row[at]
    if type(path) is not list or not path:
        raise VerifyError("%s sort path must be a non-empty array of names" % _where(row))
    _names(path, 0, len(path))
    if row[at + 1] is not True and row[at + 1] is not False:
        raise VerifyError("%s sort direction must be a boolean" % _where(row))
    node["sort"] = (tuple(path), row[at + 1])


def _key(exprs, node, row, at, depth):
    _names(row, at, 1)
    node["key"] = row[at]


def _declared(exprs, node, row, at, depth):
    node["declared"] = _types(row[at], _where(row) + " declared outputs")


def _types(flat, what):
    """``[name, type code...]`` -> ``((name, type name)...)``."""
    if type(flat) is not list or len(flat) % 2:
        raise VerifyError("%s must be name, type pairs" % what)
    out = []
    for i in range(0, len(flat), 2):
        _str(flat[i], what + " name")
        code = flat[i + 1]
        if type(code) is not int or not 0 <= code < len(TYPES):
            raise VerifyError("%s: type %r is not an index into %s" % (what, code, ", ".join(TYPES)))
        out.append((flat[i], TYPES[code]))
    return tuple(out)


def _status(exprs, node, row, at, depth):
    v = row[at]
    if type(v) is not int or v not in (0, 1):
        raise VerifyError("%s exit status must be 0 (success) or 1 (failed)" % _where(row))
    node["status"] = "failed" if v else "success"


_loops_not_yet = _seq.NOT_YET


# Section plan's codes (format.py KERNEL_ON_ERROR, DATAFLOW_OPS; tests/test_plan_vm.py checks them).
KERNEL_ON_ERROR = ("fail", "skip", "fallback")
DATAFLOW_OPS = (
    "trigger", "call", "assign", "noop", "sleep", "assert", "fail", "finish", "switch", "transform.map",
    "transform.filter", "transform.reduce", "transform.sort", "transform.dedupe", "transform.chunk", "parse",
    "validate", "foreach", "batch", "iterate", "subgraph", "parallel", "race",
)

# A node row's layout: "fixed" the decoders of its fixed fields (one value
# each), in row order; "optional" None (no field mask) or, by mask bit, how
# many row values a field takes and its decoder (the row: the fixed fields,
# the mask, the values of its set bits in bit order); "order" the node's
# keys in the order of flowc.plan when the row's order is not it.
def _layout(fixed, optional, order):
    counts = None if optional is None else tuple([count for count, _field in optional])
    return {"fixed": fixed, "optional": optional, "order": order, "counts": counts,
            "minimum": len(fixed) + (optional is not None),
            "masks": 0 if optional is None else 1 << len(optional)}


_SUB_STEP = (_text_field("id", False), _text_field("type", False), _text_field("role", True), _params_field,
             _text_field("capability", True), _text_field("name", True))
LAYOUTS = {
    "kernel": {
        "step": _layout(
            _SUB_STEP + (_kernel_on_error,),
            ((3, _kernel_retry), (1, _text_field("default_output", False)), (1, _expression_field("condition")),
             (1, _regions("sub-step", _list_pair)), (1, _timeout)),
            None),
        "sub-step": _layout(_SUB_STEP, None, None)},
    "dataflow": {
        "node": _layout(
            (_text_field("id", False), _dataflow_op, _display_kind, _dataflow_on_error,
             _pairs_field("attrs", "attr_order", "attrs")),
            ((1, _expression_field("guard")), (1, _pairs_field("inputs", "input_order", "a trigger's inputs")),
             (2, _call), (4, _dataflow_retry), (3, _iteration), (1, _item_policy), (1, _regions("node", _tuple_pair))),
            ("id", "op", "kind", "on_error", "guard", "inputs", "input_order", "attrs", "attr_order", "capability",
             "call_name", "retry", "over", "item_name", "item_policy", "batch_size", "regions"))},
    "sequential": {
        "step": _layout(
            (_text_field("id", False), _sequential_op, _sequential_on_error),
            ((3, _sequential_retry), (2, _sequential_each), (1, _block_field("guard")), (1, _block_field("args")),
             (2, _call), (1, _loop_body), (2, _sort), (1, _key), (1, _block_field("mapping")), (1, _declared),
             (1, _status)),
            None)},
}


def _node(exprs, row, layout, depth):
    """A node map from its row (see LAYOUTS)."""
    fixed = layout["fixed"]
    nfixed = len(fixed)
    if type(row) is not list or len(row) < layout["minimum"]:
        raise VerifyError("a node must be a row of at least %d fields" % layout["minimum"])
    if type(row[0]) is not str:
        raise VerifyError("node ids must be unique strings")
    counts = layout["counts"]
    mask = 0
    size = nfixed
    if counts is not None:
        mask = row[nfixed]
        if type(mask) is not int or not 0 <= mask < layout["masks"]:
            raise VerifyError("%s field mask must be 0..%d" % (_where(row), layout["masks"] - 1))
        size += 1
        m = mask
        bit = 0
        while m:
            if m & 1:
                size += counts[bit]
            m >>= 1
            bit += 1
    if len(row) != size:
        masked = "" if counts is None else " of field mask %d" % mask
        raise VerifyError("%s: a row%s has %d fields, not %d" % (_where(row), masked, size, len(row)))
    node = {}
    for i in range(nfixed):
        fixed[i](exprs, node, row, i, depth)
    if mask:
        optional = layout["optional"]
        at = nfixed + 1
        bit = 0
        while mask:
            if mask & 1:
                count, field = optional[bit]
                field(exprs, node, row, at, depth)
                at += count
            mask >>= 1
            bit += 1
    order = layout["order"]
    if order is None:
        return node
    return {key: node[key] for key in order if key in node}


def _graph(exprs, rows, flat_edges, layout_name, what, depth):
    """(nodes, edges) of a graph: node maps from their rows, its edges as
    ``[source id, target id, kind, label]``."""
    if depth > MAX_DEPTH:
        raise VerifyError("regions nest more than %d deep" % MAX_DEPTH)
    if type(rows) is not list:
        raise VerifyError("%s: a graph's nodes must be an array" % what)
    layout = exprs.layouts[layout_name]
    nodes = []
    ids = []
    seen = set()
    for row in rows:
        node = _node(exprs, row, layout, depth)
        if node["id"] in seen:
            raise VerifyError("node ids must be unique strings: %r appears twice" % node["id"])
        seen.add(node["id"])
        ids.append(node["id"])
        nodes.append(node)
    edges, why = _edges.unpack(flat_edges, ids)
    if why is not None:
        raise VerifyError("%s: %s" % (what, why))
    return nodes, edges


# ================================================================ run-wide fields


def _roles(roles):
    if not isinstance(roles, dict):
        raise VerifyError("roles must be a map")
    for rid in roles:
        _str(rid, "a role id")
        config = roles[rid]
        if not isinstance(config, dict):
            raise VerifyError("role %r must be a map" % rid)
        for key in config:
            _str(key, "a setting name of role %r" % rid)
            v = config[key]
            for item in (v if type(v) is list else [v]):
                _str(item, "role %r setting %r" % (rid, key))
    return roles


def _with_fallthrough(edges, ids):
    """The plan's edges from a kernel plan's (listed step by step, without
    ``fallthrough`` edges): each step's own edges, then, when none is a
    ``sequence`` edge and a step follows, its ``fallthrough`` edge to that step."""
    out = []
    at = 0
    for i in range(len(ids)):
        sequenced = False
        while at < len(edges) and edges[at][0] == ids[i]:
            if edges[at][2] == _edges.FALLTHROUGH:
                raise VerifyError("the plan: fallthrough edges are implied, not listed")
            sequenced = sequenced or edges[at][2] == _edges.SEQUENCE
            out.append(edges[at])
            at += 1
        if not sequenced and i + 1 < len(ids):
            out.append([ids[i], ids[i + 1], _edges.FALLTHROUGH, None])
    if at < len(edges):
        raise VerifyError("the plan: edges must be listed step by step, by their source")
    return out


def _kernel_fields(section, exprs):
    """``[roles, steps, edges]``: the edges without the implied fallthrough edges."""
    section = _list(section, "section plan ([roles, steps, edges])", 3)
    roles = _roles(section[0])
    nodes, edges = _graph(exprs, section[1], section[2], "step", "the plan", 0)
    return [("roles", roles), ("nodes", nodes), ("edges", _with_fallthrough(edges, [n["id"] for n in nodes]))]


def _limits(v):
    """The run's limits, from ``[steps, deadline_ms]``: {"steps": n or None, "deadline_ms": n or None}."""
    if type(v) is not list or len(v) != 2:
        raise VerifyError("limits must be [steps, deadline_ms]")
    for n in v:
        if n is not None and (type(n) is not int or n < 0):
            raise VerifyError("a limit must be a non-negative integer or nil")
    return {"steps": v[0], "deadline_ms": v[1]}


def _dataflow_fields(section, exprs):
    """``[defaults, reducers, input_schema, limits, nodes, edges]``."""
    if type(section) is not list or len(section) != 6:
        raise VerifyError("section plan must be [defaults, reducers, input_schema, limits, nodes, edges] or nil")
    schema = section[2]
    if schema is not None and not isinstance(schema, dict):
        raise VerifyError("input_schema must be a map")
    if type(section[4]) is not list:
        raise VerifyError("a graph's nodes must be an array")
    nodes, edges = _graph(exprs, section[4], section[5], "node", "the plan", 0)
    fields = [("defaults", _map(section[0], "defaults")), ("reducers", _map(section[1], "reducers")),
              ("input_schema", schema), ("nodes", nodes), ("edges", edges)]
    if section[3] is not None:
        fields.append(("limits", _limits(section[3])))
    return fields


def _node_index(v, n, what):
    if v is not None and (type(v) is not int or not 0 <= v < n):
        raise VerifyError("the plan: %s must be a node index or nil" % what)
    return v


def _sequential_edges(nodes, edges):
    """A sequential plan's edges: each step's one ``sequence`` edge, and a
    branch step's ``branch`` edges, labelled then or else, to later steps
    (so an arm never runs its conditional, and arms nest at most as deep
    as there are steps)."""
    at = {}
    for i in range(len(nodes)):
        at[nodes[i]["id"]] = i
    sequenced = {}
    for source, target, kind, label in edges:
        op = nodes[at[source]]["op"]
        if kind == _edges.SEQUENCE:
            if op == "end" or source in sequenced:
                raise VerifyError("the plan: step %r has two successors, or is the end" % (source,))
            sequenced[source] = target
        elif kind == _edges.BRANCH:
            if op != "branch":
                raise VerifyError("the plan: step %r has arms but is not a branch" % (source,))
            if label != "then" and label != "else":
                raise VerifyError("the plan: step %r: an arm is labelled then or else" % (source,))
            if at[target] <= at[source] or nodes[at[target]]["op"] == "end":
                raise VerifyError("the plan: step %r: an arm's steps are later steps" % (source,))
        else:
            raise VerifyError("the plan: %s edges are not sequential scheduling's" % kind)
    return sequenced


def _sequential_fields(section, exprs):
    """``[entry, terminal, inputs, outputs, nodes, edges]``."""
    section = _list(section, "section plan ([entry, terminal, inputs, outputs, nodes, edges])", 6)
    nodes, edges = _graph(exprs, section[4], section[5], "step", "the plan", 0)
    n = len(nodes)
    entry = _node_index(section[0], n, "the entry")
    terminal = _node_index(section[1], n, "the terminal")
    for i in range(n):
        if (nodes[i]["op"] == "end") != (i == terminal):
            raise VerifyError("the plan: the terminal, and it alone, is the end")
    entry_id = None if entry is None else nodes[entry]["id"]
    terminal_id = None if terminal is None else nodes[terminal]["id"]
    successor = _sequential_edges(nodes, edges)
    # the top-level sequence must end: from the entry along sequence edges, no step twice
    seen = {}
    step = entry_id
    while step is not None and step != terminal_id:
        if step in seen:
            raise VerifyError("the top-level sequence loops")
        seen[step] = True
        step = successor.get(step)
    inputs, outputs = _sequential_io(section, exprs)
    return [("entry", entry_id), ("terminal", terminal_id), ("nodes", nodes), ("edges", edges),
            ("inputs", inputs), ("outputs", outputs)]


def _sequential_io(section, exprs):
    """(inputs, outputs) of a sequential plan's section, checked."""
    flat = _list(section[2], "the inputs")
    if len(flat) % 3:
        raise VerifyError("the inputs must be name, type, default triples")
    inputs = []
    for i in range(0, len(flat), 3):
        name = _str(flat[i], "an input name")
        kind = flat[i + 1]
        if kind is not None:
            kind = _types([name, kind], "input %r" % name)[0][1]
        default = flat[i + 2]
        if default is None:
            default = _seq.MISSING
        elif type(default) is not int or not 0 <= default < len(exprs.consts):
            raise VerifyError("input %r: a default must be a constant index or nil" % name)
        else:
            default = exprs.consts[default]
        inputs.append((name, kind, default))
    outputs = _list(section[3], "the outputs ([keys, block])", 2)
    keys = _list(outputs[0], "the output keys")
    _names(keys, 0, len(keys))
    block = None if outputs[1] is None else exprs.function(outputs[1])
    return inputs, (keys, block)


# ---------------------------------------------------------------- the quick check of sequential rows
#
# A large sequential plan is checked in one pass over its rows, each value
# kept by kind (ids, kinds, block indices, names) and each kind checked at
# once; its nodes and edges are made when the plan is first asked for
# (conversion only). Any value the quick check doubts sends the plan
# through the decoder above, which says what is wrong: so the quick check
# passes no plan the decoder refuses.

# by mask bit of LAYOUTS["sequential"]["step"]: what the field's values are
_QUICK_FIELDS = ("retry", "each", "block", "block", "names", "block", "sort", "names", "block", "declared",
                 "status")


def _all_of(values, kind):
    return not values or set(map(type, values)) == {kind}


def _ints_below(values, high):
    return _all_of(values, int) and (not values or (min(values) >= 0 and max(values) < high))


def _quick_retry(columns, at, names):
    counts, delays, backoffs = columns[at], columns[at + 1], columns[at + 2]
    return _ints_below(counts, MAX_SEQ_RETRIES + 1) and _ints_below(delays, MAX_DELAY_MS + 1) \
        and set(map(type, backoffs)) <= {int, float} and not [1 for b in backoffs if not 0 <= b <= 1e6]


def _quick_delay(columns, at, names):
    return _ints_below(columns[at], MAX_DELAY_MS + 1)


def _quick_sort(columns, at, names):
    paths = columns[at]
    if not _all_of(paths, list) or min(map(len, paths)) < 1 or not _all_of(columns[at + 1], bool):
        return False
    for path in paths:
        names += path
    return True


def _quick_declared(columns, at, names):
    flats = columns[at]
    if not _all_of(flats, list) or [1 for flat in flats if len(flat) % 2]:
        return False
    codes = []
    for flat in flats:
        names += flat[0::2]
        codes += flat[1::2]
    return _ints_below(codes, len(TYPES))


def _quick_status(columns, at, names):
    return _ints_below(columns[at], 2)


def _quick_spec(mask, counts):
    """(row length, positions of block indices, positions of names, other
    checks as (check, position)) of a step row of field mask ``mask``."""
    size = 4
    blocks = []
    names = []
    other = []
    for bit in range(len(counts)):
        if not mask >> bit & 1:
            continue
        kind = _QUICK_FIELDS[bit]
        if kind == "block":
            blocks.append(size)
        elif kind == "names":
            names += range(size, size + counts[bit])
        elif kind == "each":
            other.append((_quick_delay, size))
            blocks.append(size + 1)
        else:
            other.append(({"retry": _quick_retry, "sort": _quick_sort, "declared": _quick_declared,
                           "status": _quick_status}[kind], size))
        size += counts[bit]
    return size, blocks, names, other


_STEP_KINDS = set(range(len(SEQUENTIAL_OPS)))
_ON_ERRORS = {0, 1}


def _quick_rows(rows, nblocks):
    """The kinds of the step rows, or None when the quick check doubts one.
    The rows of one field mask are checked together, column by column."""
    layout = LAYOUTS["sequential"]["step"]
    if not rows:
        return []
    if not _all_of(rows, list):
        return None
    fixed = zip(*rows)   # the fixed fields and the mask, column by column
    try:
        ids, ops, on_error, masks = next(fixed), list(next(fixed)), next(fixed), next(fixed)
    except StopIteration:   # a row of fewer values
        return None
    if not _all_of(masks, int):
        return None
    distinct = set(masks)
    if min(distinct) < 0 or max(distinct) >= layout["masks"]:
        return None
    groups = {}
    for mask in distinct:
        groups[mask] = []
    for row, mask in zip(rows, masks):
        groups[mask].append(row)
    blocks = []
    names = []
    for mask, group in groups.items():
        size, at_blocks, at_names, other = _quick_spec(mask, layout["counts"])
        if set(map(len, group)) != {size}:
            return None
        columns = list(zip(*group))
        for at in at_blocks:
            blocks += columns[at]
        for at in at_names:
            names += columns[at]
        for check, at in other:
            if not check(columns, at, names):
                return None
    if not (_all_of(ids, str) and len(set(ids)) == len(ids) and _all_of(ops, int)
            and set(ops) <= _STEP_KINDS and _all_of(on_error, int) and set(on_error) <= _ON_ERRORS
            and _ints_below(blocks, nblocks) and _all_of(names, str)):
        return None
    return ops


_END = SEQUENTIAL_OPS.index("end")
_BRANCH = SEQUENTIAL_OPS.index("branch")
_SEQUENCE_EDGE = _edges.KINDS.index(_edges.SEQUENCE)
_BRANCH_EDGE = _edges.KINDS.index(_edges.BRANCH)


def _quick_successors(flat, ops):
    """Each step's successor (None: none) of a sequential plan's edges, or
    None when the quick check doubts one (_sequential_edges's checks)."""
    n = len(ops)
    if type(flat) is not list or len(flat) % 4:
        return None
    sources, targets, kinds, labels = flat[0::4], flat[1::4], flat[2::4], flat[3::4]
    if not (_ints_below(sources, n) and _ints_below(targets, n) and _all_of(kinds, int)
            and set(map(type, labels)) <= {str, type(None)}):
        return None
    successor = [None] * n
    for source, target, kind, label in zip(sources, targets, kinds, labels):
        if kind == _SEQUENCE_EDGE:
            if ops[source] == _END or successor[source] is not None:
                return None
            successor[source] = target
        elif kind != _BRANCH_EDGE or ops[source] != _BRANCH or (label != "then" and label != "else") \
                or target <= source or ops[target] == _END:
            return None
    return successor


def _quick_index(v, n):
    return v is None or (type(v) is int and 0 <= v < n)


def _sequential_quick(section, exprs):
    """True when a sequential plan's section passes every check of
    :func:`_sequential_fields` (which makes its fields later); False when
    the quick check doubts it."""
    if type(section) is not list or len(section) != 6 or type(section[4]) is not list:
        return False
    ops = _quick_rows(section[4], len(exprs.exprs))
    if ops is None:
        return False
    successor = _quick_successors(section[5], ops)
    n = len(ops)
    entry, terminal = section[0], section[1]
    if successor is None or not _quick_index(entry, n) or not _quick_index(terminal, n):
        return False
    if ops.count(_END) != (terminal is not None) or (terminal is not None and ops[terminal] != _END):
        return False
    seen = [False] * n
    step = entry
    while step is not None and step != terminal:
        if seen[step]:
            return False
        seen[step] = True
        step = successor[step]
    _sequential_io(section, exprs)   # cheap: checked as the decoder checks them
    return True


# ================================================================ the models' rows

# Each plan-run model, by the plan's model: "expressions" (EXPRESSIONS),
# "plan" the decoder of section plan (its run-wide fields, nodes and
# edges, as (key, value) pairs in the order of flowc.plan), "bare" whether
# a program may hold expressions only (no plan: nil), "start" the
# scheduler's new_run and "options" the run's options after inputs and
# host, in the order the entry points take them positionally.
MODELS = {
    "kernel": {"expressions": EXPRESSIONS["kernel"], "plan": _kernel_fields, "bare": False,
               "start": _k.new_run,
               "options": ("max_instructions", "max_iterations", "max_host_calls")},
    "dataflow": {"expressions": EXPRESSIONS["dataflow"], "plan": _dataflow_fields, "bare": True,
                 "start": _d.new_run,
                 "options": ("trigger", "payload", "max_instructions", "max_iterations", "max_host_calls")},
    "sequential": {"expressions": EXPRESSIONS["sequential"], "plan": _sequential_fields, "bare": False,
                   "start": _seq.new_run, "options": ("max_instructions", "max_iterations", "max_host_calls")},
}


# The quick check of a model's section plan (True: it passes every check
# of the model's "plan", whose fields are then made when the plan is first
# asked for); a model without a row has its fields made at load.
QUICK = {"sequential": _sequential_quick}


def plan_fields(model, section, exprs):
    """The plan's fields of ``model`` from section plan, verified, as (key,
    value) pairs in the order of flowc.plan. ``exprs`` turns the plan's
    expressions into what the plan holds: ``function(ref)`` an
    expression, ``params(flat, what)`` a kernel step's parameters (the
    loader: closures; a listing: their references)."""
    exprs.layouts = LAYOUTS[model]
    return MODELS[model]["plan"](section, exprs)


class Program:
    """A loaded, verified program of a plan-run model; ``run(inputs, host)``
    gives the run record. A dataflow program may hold expressions only
    (no plan): ``evaluate`` runs one."""

    def __init__(self, model, name, sections):
        row = MODELS[model]
        self.model = model
        self.row = row
        self.name = name
        self.expressions = _Expressions(row["expressions"], sections)
        self.machine = self.expressions.machine
        section = sections.get("plan")
        self._plan = None
        self._unmade = None
        if section is None and row["bare"]:
            return
        if type(name) is not str:
            raise VerifyError("a program with a plan names its workflow")
        quick = QUICK.get(model)
        if quick is not None and quick(section, self.expressions):
            self._unmade = section    # verified: its fields are made when first asked for
        else:
            self._plan = self._fields(section)

    def _fields(self, section):
        plan = {"model": self.model, "name": self.name}
        for key, value in plan_fields(self.model, section, self.expressions):
            plan[key] = value
        return plan

    @property
    def plan(self):
        """The plan of flowc.plan, its expressions closures over the machine (None: expressions only)."""
        if self._unmade is not None:
            self._plan = self._fields(self._unmade)
            self._unmade = None
        return self._plan

    def function(self, index):
        """Expression ``index`` as a Python callable ``f(env, *args)``."""
        return self.expressions.function(index)

    def evaluate(self, index, env, args=()):
        return self.function(index)(env, *args)

    def new_run(self, inputs, *args, **options):
        """The run on the kernel, not started (a driver answers its
        requests); its expressions spend this run's fuel until the next
        run starts. The options (after ``inputs``; after ``host`` for the
        entry points below): kernel programs ``max_instructions,
        max_iterations, max_host_calls, concurrent``; dataflow programs
        ``trigger, payload`` first."""
        return self._start(inputs, args, options, False)

    def _start(self, inputs, args, options, concurrent):
        if self.plan is None:
            raise VerifyError("this program holds expressions only")
        names = self.row["options"] + ("concurrent",)
        o = {"trigger": None, "payload": None, "max_instructions": None, "max_iterations": None,
             "max_host_calls": None, "concurrent": concurrent}
        for i in range(len(args)):
            o[names[i]] = args[i]
        for key in options:
            if key not in names:
                raise TypeError("unexpected argument %r" % key)
            o[key] = options[key]
        r = self.row["start"](self.plan, inputs, o["trigger"], o["payload"], o["max_iterations"],
                              o["max_host_calls"], o["concurrent"], o["max_instructions"])
        self.machine.start_run(r.fuel)   # its expressions spend the run's instruction fuel
        return r

    def _drive(self, drive, r, host):
        try:
            return drive(r, host)
        finally:
            self.machine.end_run()

    def run(self, inputs, host, *args, **options):
        """The run record. Fuel: at most ``max_instructions`` expression
        instructions in the whole run, ``max_iterations`` step dispatches
        or loop iterations and ``max_host_calls`` host calls (None: the
        defaults); past one the run fails with "fuel exhausted"."""
        return self._drive(_drivers.drive_sync, self._start(inputs, args, options, False), host)

    def run_virtual(self, inputs, script, *args, **options):
        """The record of the run on a virtual clock (docs/runtime.md)."""
        host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
        return self._drive(_drivers.drive_virtual, self._start(inputs, args, options, True), host)

    def run_async(self, inputs, host, *args, **options):
        """A coroutine: the record of the run driven by asyncio (docs/runtime.md)."""
        from flowc.runtime.aio import drive_async  # CPython only: MicroPython has no such asyncio

        async def go():
            r = self._start(inputs, args, options, True)
            try:
                return await drive_async(r, host)
            finally:
                self.machine.end_run()
        return go()


def load_plan(model, data, name, table):
    """The :class:`Program` of an opened container (vm.open_container) of ``model``."""
    return Program(model, name, {key: read_section(data, table, key) for key in table})
