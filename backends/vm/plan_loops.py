"""The fast loops of WorkflowSkill's filter and map steps on the VM.

An optional part (``BY_FEATURE``: ``flowc bundle --small`` leaves it out):
the block of a filter's test or a map's object is compiled into closures
and run over the items at once (plan_steps.py asks :func:`run`). Standard
library only; MicroPython-compatible.
"""

# MicroPython style on purpose: explicit `object` bases and `x != x` NaN tests.
# ruff: noqa: UP004

try:
    from flowc.backends.vm import expr_vm as _x
    from flowc.backends.vm import expr_wfs as _xw
    from flowc.backends.vm.container import _Obj, copy_json
    from flowc.runtime.wfs import (
        _MAX_SAFE,
        MISSING,
        _num,
        compact,
        js_boolean,
        wfs_contains,
        wfs_eq,
        wfs_truthy,
    )
    from flowc.runtime.wfs import js_to_string as to_string
    from flowc.runtime.wfs import to_number as _to_number
    from flowc.runtime.wfs import wfs_get_field as get_field
    from flowc.runtime.wfs import wfs_get_index as get_index
    from flowc.runtime.wfs import wfs_stringify as stringify
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    import expr_vm as _x
    import expr_wfs as _xw
    from container import _Obj, copy_json
    from wfs import (
        _MAX_SAFE,
        MISSING,
        _num,
        compact,
        js_boolean,
        wfs_contains,
        wfs_eq,
        wfs_truthy,
    )
    from wfs import js_to_string as to_string
    from wfs import to_number as _to_number
    from wfs import wfs_get_field as get_field
    from wfs import wfs_get_index as get_index
    from wfs import wfs_stringify as stringify

# ================================================================ fast loops
# A filter's test or a map's object -- a straight-line block -- is translated, the first time it runs,
# from the expression machine's block into a tree of closures, one per
# expression node: no operand stack, no dispatch. On each entry to the loop
# the nodes that depend on neither $item nor $index are evaluated once and
# folded into constants (an expression has no effects and evaluates all of
# its operands, so they are the same for every item), and the common cases
# of the value semantics (plain objects, numbers, strings) run inline behind
# type checks, falling back to flowc.runtime.wfs's functions, the builtins
# the block calls, for anything else.
#
# Fuel is charged as the expression machine charges it: an item costs the
# block's instructions (its RETURN included); the items' iterations are
# the run's (sequence_run.Run.charge). The fast loop commits only whole
# items that fit in the instruction fuel left and that complete without an
# exception; the machine evaluates every other item (the block is then
# evaluated again: it is pure), so records, errors and the point where fuel
# runs out are exactly the machine's.

FAST_LOOPS = True       # False: the machine evaluates every item (tests compare the two)
# The tables of optional parts, a speed-up a device can do without: a small
# bundle (flowc bundle --small) keeps none of their rows, and with them goes
# the code only they reach. The run finds the compiled loops in FEATURES only.
BY_FEATURE = ("FEATURES",)
_MAX_TREE = 24          # deeper expressions stay in the interpreter (closures nest on the C stack)
_NOT_YET = object()     # a loop not yet looked at
_FAST_DICT = _Obj       # the objects the fast paths read directly; anything else takes the general path

# The nodes of a compiled block: an instruction of the expression machine
# each (a builtin CALL by its key), the ones a loop body holds.
_N_CONST = 1
_N_ROOT = 3
_N_FIELD = 5
_N_INDEX = 6
_N_EQ = 7
_N_NE = 8
_N_LT = 9
_N_LE = 10
_N_GT = 11
_N_GE = 12
_N_CONTAINS = 13
_N_AND = 14
_N_OR = 15
_N_NOT = 16
_N_TEMPLATE = 17
_N_LIST = 18
_N_OBJECT = 19
_N_COMPACT = 25
_N_COMPACT_OBJECT = 26    # MAP wfs_compact: an object without the keys whose value is missing
_CONST_COPY = 0x101     # CONST of an array or object: a fresh copy per evaluation
_FLIPPED = {_N_LT: _N_GT, _N_LE: _N_GE, _N_GT: _N_LT, _N_GE: _N_LE}
# The builtins a compiled block may call, by key.
_BODY_CALLS = {"wfs.eq": _N_EQ, "wfs.ne": _N_NE, "wfs.lt": _N_LT, "wfs.le": _N_LE, "wfs.gt": _N_GT, "wfs.ge": _N_GE,
               "wfs.contains": _N_CONTAINS, "wfs.and": _N_AND, "wfs.or": _N_OR, "wfs.not": _N_NOT, "wfs.compact": _N_COMPACT}


