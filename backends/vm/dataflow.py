"""Dataflow programs on the VM: load, verify and run (the instruction dialect).

A dataflow program is the VM's form of an instruction workflow: the
workflow's graphs as data (the same *plan* the Python backend generates)
whose expressions are blocks of the VM's expression machine
(:mod:`expr_vm`). Loading verifies every block and the plan, then turns
each expression into a closure over the machine; running hands the plan to the dataflow
scheduler (:mod:`dataflow_run`) that the Python backend uses too, so both
backends give the same run record.

In the container (docs/bytecode.md) a dataflow program is a ``dataflow``
program with the sections ``consts``, ``names``, ``keys``, ``code`` (the
CEL blocks), ``exprs`` (``block, params, slots`` each, one flat array) and ``plan``
(the plan of flowc.plan without its model and name as rows: node rows with
a field mask, edges as flat index quadruples; :func:`plan_fields` decodes
it; nil for a program of bare expressions); the header holds the
workflow's name.

Standard library only (plus cel, dataflow_run, expr_vm, the edge index of
flowc.runtime and the VM's container reader); MicroPython-compatible.
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

try:
    from flowc.backends.vm import expr_cel as _vc
    from flowc.backends.vm import expr_vm as _v
    from flowc.backends.vm import sequential as _vm
    from flowc.runtime import cel as _c
    from flowc.runtime import dataflow_run as _d
    from flowc.runtime import drivers as _drivers
    from flowc.runtime import edges as _edges
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import cel as _c
    import dataflow_run as _d
    import drivers as _drivers
    import edges as _edges
    import expr_cel as _vc
    import expr_vm as _v
    import sequential as _vm

# Section plan's codes (format.py DATAFLOW_OPS, NODE_FIELDS; docs/bytecode.md section 9).
OPS = (
    "trigger", "call", "assign", "noop", "sleep", "assert", "fail", "finish", "switch", "transform.map",
    "transform.filter", "transform.reduce", "transform.sort", "transform.dedupe", "transform.chunk", "parse",
    "validate", "foreach", "batch", "iterate", "subgraph", "parallel", "race",
)
GUARD, INPUTS, CALL, RETRY, ITERATION, ITEM_POLICY, REGIONS = 1, 2, 4, 8, 16, 32, 64
# The row values of each mask bit, bit 0 first.
_FIELD_COUNTS = (1, 1, 2, 4, 3, 1, 1)
MAX_DEPTH = 8


class DataflowError(_vm.VerifyError):
    """A dataflow program that does not load (bad magic, checksum, shape or code)."""


def _const(encoded):
    """A pool constant: a value that is no array as it is (bin: bytes), else [tag, value]."""
    if type(encoded) is not list:
        return encoded
    if len(encoded) != 2 or encoded[0] not in ("v", "u", "b"):
        raise DataflowError("an array constant must be [tag, value]")
    tag, value = encoded
    if tag == "u":
        if type(value) is not int or value < 0:
            raise DataflowError("a uint constant must be a non-negative integer")
        return _c.UInt(value)
    if tag == "b":
        if type(value) is not bytes:
            raise DataflowError("a bytes constant must be msgpack bin")
        return value
    return value


class Program:
    """A loaded, verified dataflow program."""

    def __init__(self, body):
        for key in ("consts", "names", "keys", "blocks", "exprs"):
            if type(body.get(key)) is not list:
                raise DataflowError("section %s must be an array" % key)
        self.consts = [_const(c) for c in body["consts"]]
        self.names = body["names"]
        self.keys = body["keys"]
        blocks = body["blocks"]
        for b in blocks:
            if type(b) is not bytes:
                raise DataflowError("a block must be msgpack bin")
        for n in self.names + self.keys:
            if type(n) is not str:
                raise DataflowError("names and keys are strings")
        self.exprs = []
        slots_of = [0] * len(blocks)
        flat = body["exprs"]
        if len(flat) % 3:
            raise DataflowError("section exprs must be block, params, slots triples")
        for i in range(0, len(flat), 3):
            e = flat[i:i + 3]
            if not all(type(x) is int and x >= 0 for x in e) or e[0] >= len(blocks) or e[1] > e[2]:
                raise DataflowError("an expression must be block, params, slots")
            self.exprs.append((e[0], e[1], e[2]))
            slots_of[e[0]] = max(slots_of[e[0]], e[2])
        # A macro body shares its caller's frame: verify every block against the largest frame.
        frame = max(slots_of) if slots_of else 0
        decoded = _v.verify(blocks, len(self.consts), self.names, self.keys, frame, _vc.PROFILE)
        self.machine = _v.Machine(self.consts, self.names, self.keys, decoded)
        self.frame = frame
        self.workflow = body.get("workflow")
        plan = body.get("plan")
        self.plan = None
        if plan is not None:
            if type(self.workflow) is not str:
                raise DataflowError("a program with a graph names its workflow")
            self.plan = {"model": "dataflow", "name": self.workflow}
            for key, value in plan_fields(plan, self.function):
                self.plan[key] = value

    def function(self, index):
        """Expression ``index`` as a Python callable ``f(env, *args)``."""
        if type(index) is not int or not 0 <= index < len(self.exprs):
            raise DataflowError("an expression index is out of range")
        block, params, _slots = self.exprs[index]
        machine = self.machine
        frame = self.frame

        def f(env, *args):
            if len(args) != params:
                raise _c.CelError("expression expects %d arguments, got %d" % (params, len(args)))
            return machine.evaluate(block, frame, env, args)
        return f

    def evaluate(self, index, env, args=()):
        return self.function(index)(env, *args)

    def new_run(self, inputs, trigger=None, payload=None, max_instructions=None, max_iterations=None,
                max_host_calls=None, concurrent=False):
        """The run on the kernel, not started (a driver answers its requests);
        its CEL instructions spend this run's fuel until the next run starts."""
        if self.plan is None:
            raise DataflowError("this program holds expressions only")
        r = _d.new_run(self.plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent,
                       max_instructions)
        self.machine.start_run(r.fuel)
        return r

    def run(self, inputs, host, trigger=None, payload=None, max_instructions=None, max_iterations=None,
            max_host_calls=None):
        """The run record. Fuel: at most ``max_instructions`` CEL instructions
        in the whole run, ``max_iterations`` loop iterations and
        ``max_host_calls`` host calls (None: the defaults); past one the
        run fails with "fuel exhausted"."""
        r = self.new_run(inputs, trigger, payload, max_instructions, max_iterations, max_host_calls)
        try:
            return _drivers.drive_sync(r, host)
        finally:
            self.machine.end_run()

    def run_async(self, inputs, host, trigger=None, payload=None, max_instructions=None, max_iterations=None,
                  max_host_calls=None, concurrent=True):
        """A coroutine: the record of the run driven by asyncio (docs/runtime.md)."""
        if self.plan is None:
            raise DataflowError("this program holds expressions only")
        from flowc.runtime.aio import drive_async  # CPython only: MicroPython has no such asyncio

        async def go():
            r = self.new_run(inputs, trigger, payload, max_instructions, max_iterations, max_host_calls, concurrent)
            try:
                return await drive_async(r, host)
            finally:
                self.machine.end_run()
        return go()

    def run_virtual(self, inputs, script, trigger=None, payload=None, max_instructions=None,
                    max_iterations=None, max_host_calls=None, concurrent=True):
        """The record of the run on a virtual clock (docs/runtime.md)."""
        r = self.new_run(inputs, trigger, payload, max_instructions, max_iterations, max_host_calls, concurrent)
        host = script if hasattr(script, "answer") else _drivers.VirtualHost(script)
        try:
            return _drivers.drive_virtual(r, host)
        finally:
            self.machine.end_run()


