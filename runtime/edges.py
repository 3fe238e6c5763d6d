"""A plan graph's edges indexed by kind, for the schedulers.

A plan (flowc.plan) lists each graph's edges as ``[source, target, kind,
label]`` rows. A scheduler asks :func:`edges_of` for a graph's index and
then finds a node's successors and predecessors by kind in constant time:
scheduling stays linear in the number of steps. The index of a graph is
built when a run first loads it and kept for the next runs of the same
plan (a plan is never changed once built), so a run of a loaded plan pays
nothing for it.

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


# id(graph) -> (graph, its Edges). The graph is held, so its id is not
# reused while the entry lives; bounded, so plans come and go.
_MEMO = {}
MEMO_SIZE = 256


def edges_of(graph):
    """The :class:`Edges` of ``graph`` (a plan or one of its bodies),
    indexed once per graph."""
    entry = _MEMO.get(id(graph))
    if entry is not None and entry[0] is graph:
        return entry[1]
    if len(_MEMO) >= MEMO_SIZE:
        _MEMO.clear()
    edges = Edges(graph)
    _MEMO[id(graph)] = (graph, edges)
    return edges


def problem(edges, ids):
    """Why ``edges`` is not a graph's edge list over the node ids ``ids``
    (a loader's check of a plan it did not build), or None."""
    if type(edges) is not list:
        return "a graph's edges must be an array"
    for edge in edges:
        if type(edge) is not list or len(edge) != 4:
            return "an edge must be [source, target, kind, label]"
        if edge[2] not in KINDS:
            return "an edge's kind must be one of " + ", ".join(KINDS)
        if edge[3] is not None and type(edge[3]) is not str:
            return "an edge's label must be a string or nil"
        for end in (edge[0], edge[1]):
            if type(end) is not str or end not in ids:
                return "an edge names %r, which is not a node of its graph" % (end,)
    return None