class _Loop(object):
    """A compiled filter/map loop (compile_loop)."""
    __slots__ = ("cache", "cost", "keep", "leaves", "tree", "uses_index")

    def __init__(self, keep, cost, tree, uses_index, leaves):
        self.keep = keep            # KEEP (a filter), else APPEND (a map)
        self.cost = cost            # instructions per item: the block's
        self.tree = tree            # the expression: nodes (op, operand, children, height, depends)
        self.uses_index = uses_index
        self.leaves = leaves        # its largest parts read from $inputs, $steps or $result
        self.cache = None           # (the leaves' values, the function of an item built from them)


# What a node depends on (bits): 1 $item or $index; 2 the run ($inputs, $steps,
# $result); 4 a fresh object per evaluation (never folded into a constant).
_FRESH_OPS = (_CONST_COPY, _N_LIST, _N_OBJECT, _N_COMPACT_OBJECT, _N_COMPACT)


def compile_loop(machine, block, keep):
    """The filter (``keep``) or map loop of ``block`` as a :class:`_Loop`,
    or None when the block is not one the fast path runs."""
    tree = _block_tree(machine, block)
    if tree is None:
        return None
    leaves = []
    _leaves(tree[0], leaves)
    return _Loop(keep, tree[1], tree[0], tree[2], tuple(leaves))


def _block_tree(machine, block):
    """(the tree, the block's instruction count, reads $index) of a block
    that runs straight to its RETURN with the instructions a compiled loop
    has; else None."""
    decoded, consts, names, keys = machine.source(block)
    stack = []
    uses_index = False
    for _k, op, o in decoded:
        if op == _x.RETURN:
            break
        pops = 0
        if op == _x.CONST:
            v = consts[o[0]]
            node = (_CONST_COPY if type(v) is list or isinstance(v, dict) else _N_CONST, v)
        elif op == _x.LOAD:
            root = _xw.WFS_ROOTS.index(names[o[1]]) if names[o[1]] in _xw.WFS_ROOTS else -1
            if root < 0 or _x.ACCESS[o[0]] != "wfs":   # another name fails: the interpreter says how
                return None
            node = (_N_ROOT, root)
            uses_index = uses_index or root == 3
        elif op == _x.FIELD:
            node = (_N_FIELD, names[o[1]])
            pops = 1
        elif op == _x.INDEX:
            node = (_N_INDEX, None)
            pops = 2
        elif op == _x.CALL:
            node = (_BODY_CALLS.get(keys[o[0]]), None)
            pops = o[1]
            if node[0] is None:
                return None
        elif op == _x.LIST or op == _x.MAP or op == _x.TEMPLATE:
            count = o[-1]
            node = ({_x.LIST: _N_LIST, _x.MAP: _N_OBJECT, _x.TEMPLATE: _N_TEMPLATE}[op], count)
            if op == _x.MAP and _x.MAPS[o[0]] == "wfs_compact":
                node = (_N_COMPACT_OBJECT, count)
            pops = 2 * count if op == _x.MAP else count
        else:
            return None
        tree = _node(node[0], node[1], stack, pops)
        if tree is None:
            return None
        stack.append(tree)
    if len(stack) != 1:     # pragma: no cover - verified away
        return None
    return stack[0], len(decoded), uses_index


def _node(op, a, stack, pops):
    """The node (op, operand, children, height, depends) of an instruction
    popping ``pops`` children off ``stack``; None when the tree grows too deep."""
    kids = ()
    height = 1
    depends = 4 if op in _FRESH_OPS else 0
    if pops:
        kids = tuple(stack[len(stack) - pops:])
        del stack[len(stack) - pops:]
        for kid in kids:
            if kid[3] >= height:
                height = kid[3] + 1
            depends |= kid[4]
        if height > _MAX_TREE:
            return None
    elif op == _N_ROOT:
        depends = 1 if a == 2 or a == 3 else 2
    return (op, a, kids, height, depends)


def _leaves(node, out):
    if node[4] == 2:
        out.append(node)
    else:
        for kid in node[2]:
            _leaves(kid, out)


