"""WorkflowSkill's steps on the VM: the step function of a plan row.

A sequential program (docs/bytecode.md section 2) holds each step's body
as data: its kind (call, transform.filter/map/sort, branch, exit), the
call's capability and name, its retry, each and on_error, and a block of
the expression machine per value (guard, each list, inputs, filter test,
map object, condition, exit output, output mapping). :func:`new_run`
gives the run of :mod:`flowc.runtime.sequence_run` -- the walk, the arms,
the step records, the retry loop, the each rule, the outputs, the kernel
and drivers the generated Python modules run on -- with one step function
per row: what the generated step function does, written once per kind.

A filter's or map's block is compiled into closures when the fast loops
(plan_loops.py, an optional part: ``BY_FEATURE``) are there.

Standard library only; MicroPython-compatible.
"""

try:
    from flowc.backends.vm import plan_loops as _loops
    from flowc.runtime import sequence_run as _s
    from flowc.runtime.wfs import MISSING, js_boolean, transform_items, wfs_sort
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import plan_loops as _loops
    import sequence_run as _s
    from wfs import MISSING, js_boolean, transform_items, wfs_sort


NOT_YET = _loops._NOT_YET   # a row's filter or map loop not yet compiled


def _true(v):
    """JavaScript's Boolean(v): the guards', conditions' and filters' test."""
    return v is True or (v is not False and js_boolean(v))


def _env(ctx, item, index, result):
    return {"inputs": ctx.inputs, "steps": ctx.steps, "item": item, "index": index, "result": result}


def _items(node, ctx, items, env):
    """A filter's kept items or a map's values, one item (and one iteration
    of fuel) at a time, or by the compiled loop when there is one."""
    if node["op"] == "transform.sort":
        path, descending = node["sort"]
        return wfs_sort(items, path, descending)
    body = node["body"]
    keep = node["op"] == "transform.filter"
    charged = ctx.charge(items)
    out = []
    start = 0
    if charged is items and _loops.FAST_LOOPS:
        start, out = _loops.run(node, items, env, keep)
    if start:
        charged = items[start:]
    index = start
    for item in charged:
        env["item"] = item
        env["index"] = index
        v = body(env)
        if keep:
            if _true(v):
                out.append(item)
        else:
            out.append(v)
        index += 1
    return out


def _dispatch(node, ctx, env):
    """The step's output from its inputs: the call or the transform, the
    output mapping, the declared output types (a generator)."""
    args = node["args"](env)
    if node["call_name"] is not None:
        raw = yield from ctx.call(node["capability"], node["call_name"], args, node["retry"])
    else:
        raw = {node["key"]: _items(node, ctx, transform_items(args), _env(ctx, None, None, None))}
    mapping = node["mapping"]
    if mapping is None:
        output = raw
    else:
        env["result"] = raw
        output = mapping(env)
    if node["declared"]:
        _s.check_output(node["id"], output, node["declared"])
    return output


def _skips(node, env):
    guard = node["guard"]
    return guard is not None and not _true(guard(env))


def _plain_step(node):
    sid = node["id"]
    ignore = node["on_error"] == "ignore"

    def step(ctx):
        ctx.begin(sid)
        env = _env(ctx, None, None, None)
        try:
            if _skips(node, env):
                return ctx.skip(sid)
            output = yield from _dispatch(node, ctx, env)
        except _s.STEP_ERRORS as exc:
            return ctx.fail(sid, exc, ignore)
        return ctx.done(sid, output)
    return step