def plan_fields(section, expr):
    """The plan's fields, as (key, value) pairs in the order of flowc.plan,
    from section plan ``[defaults, reducers, input_schema, limits, nodes,
    edges]`` (docs/bytecode.md section 9), verified; ``expr`` turns an
    expression index into what the plan holds (the loader: a closure)."""
    if type(section) is not list or len(section) != 6:
        raise DataflowError("section plan must be [defaults, reducers, input_schema, limits, nodes, edges] or nil")
    schema = section[2]
    if schema is not None and not isinstance(schema, dict):
        raise DataflowError("input_schema must be a map")
    nodes, edges = _graph(section[4], section[5], expr, 0)
    fields = [("defaults", _obj(section[0], "defaults")), ("reducers", _obj(section[1], "reducers")),
              ("input_schema", schema), ("nodes", nodes), ("edges", edges)]
    if section[3] is not None:
        fields.append(("limits", _limits(section[3])))
    return fields


def _limits(v):
    """The run's limits, from ``[steps, deadline_ms]``: {"steps": n or None, "deadline_ms": n or None}."""
    if type(v) is not list or len(v) != 2:
        raise DataflowError("limits must be [steps, deadline_ms]")
    for n in v:
        if n is not None and (type(n) is not int or n < 0):
            raise DataflowError("a limit must be a non-negative integer or nil")
    return {"steps": v[0], "deadline_ms": v[1]}


def _graph(rows, edges, expr, depth):
    """(nodes, edges) of a graph: node maps from their rows, edges as
    ``[source id, target id, kind, label]``."""
    if depth > MAX_DEPTH:
        raise DataflowError("regions nest more than %d deep" % MAX_DEPTH)
    if type(rows) is not list:
        raise DataflowError("a graph's nodes must be an array")
    nodes = []
    ids = []
    seen = set()
    for row in rows:
        node = _node(row, expr, depth)
        if node["id"] in seen:
            raise DataflowError("node ids must be unique strings")
        seen.add(node["id"])
        ids.append(node["id"])
        nodes.append(node)
    return nodes, _edge_list(edges, ids)


def _edge_list(flat, ids):
    rows, why = _edges.unpack(flat, ids)
    if why is not None:
        raise DataflowError(why)
    return rows