def _scalar(v):
    t = type(v)
    return v is None or v is MISSING or t is str or t is int or t is float or t is bool


# Stage two, on each entry to a loop: a node becomes (kind, payload, is_bool):
# kind 0 a constant (payload: the value), 1 $item itself, 2 a path of names
# read from $item (payload: a tuple of names), 3 a function of $item.

def _identity(x):
    return x


def _const_fn(v):
    return lambda x: v


def _path_fn(names):
    if len(names) == 1:
        name = names[0]

        def get1(x):
            if type(x) is _FAST_DICT:
                return x.get(name, MISSING)
            return get_field(x, name)
        return get1
    if len(names) == 2:
        n0 = names[0]
        n1 = names[1]

        def get2(x):
            x = x.get(n0, MISSING) if type(x) is _FAST_DICT else get_field(x, n0)
            if type(x) is _FAST_DICT:
                return x.get(n1, MISSING)
            return get_field(x, n1)
        return get2

    def get_n(x):
        for name in names:
            x = x.get(name, MISSING) if type(x) is _FAST_DICT else get_field(x, name)
        return x
    return get_n


def _fn(s):
    kind = s[0]
    if kind == 3:
        return s[1]
    if kind == 2:
        return _path_fn(s[1])
    if kind == 1:
        return _identity
    return _const_fn(s[1])


def _is_plain_number(v):
    t = type(v)
    return t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE)


def _order(op, x, y):
    if op == _N_LT:
        return x < y
    if op == _N_LE:
        return x <= y
    if op == _N_GT:
        return x > y
    return x >= y


def _operand(s):
    """(name, function) of a node: name when it is $item.name (read inline
    from a plain object; the function reads everything else), else None."""
    if s[0] == 2 and len(s[1]) == 1:
        return s[1][0], _fn(s)
    return None, _fn(s)