def _each_step(node):
    sid = node["id"]
    ignore = node["on_error"] == "ignore"
    delay = node["each"]["delay_ms"]

    def step(ctx):
        ctx.begin(sid)
        env = _env(ctx, None, None, None)
        try:
            if _skips(node, env):
                return ctx.skip(sid)
            over = _s.each_items(node["over"](env))
        except _s.STEP_ERRORS as exc:
            return ctx.fail(sid, exc, ignore)
        outputs = []
        error = None
        for index, item in enumerate(ctx.each(over)):
            try:
                if delay and index:
                    yield from ctx.sleep(delay)  # between iterations
                output = yield from _dispatch(node, ctx, _env(ctx, item, index, None))
                outputs.append(output)
            except _s.STEP_ERRORS as exc:
                error = exc
                outputs.append(None)
        if error is not None:
            return ctx.fail(sid, error, ignore, outputs)
        return ctx.done(sid, outputs)
    return step


def _valued_step(node, settle):
    """A step that evaluates its one block and settles with the value: a
    branch (the scheduler then runs the arm the plan's branch edges so
    labelled name) or an exit."""
    sid = node["id"]
    ignore = node["on_error"] == "ignore"

    def step(ctx):
        ctx.begin(sid)
        env = _env(ctx, None, None, None)
        try:
            if _skips(node, env):
                return ctx.skip(sid)
            value = node["body"](env)
        except _s.STEP_ERRORS as exc:
            return ctx.fail(sid, exc, ignore)
        return settle(ctx, sid, value)
    return step


def _branch(ctx, sid, test):
    return ctx.branch(sid, "then" if _true(test) else "else")


def step_function(node):
    """The step function of a loaded row and whether it is a generator
    function (the walk ``yield from``s those, and calls the others)."""
    op = node["op"]
    if op == "branch":
        return _valued_step(node, _branch), False
    if op == "exit":
        status = node["status"]
        return _valued_step(node, lambda ctx, sid, output: ctx.exit(sid, status, output)), False
    if node["each"] is not None:
        return _each_step(node), True
    return _plain_step(node), True


def _outputs(plan):
    keys, block = plan["outputs"]
    keys = tuple(keys)

    def outputs(ctx):
        if not keys:
            return {}
        if ctx.exited:
            return _s.exit_outputs(keys, ctx.exit_output)
        if block is None:
            return _s.match_outputs(keys, ctx.last)
        try:
            return block({"inputs": ctx.inputs, "steps": ctx.steps, "@final": ctx.last})
        except _s.OutOfFuel as exc:   # the outputs' block ran out of instructions: the run fails, no step named
            ctx.status = "failed"
            ctx.error = {"message": exc.message, "step": None}
            return {}
    return outputs


def prepare(plan):
    """What every run of a loaded plan shares: ``plan["run"]``, the step
    functions by id, the ids of the steps and of the steps only an arm
    runs, the inputs' defaults and declared types, the outputs function."""
    steps = {}
    step_ids = []
    for node in plan["nodes"]:
        if node["op"] != "end":
            steps[node["id"]] = step_function(node)
            step_ids.append(node["id"])
    targets = {}
    for edge in plan["edges"]:
        if edge[2] == "branch":
            targets[edge[1]] = True
    defaults = {}
    types = []
    for name, kind, default in plan["inputs"]:
        if default is not MISSING:   # an input with no default
            defaults[name] = default
        if kind is not None:
            types.append((name, kind))
    return (steps, tuple(step_ids), tuple([s for s in step_ids if s in targets]), defaults, tuple(types),
            _outputs(plan))


def new_run(plan, inputs, trigger, payload, max_iterations, max_host_calls, concurrent, max_instructions):
    """The run of a loaded sequential plan on the kernel, not started (the
    plan-run models' ``start``: ``trigger``, ``payload`` and ``concurrent``
    mean nothing here, a sequential run takes one step at a time)."""
    shared = plan.get("run")
    if shared is None:
        shared = plan["run"] = prepare(plan)
    steps, step_ids, branch_ids, defaults, types, outputs = shared
    ctx = _s.Run(None, inputs, defaults, step_ids, branch_ids, max_iterations, max_host_calls, max_instructions)
    return _s.SkillRun(ctx, types, plan, steps, outputs)