def _node(row, expr, depth):
    """A node map from ``[id, op, kind, on_error, attrs, mask, fields...]``,
    its keys in the order of flowc.plan."""
    if type(row) is not list or len(row) < 6:
        raise DataflowError("a node must be [id, op, kind, on_error, attrs, mask, fields...]")
    nid, op, kind, on_error, mask = row[0], row[1], row[2], row[3], row[5]
    if type(nid) is not str:
        raise DataflowError("node ids must be unique strings")
    if type(op) is not int or not 0 <= op < len(OPS) or OPS[op] not in _d._OPS:
        raise DataflowError("unknown operation %r" % (op,))
    if type(kind) is not str or (on_error is not None and type(on_error) is not str):
        raise DataflowError("a node's kind and on_error must be strings")
    if type(mask) is not int or not 0 <= mask < 1 << len(_FIELD_COUNTS):
        raise DataflowError("a node's field mask must be 0..%d" % ((1 << len(_FIELD_COUNTS)) - 1))
    size = 6
    for bit in range(len(_FIELD_COUNTS)):
        if mask & (1 << bit):
            size += _FIELD_COUNTS[bit]
    if len(row) != size:
        raise DataflowError("node %r: a row of field mask %d has %d fields, not %d" % (nid, mask, size, len(row)))
    node = {"id": nid, "op": OPS[op], "kind": kind, "on_error": "fail" if on_error is None else on_error}
    at = 6
    if mask & GUARD:
        node["guard"] = expr(row[at])
        at += 1
    if mask & INPUTS:
        node["inputs"], node["input_order"] = _pairs(row[at], expr, "a trigger's inputs")
        at += 1
    node["attrs"], node["attr_order"] = _pairs(row[4], expr, "attrs")
    return _optional(node, row, at, mask, expr, depth)


def _optional(node, row, at, mask, expr, depth):
    """The node's fields after its attrs, from ``row[at:]``."""
    if mask & CALL:
        node["capability"], node["call_name"] = _text(row[at]), _text(row[at + 1])
        at += 2
    if mask & RETRY:
        node["retry"] = _retry(row[at:at + 4])
        at += 4
    if mask & ITERATION:
        node["over"], node["item_name"] = expr(row[at]), _text(row[at + 1])
        size = row[at + 2]
        if type(size) is not int or size < 0:
            raise DataflowError("batch_size must be a non-negative integer")
        at += 3
    if mask & ITEM_POLICY:
        node["item_policy"] = _text(row[at])
        at += 1
    if mask & ITERATION:
        node["batch_size"] = size
    if mask & REGIONS:
        node["regions"] = _regions(row[at], expr, depth)
    return node


def _regions(flat, expr, depth):
    """``[(name, {nodes, edges})...]`` from ``[name, nodes, edges...]``."""
    if type(flat) is not list or len(flat) % 3:
        raise DataflowError("regions must be an array of name, nodes, edges triples")
    out = []
    for i in range(0, len(flat), 3):
        nodes, edges = _graph(flat[i + 1], flat[i + 2], expr, depth + 1)
        out.append((_text(flat[i]), {"nodes": nodes, "edges": edges}))
    return out


def _pairs(flat, expr, what):
    """({name: expr(index)}, [name...]) from ``[name, index...]``."""
    if type(flat) is not list or len(flat) % 2:
        raise DataflowError(what + " must be an array of name, expression pairs")
    mapping = {}
    order = []
    for i in range(0, len(flat), 2):
        name = flat[i]
        if type(name) is not str or name in mapping:
            raise DataflowError(what + ": names must be unique strings")
        mapping[name] = expr(flat[i + 1])
        order.append(name)
    return mapping, order


def _retry(values):
    """(max, delay_ms, backoff, jitter)."""
    for i in range(4):
        v = values[i]
        number = type(v) is int or (i >= 2 and type(v) is float)
        if not number or v < 0:
            raise DataflowError("retry must be max, delay_ms (non-negative integers), backoff, jitter (numbers)")
    return (values[0], values[1], values[2], values[3])


def _text(v):
    if type(v) is not str:
        raise DataflowError("a node's names must be strings")
    return v


def _obj(v, what):
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise DataflowError("%s must be a map" % what)
    return v


def load(data):
    """Decode and verify a dataflow program; VerifyError when it does not load."""
    return _vm.guarded(_load, data)


def _load(data):
    model, name, table = _vm.open_container(data)
    if model != "dataflow":
        raise DataflowError("a %s program: this loader runs dataflow programs" % model)
    return load_dataflow(data, name, table)


def load_dataflow(data, name, table):
    """The :class:`Program` of an opened container (vm.open_container)."""
    plan = _vm.read_section(data, table, "plan")
    body = {"plan": plan, "workflow": name}
    for key in ("consts", "names", "keys", "exprs"):
        body[key] = _vm.read_section(data, table, key)
    body["blocks"] = _vm.read_section(data, table, "code")
    return Program(body)