def _order_const(op, s, h):
    """s <op> h by toNumber, h a number already: plain numbers compare directly."""
    name, g = _operand(s)
    if op == _N_LT:
        def lt(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            t = type(v)
            if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                return v < h
            return _to_number(v) < h
        return lt
    if op == _N_LE:
        def le(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            t = type(v)
            if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                return v <= h
            return _to_number(v) <= h
        return le
    if op == _N_GT:
        def gt(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            t = type(v)
            if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                return v > h
            return _to_number(v) > h
        return gt

    def ge(x):
        v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
        t = type(v)
        if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
            return v >= h
        return _to_number(v) >= h
    return ge


def _b_order(op, left, right):
    if left[0] == 0 and right[0] == 0:
        return (0, _order(op, _to_number(left[1]), _to_number(right[1])), True)
    if left[0] == 0:    # the constant on the right: a < b is b > a
        left, right = right, left
        op = _FLIPPED[op]
    if right[0] == 0:
        return (3, _order_const(op, left, _to_number(right[1])), True)
    gl = _fn(left)
    gr = _fn(right)

    def order(x):
        return _order(op, _to_number(gl(x)), _to_number(gr(x)))
    return (3, order, True)


def _b_eq(left, right, negate):
    if left[0] == 0 and right[0] == 0:
        return (0, wfs_eq(left[1], right[1]) != negate, True)
    if left[0] == 0:    # wfs_eq is symmetric
        left, right = right, left
    if right[0] == 0:
        c = right[1]
        name, g = _operand(left)
        tc = type(c)
        if tc is str:
            def eq(x):
                v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
                if type(v) is str:
                    return v == c
                return wfs_eq(v, c)
        elif tc is int or tc is float:
            h = _num(c)

            def eq(x):
                v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
                t = type(v)
                if t is float or (t is int and -_MAX_SAFE <= v <= _MAX_SAFE):
                    return v == h
                return wfs_eq(v, c)
        else:
            def eq(x):
                return wfs_eq(g(x), c)
    else:
        gl = _fn(left)
        gr = _fn(right)

        def eq(x):
            return wfs_eq(gl(x), gr(x))
    if not negate:
        return (3, eq, True)

    def ne(x):
        return not eq(x)
    return (3, ne, True)


def _b_contains(left, right):
    if left[0] == 0 and right[0] == 0:
        return (0, wfs_contains(left[1], right[1]), True)
    if right[0] == 0:
        c = right[1]
        name, g = _operand(left)
        # the case-insensitive substring test of a string left side
        lower = ("" if c is None or c is MISSING else to_string(c)).lower()

        def contains(x):
            v = x.get(name, MISSING) if name is not None and type(x) is _FAST_DICT else g(x)
            if type(v) is str:
                return lower in v.lower()
            return wfs_contains(v, c)
        return (3, contains, True)
    gl = _fn(left)
    gr = _fn(right)

    def contains2(x):
        return wfs_contains(gl(x), gr(x))
    return (3, contains2, True)


def _b_logic(op, left, right):
    if left[0] == 0 and right[0] == 0:
        a = wfs_truthy(left[1])
        b = wfs_truthy(right[1])
        return (0, (a and b) if op == _N_AND else (a or b), True)
    gl = _fn(left)
    gr = _fn(right)
    if op == _N_AND:
        def and_(x):
            a = gl(x)
            b = gr(x)
            return wfs_truthy(a) and wfs_truthy(b)
        return (3, and_, True)

    def or_(x):
        a = gl(x)
        b = gr(x)
        return wfs_truthy(a) or wfs_truthy(b)
    return (3, or_, True)


def _b_object(kids, env, compact_it):
    """MAP (wfs, or wfs_compact: without the keys whose value is missing): a fresh object per item."""
    parts = [_build(k, env) for k in kids]
    keys = []
    for j in range(0, len(parts), 2):
        if parts[j][0] != 0:
            keys = None
            break
        k = parts[j][1]
        keys.append(k if type(k) is str else to_string(k))
    if keys is not None:
        pairs = tuple([(keys[j],) + _operand(parts[2 * j + 1]) for j in range(len(keys))])

        def obj(x):
            o = _Obj()
            missing = False
            plain = type(x) is _FAST_DICT
            for k, name, g in pairs:
                v = x.get(name, MISSING) if name is not None and plain else g(x)
                if v is MISSING:
                    missing = True
                o[k] = v
            if missing and compact_it:
                return compact(o)
            return o
        return (3, obj, False)
    fns = tuple([_fn(s) for s in parts])

    def obj_any(x):
        vals = [g(x) for g in fns]
        o = _Obj()
        for j in range(0, len(vals), 2):
            k = vals[j]
            o[k if type(k) is str else to_string(k)] = vals[j + 1]
        return compact(o) if compact_it else o
    return (3, obj_any, False)


def _build(node, env):
    """Stage two: one node (and its children) for one entry to the loop.
    env is (inputs, $steps, index cell, $result)."""
    op, a, kids = node[0], node[1], node[2]
    if op in _LEAVES:
        return _b_leaf(op, a, env)
    if op == _N_OBJECT or op == _N_COMPACT_OBJECT:
        return _b_object(kids, env, op == _N_COMPACT_OBJECT)
    if op == _N_COMPACT and kids[0][0] == _N_OBJECT:
        return _b_object(kids[0][2], env, True)
    args = [_build(k, env) for k in kids]
    if op == _N_FIELD:
        return _b_field(args[0], a)
    if op == _N_EQ or op == _N_NE:
        return _b_eq(args[0], args[1], op == _N_NE)
    if op == _N_LT or op == _N_LE or op == _N_GT or op == _N_GE:
        return _b_order(op, args[0], args[1])
    if op == _N_CONTAINS:
        return _b_contains(args[0], args[1])
    if op == _N_AND or op == _N_OR:
        return _b_logic(op, args[0], args[1])
    if op == _N_NOT:
        s = args[0]
        if s[0] == 0:
            return (0, not wfs_truthy(s[1]), True)
        g = _fn(s)
        return (3, lambda x: not wfs_truthy(g(x)), True)
    if op == _N_INDEX:
        if args[0][0] == 0 and args[1][0] == 0:
            v = get_index(args[0][1], args[1][1])
            return (0, v, type(v) is bool)
        gl = _fn(args[0])
        gr = _fn(args[1])
        return (3, lambda x: get_index(gl(x), gr(x)), False)
    if op == _N_TEMPLATE:
        if not [1 for s in args if s[0] != 0]:
            return (0, "".join([stringify(s[1]) for s in args]), False)
        fns = tuple([_fn(s) for s in args])
        return (3, lambda x: "".join([stringify(g(x)) for g in fns]), False)
    fns = tuple([_fn(s) for s in args])
    if op == _N_LIST:
        return (3, lambda x: [g(x) for g in fns], False)
    g = fns[0]
    # wfs.compact of anything but an object built here
    return (3, lambda x: compact(g(x)), False)


_LEAVES = (_N_CONST, _N_ROOT, _CONST_COPY)


def _b_leaf(op, a, env):
    """A node without children: a constant, a root."""
    if op == _N_CONST:
        return (0, a, type(a) is bool)
    if op == _N_ROOT:
        if a == 2:
            return (1, None, False)
        if a == 3:
            cell = env[2]
            return (3, lambda x: cell[0], False)
        v = env[3] if a == 4 else env[a]
        return (0, v, type(v) is bool)
    return (3, lambda x: copy_json(a), False)   # _CONST_COPY


def _b_field(s, a):
    """_N_FIELD a of node s: a constant folded, a path of $item extended."""
    kind = s[0]
    if kind == 0:
        v = get_field(s[1], a)
        return (0, v, type(v) is bool)
    if kind == 1:
        return (2, (a,), False)
    if kind == 2:
        return (2, s[1] + (a,), False)
    g = s[1]

    def field(x):
        v = g(x)
        if type(v) is _FAST_DICT:
            return v.get(a, MISSING)
        return get_field(v, a)
    return (3, field, False)


def _loop_fn(loop, env):
    """The function of one item a compiled loop applies: for a filter, the
    JavaScript Boolean() of the expression; for a map, its value."""
    s = _build(loop.tree, env)
    if not loop.keep or s[2]:
        return _fn(s)
    if s[0] == 0:
        keep = js_boolean(s[1])
        return lambda x: keep
    if s[0] == 2 and len(s[1]) == 1:
        name = s[1][0]

        def test_field(x):
            v = x.get(name, MISSING) if type(x) is _FAST_DICT else get_field(x, name)
            if v is True:
                return True
            if v is False:
                return False
            return js_boolean(v)
        return test_field
    g = _fn(s)

    def test(x):
        v = g(x)
        if v is True:
            return True
        if v is False:
            return False
        return js_boolean(v)
    return test


def _fast_loop(loop, items, env, machine):
    """Run the whole items of a compiled loop that fit in the machine's
    fuel left and complete; (how many ran, their results). env as for
    _build, with a fresh index cell."""
    keep = loop.keep
    cost = loop.cost
    uses_index = loop.uses_index
    k = len(items)
    if machine.left < k * cost:
        k = machine.left // cost
    if k <= 0:
        return 0, []
    try:
        f = None
        if not uses_index:
            # built again only when a part read from the run has another value
            values = [_build(leaf, env)[1] for leaf in loop.leaves]
            cache = loop.cache
            if cache is not None:
                f = cache[1]
                for j in range(len(values)):
                    if values[j] is not cache[0][j]:
                        f = None
                        break
        if f is None:
            f = _loop_fn(loop, env)
            if not uses_index and not [1 for v in values if not _scalar(v)]:
                loop.cache = (values, f)
    except Exception:  # noqa: BLE001 - the machine reports it
        return 0, []
    chunk = items if k == len(items) else items[:k]
    out = None
    done = 0
    if not uses_index:
        try:
            out = list(filter(f, chunk)) if keep else list(map(f, chunk))
            done = k
        except Exception:  # noqa: BLE001 - item by item below, up to the one that fails
            out = None
    if out is None:
        out = []
        cell = env[2]
        for x in chunk:
            if uses_index:
                cell[0] = done
            try:
                v = f(x)
            except Exception:  # noqa: BLE001 - the machine evaluates this item
                break
            if keep:
                if v:
                    out.append(x)
            else:
                out.append(v)
            done += 1
    machine.left -= done * cost
    return done, out


def run(node, items, env, keep):
    """(how many of ``items`` the compiled loop of ``node``'s block ran,
    their kept items or values): the step evaluates the rest. (0, []) when
    the block is not one the fast path runs or the part is left out."""
    loops = FEATURES.get("fast_loops")
    if loops is None:
        return 0, []
    machine, block, loop = node["loop"]
    if loop is _NOT_YET:
        loop = loops[0](machine, block, keep)
        node["loop"] = (machine, block, loop)
    if loop is None or not machine.per_run:
        return 0, []
    return loops[1](loop, items, (env["inputs"], env["steps"], [0], None), machine)


# The optional parts (BY_FEATURE): "fast_loops", how a filter/map block is
# compiled (compile_loop) and run (_fast_loop).
FEATURES = {"fast_loops": (compile_loop, _fast_loop)}
