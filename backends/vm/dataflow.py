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
CEL blocks), ``exprs`` (``[block, params, slots]`` each) and ``plan`` (a
map with ``defaults``, ``reducers``, ``input_schema``, ``nodes`` and
``edges``: the plan of flowc.plan without its model and name, or nil for
a program of bare expressions); the header holds the workflow's name.

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

_NODE_KEYS = ("id", "op", "kind", "on_error", "attrs", "attr_order")


class DataflowError(_vm.VerifyError):
    """A dataflow program that does not load (bad magic, checksum, shape or code)."""


def _const(encoded):
    if type(encoded) is not list or len(encoded) != 2 or encoded[0] not in ("v", "u", "b"):
        raise DataflowError("a constant must be [tag, value]")
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
        for e in body["exprs"]:
            if type(e) is not list or len(e) != 3 or not all(type(x) is int and x >= 0 for x in e) \
                    or e[0] >= len(blocks) or e[1] > e[2]:
                raise DataflowError("an expression must be [block, params, slots]")
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
            schema = plan.get("input_schema")
            if schema is not None and not isinstance(schema, dict):
                raise DataflowError("input_schema must be a map")
            graph = self._graph(plan, 0)
            self.plan = {"model": "dataflow", "name": self.workflow,
                         "defaults": _obj(plan.get("defaults"), "defaults"),
                         "reducers": _obj(plan.get("reducers"), "reducers"), "input_schema": schema,
                         "nodes": graph["nodes"], "edges": graph["edges"]}
            if plan.get("limits") is not None:
                self.plan["limits"] = _limits(plan["limits"])

    def function(self, index):
        """Expression ``index`` as a Python callable ``f(env, *args)``."""
        if type(index) is not int or index >= len(self.exprs):
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

    def _graph(self, graph, depth):
        if depth > 8 or not isinstance(graph, dict) or type(graph.get("nodes")) is not list:
            raise DataflowError("a graph must be {nodes, edges}")
        out_nodes = []
        ids = set()
        for node in graph["nodes"]:
            if not isinstance(node, dict) or not all(k in node for k in _NODE_KEYS):
                raise DataflowError("a node misses one of %s" % ", ".join(_NODE_KEYS))
            if type(node["id"]) is not str or node["id"] in ids:
                raise DataflowError("node ids must be unique strings")
            ids.add(node["id"])
            if node["op"] not in _d._OPS:
                raise DataflowError("unknown operation %r" % (node["op"],))
            n = {}
            for key in node:
                n[key] = node[key]
            attrs = {}
            if not isinstance(node["attrs"], dict):
                raise DataflowError("attrs must be a map")
            for key in node["attrs"]:
                attrs[key] = self.function(node["attrs"][key])
            n["attrs"] = attrs
            for key in ("guard", "over"):
                if node.get(key) is not None:
                    n[key] = self.function(node[key])
            if node.get("inputs") is not None:
                if not isinstance(node["inputs"], dict):
                    raise DataflowError("a trigger's inputs must be a map")
                mapping = {}
                for key in node["inputs"]:
                    mapping[key] = self.function(node["inputs"][key])
                n["inputs"] = mapping
            if node.get("retry") is not None:
                r = node["retry"]
                if type(r) is not list or len(r) != 4:
                    raise DataflowError("retry must be [max, delay, backoff, jitter]")
                n["retry"] = tuple(r)
            if node.get("regions") is not None:
                n["regions"] = [(name, self._graph(g, depth + 1)) for name, g in node["regions"]]
            out_nodes.append(n)
        why = _edges.problem(graph.get("edges"), ids)
        if why is not None:
            raise DataflowError(why)
        return {"nodes": out_nodes, "edges": graph["edges"]}

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


def _limits(v):
    """The run's limits: {"steps": n or None, "deadline_ms": n or None}."""
    if not isinstance(v, dict):
        raise DataflowError("limits must be a map")
    out = {}
    for key in ("steps", "deadline_ms"):
        n = v.get(key)
        if n is not None and (type(n) is not int or n < 0):
            raise DataflowError("limits." + key + " must be a non-negative integer")
        out[key] = n
    return out


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
    if plan is not None and not isinstance(plan, dict):
        raise DataflowError("section plan must be a map or nil")
    body = {"plan": plan, "workflow": name}
    for key in ("consts", "names", "keys", "exprs"):
        body[key] = _vm.read_section(data, table, key)
    body["blocks"] = _vm.read_section(data, table, "code")
    return Program(body)
