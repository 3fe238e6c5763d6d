"""A plan graph's edges indexed by kind, for the schedulers.

A plan (flowc.plan) lists each graph's edges as ``[source, target, kind,
label]`` rows. A scheduler asks :func:`edges_of` for a graph's index and
then finds a node's successors and predecessors by kind in constant time:
scheduling stays linear in the number of steps. The index of a graph is
built when a run first meets it and kept for the rest of that run (a
body run once per item is indexed once), never beyond it: a run already
pays time linear in its plan to start, and an index kept for the next
runs would keep every plan ever run in memory. :func:`unpack` reads the
bytecode's flat edge arrays (docs/bytecode.md sections 8.3 and 9.1) into
such rows.

The standard library only; MicroPython-compatible (no typing, dataclasses
or f-strings).
"""

# MicroPython style: %-formatting reads the same on both interpreters.
# ruff: noqa: UP031

SEQUENCE = "sequence"
FALLTHROUGH = "fallthrough"
BRANCH = "branch"
DEPENDENCY = "dependency"
ERROR = "error"
KINDS = (SEQUENCE, FALLTHROUGH, BRANCH, DEPENDENCY, ERROR)


class Edges:
    """The edges of one graph, by kind.

    - ``successor``: node id -> the target of its ``sequence`` edge, else
      of its ``fallthrough`` edge (the step after it)
    - ``branches``: node id -> ``[(label, target)...]`` in plan order
    - ``errors``: node id -> {label: target} (error routes)
    - ``deps``: node id -> the sources of its ``dependency`` edges, in plan order
    - ``sinks``: the ids of the nodes no ``dependency`` edge leaves, in node order
    """

    def __init__(self, graph):
        self.successor = {}
        self.branches = {}
        self.errors = {}
        self.deps = {}
        sequenced = {}
        has_dependents = set()
        for edge in graph["edges"]:
            source, target, kind, label = edge[0], edge[1], edge[2], edge[3]
            if kind == DEPENDENCY:
                _append(self.deps, target, source)
                has_dependents.add(source)
            elif kind == BRANCH:
                _append(self.branches, source, (label, target))
            elif kind == ERROR:
                if source not in self.errors:
                    self.errors[source] = {}
                self.errors[source][label] = target
            elif kind == SEQUENCE:
                sequenced[source] = True
                self.successor[source] = target
            elif kind == FALLTHROUGH and source not in sequenced:
                self.successor[source] = target
        self.sinks = [node["id"] for node in graph["nodes"] if node["id"] not in has_dependents]

    def route(self, node_id, label):
        """The target of ``node_id``'s error route ``label``, or None."""
        routes = self.errors.get(node_id)
        return None if routes is None else routes.get(label)


def _append(index, key, value):
    if key in index:
        index[key].append(value)
    else:
        index[key] = [value]


def edges_of(graph, memo):
    """The :class:`Edges` of ``graph`` (a plan or one of its bodies),
    indexed once per run: ``memo`` is the run's own dict (id -> (graph,
    Edges)), so an index lives as long as the run that built it. A device
    that loads and runs program after program keeps none of their plans
    alive (a module-wide memo did, until it filled)."""
    entry = memo.get(id(graph))
    if entry is not None and entry[0] is graph:
        return entry[1]
    edges = Edges(graph)
    memo[id(graph)] = (graph, edges)
    return edges


def unpack(flat, ids):
    """``([source, target, kind, label]...)`` of a graph whose nodes are
    ``ids``, from the bytecode's flat ``source, target, kind, label...``
    (node indexes, an index into KINDS, a str or nil), and None; or None
    and why it is not such an array (a loader's check)."""
    if type(flat) is not list or len(flat) % 4:
        return None, "a graph's edges must be an array of source, target, kind, label quadruples"
    rows = []
    for i in range(0, len(flat), 4):
        source, target, kind, label = flat[i], flat[i + 1], flat[i + 2], flat[i + 3]
        for end in (source, target):
            if type(end) is not int or not 0 <= end < len(ids):
                return None, "an edge names node %r, which is not a node of its graph" % (end,)
        if type(kind) is not int or not 0 <= kind < len(KINDS):
            return None, "an edge's kind must be an index into " + ", ".join(KINDS)
        if label is not None and type(label) is not str:
            return None, "an edge's label must be a string or nil"
        if label is None and KINDS[kind] == BRANCH:
            return None, "a branch edge's label must be a string"
        rows.append([ids[source], ids[target], KINDS[kind], label])
    return rows, None
