"""Reading YAML with positions, YAML 1.2 core-schema meaning, and no surprises.

PyYAML's composer (libyaml when present) gives us a node tree with marks;
we resolve scalars ourselves with the YAML 1.2 core schema (``on``, ``yes``,
``no`` and ``off`` are strings; ``010`` is 10) and turn the tree into
:class:`YMap` / :class:`YSeq` / :class:`YScalar`, each with a span. Duplicate
keys, recursive aliases and alias bombs are findings, not crashes. So is a
tag other than the core schema's (``!!python/object/apply:...``, ``!foo``,
``!!binary``) or a core tag its value does not fit (``!!int notanint``):
YAML006, and the node reads as if it had no tag. (A tag that equals the one
YAML 1.1 would resolve the plain text to, like ``!!timestamp 2001-12-14``,
can't be told from no tag after composing; the text is read as core schema.)

Integers in data: a plain integer scalar is an exact ``int`` only when it
fits in 64 bits (``-2**63`` to ``2**64 - 1``: int64 or uint64, what every
dialect's runtime can hold). A larger one resolves to the nearest double
(``inf`` beyond about 1.8e308), as JavaScript and Go's YAML readers do; its
``text`` still shows the digits, so a field that needs an integer can report
it as out of range (``LIM103``, see :func:`out_of_range_int`). The digits are
counted before ``int()`` sees them, so no scalar reaches Python's 4,300-digit
limit of integer conversion, and none needs a bignum.
"""

from __future__ import annotations

import functools
import math
import re

import yaml
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.limits import MAX_YAML_DEPTH, MAX_YAML_NODES
from flowc.ir.span import Span

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_resolver = yaml.resolver.Resolver()

# Caps that keep hostile documents (alias bombs) from exhausting memory
# (ir/limits.py, YAML005).
MAX_NODES = MAX_YAML_NODES
MAX_DEPTH = MAX_YAML_DEPTH
# What MAX_NODES counts, in the finding's words.
_TOO_MANY_NODES = (f"the document has more than {MAX_YAML_NODES} YAML nodes (scalars, lists and mappings, "
                   "each alias counted as the nodes it repeats)")

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"

_CORE_INT = re.compile(r"[-+]?[0-9]+\Z")
_CORE_OCT = re.compile(r"0o[0-7]+\Z")
_CORE_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_CORE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_CORE_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_CORE_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")


class YNode:
    __slots__ = ("span",)
    span: Span

    def plain(self):
        raise NotImplementedError


class YScalar(YNode):
    __slots__ = ("quoted", "text", "value")

    def __init__(self, value, quoted: bool, text: str, span: Span) -> None:
        self.value = value
        self.quoted = quoted
        self.text = text
        self.span = span

    def plain(self):
        return self.value

    def __repr__(self) -> str:
        return f"YScalar({self.value!r})"


class YSeq(YNode):
    __slots__ = ("items",)

    def __init__(self, items: list[YNode], span: Span) -> None:
        self.items = items
        self.span = span

    def plain(self):
        return [i.plain() for i in self.items]


class YMap(YNode):
    __slots__ = ("_index", "items")

    def __init__(self, items: list[tuple[YScalar, YNode]], span: Span) -> None:
        self.items = items
        self.span = span
        self._index = {k.value: (k, v) for k, v in items}

    def get(self, key: str) -> YNode | None:
        pair = self._index.get(key)
        return pair[1] if pair else None

    def key_node(self, key: str) -> YScalar | None:
        pair = self._index.get(key)
        return pair[0] if pair else None

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def keys(self) -> list:
        return [k.value for k, _ in self.items]

    def plain(self):
        return {k.value: v.plain() for k, v in self.items}


def type_name(node: YNode | None) -> str:
    """How a YAML value is named in messages ("a mapping", "a string" ...)."""
    if node is None:
        return "nothing"
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YSeq):
        return "a list"
    v = node.value
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    return "a string"


@functools.lru_cache(maxsize=4096)
def _implicit_tag(text: str) -> str:
    """The tag PyYAML's (YAML 1.1) resolver gives a plain scalar; a node
    whose tag differs carries an explicit tag such as ``!!str``."""
    return _resolver.resolve(yaml.ScalarNode, text, (True, False))


_INT_MIN, _UINT_MAX = -2**63, 2**64 - 1
# Significant digits that can still fit in 64 bits, per base.
_MAX_SIGNIFICANT = {10: 20, 16: 16, 8: 22}


def _bounded_int(text: str, base: int) -> int | float:
    """``text`` (an integer of the core schema) as an exact int when it fits
    in 64 bits, else as the nearest double; never calls ``int()`` on more
    digits than 64 bits can hold."""
    body = text[2:] if base != 10 else text.lstrip("+-")
    negative = base == 10 and text.startswith("-")
    digits = body.lstrip("0")
    if len(digits) <= _MAX_SIGNIFICANT[base]:
        value = int(digits or "0", base)
        value = -value if negative else value
        if _INT_MIN <= value <= _UINT_MAX:
            return value
        return float(value)
    if base == 10:
        return float(text)  # float() has no digit limit; inf beyond the double range
    if len(digits) * 4 > 1100:
        return math.inf  # far beyond the largest double
    try:
        return float(int(digits, base))  # bases 8 and 16 convert in linear time
    except OverflowError:
        return math.inf



def out_of_range_int(node) -> bool:
    """True for a plain integer scalar that did not fit in 64 bits (its
    value became a double); a field that takes an integer reports it."""
    return (isinstance(node, YScalar) and isinstance(node.value, float) and not node.quoted
            and bool(_CORE_INT.match(node.text) or _CORE_OCT.match(node.text)
                     or _CORE_HEX.match(node.text)))


def _core_scalar(text: str):
    """YAML 1.2 core schema resolution of a plain scalar."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _CORE_INT.match(text):
        return _bounded_int(text, 10)
    if _CORE_OCT.match(text):
        return _bounded_int(text, 8)
    if _CORE_HEX.match(text):
        return _bounded_int(text, 16)
    if _CORE_FLOAT.match(text):
        return float(text)
    if _CORE_INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _CORE_NAN.match(text):
        return math.nan
    return text


_UNFIT = object()  # an explicit tag the scalar's text does not fit


def _explicit_scalar(text: str, tag: str):
    """A scalar with an explicit tag (``!!str 10``); _UNFIT when the tag is
    not a core-schema scalar tag or the text is not a value of it."""
    if tag == _STR:
        return text
    resolved = _core_scalar(text)
    if tag == _INT and isinstance(resolved, int) and not isinstance(resolved, bool):
        return resolved
    if tag == _INT and isinstance(resolved, float) and _CORE_INT.match(text):
        return resolved  # an !!int beyond 64 bits: the double, as for a plain one
    if tag == _FLOAT and isinstance(resolved, (int, float)) and not isinstance(resolved, bool):
        return float(resolved)
    if tag == _BOOL and isinstance(resolved, bool):
        return resolved
    if tag == _NULL and resolved is None:
        return None
    return _UNFIT


class _Builder:
    def __init__(self, file: str, line_offset: int) -> None:
        self.file = file
        self.line_offset = line_offset
        self.count = 0
        self.diags: list[Diagnostic] = []
        self.active: set[int] = set()
        self.built: dict[int, YNode] = {}

    def span(self, node) -> Span:
        s, e = node.start_mark, node.end_mark
        return Span(self.file, s.line + 1 + self.line_offset, s.column + 1,
                    e.line + 1 + self.line_offset, e.column + 1)

    def build(self, node, depth: int = 0) -> YNode:
        # An alias is the very node its anchor names: a collection is built
        # once and shared, so an alias-heavy document costs its text, not
        # its expansion (_measure has already bounded the expansion).
        # Scalars are rebuilt: one node each, and most documents are mostly
        # scalars, which a table would only cost memory.
        if isinstance(node, yaml.ScalarNode):
            return self._build(node, depth)
        done = self.built.get(id(node))
        if done is not None:
            return done
        out = self._build(node, depth)
        self.built[id(node)] = out
        return out

    def _build(self, node, depth: int) -> YNode:
        self.count += 1
        if self.count > MAX_NODES:
            raise _TooLarge(self.span(node), _TOO_MANY_NODES)
        if depth > MAX_DEPTH:
            raise _TooLarge(self.span(node), f"the document nests deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if node.tag != (_SEQ if isinstance(node, yaml.SequenceNode) else _MAP):
            self.unsupported_tag(node)
        key = id(node)
        if key in self.active:
            raise _TooLarge(self.span(node), "a recursive alias makes the document infinite")
        self.active.add(key)
        try:
            if isinstance(node, yaml.SequenceNode):
                return YSeq([self.build(child, depth + 1) for child in node.value], self.span(node))
            return self.mapping(node, depth)
        finally:
            self.active.discard(key)

    def scalar(self, node) -> YScalar:
        text = node.value
        if not node.style:  # plain (libyaml reports "", PyYAML None)
            implicit = _implicit_tag(text)
            value = _core_scalar(text) if node.tag == implicit else self.explicit(node)
            return YScalar(value, False, text, self.span(node))
        if node.tag != _STR:
            return YScalar(self.explicit(node), True, text, self.span(node))
        return YScalar(text, True, text, self.span(node))

    def explicit(self, node):
        """The value of a scalar with an explicit tag; a tag it does not
        fit is a finding and the text stays a string."""
        value = _explicit_scalar(node.value, node.tag)
        if value is _UNFIT:
            self.unsupported_tag(node)
            return node.value
        return value

    def unsupported_tag(self, node) -> None:
        tag = node.tag
        if tag.startswith("tag:yaml.org,2002:"):
            tag = "!!" + tag[len("tag:yaml.org,2002:"):]
        shown = tag if len(tag) <= 60 else tag[:57] + "..."
        if isinstance(node, yaml.ScalarNode) and tag in ("!!str", "!!int", "!!float", "!!bool", "!!null"):
            message = f"the value does not fit its tag {shown}"
        else:
            message = f"unsupported YAML tag {shown!r}; only the YAML 1.2 core schema's tags are read"
        self.diags.append(error("YAML006", message, self.span(node),
                                "remove the tag; flowc reads the value as plain data"))

    def mapping(self, node, depth: int) -> YMap:
        items: list[tuple[YScalar, YNode]] = []
        seen: dict = {}
        for knode, vnode in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                self.diags.append(error("YAML004", "merge keys (<<) are not supported", self.span(knode)))
                continue
            key = self.build(knode, depth + 1)
            if not isinstance(key, YScalar) or isinstance(key.value, float):
                self.diags.append(error("YAML003", "mapping keys must be plain strings or integers",
                                        key.span))
                continue
            hashable = (type(key.value).__name__, key.value)
            if hashable in seen:
                first = seen[hashable]
                self.diags.append(error(
                    "YAML002", f"duplicate key {key.value!r}", key.span,
                    f"first defined at line {first.line}, column {first.col}"))
                continue
            seen[hashable] = key.span
            items.append((key, self.build(vnode, depth + 1)))
        return YMap(items, self.span(node))


class _TooLarge(Exception):
    def __init__(self, span: Span, message: str) -> None:
        super().__init__(message)
        self.span = span
        self.message = message


def _measure(text: str, file: str, line_offset: int) -> Diagnostic | None:
    """Nesting depth and alias expansion, measured on the event stream
    before composing: libyaml's composer recurses in C and overflows the
    stack (a segfault) on a few tens of thousands of nested brackets, and
    building an alias bomb node by node takes seconds before MAX_NODES
    stops it. Here both cost one pass over the events."""
    counts = [0]                       # nodes so far in each open collection (and the document)
    anchors: list[str | None] = []     # the anchor of each open collection
    sizes: dict[str, int] = {}         # anchor -> nodes its alias expands to
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            counts.append(1)
            anchors.append(event.anchor)
            if len(anchors) > MAX_DEPTH:
                return error("YAML005", f"the document nests deeper than {MAX_DEPTH} levels",
                             _mark_span(file, line_offset, event))
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            size = counts.pop()
            anchor = anchors.pop()
            if anchor is not None:
                sizes[anchor] = size
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor, 0)  # undefined or recursive: the composer reports it
        else:
            continue
        counts[-1] += size
        if counts[-1] > MAX_NODES:
            return error("YAML005", _TOO_MANY_NODES, _mark_span(file, line_offset, event))
    return None


def _mark_span(file: str, line_offset: int, event) -> Span:
    s, e = event.start_mark, event.end_mark
    return Span(file, s.line + 1 + line_offset, s.column + 1, e.line + 1 + line_offset, e.column + 1)


# Contexts whose error, found on a later line, means "opened here, never closed".
_UNCLOSED = {
    "while parsing a flow sequence": ("flow sequence", "its '[' has no matching ']'"),
    "while parsing a flow mapping": ("flow mapping", "its '{' has no matching '}'"),
    "while scanning a quoted scalar": ("quoted string", "its opening quote has no closing quote"),
}


def _unclosed(exc: yaml.MarkedYAMLError, file: str, line_offset: int) -> Diagnostic | None:
    """An unclosed bracket or quote is reported where it opens (the real
    problem), with where the parser gave up as a note."""
    what = _UNCLOSED.get(exc.context or "")
    pm, cm = exc.problem_mark, exc.context_mark
    if what is None or pm is None or cm is None or pm.line <= cm.line:
        return None
    name, detail = what
    line = cm.line + 1 + line_offset
    return error("YAML001", f"invalid YAML: unclosed {name}: {detail}",
                 Span(file, line, cm.column + 1, line, cm.column + 2),
                 f"{exc.problem or 'the parser gave up'} at line {pm.line + 1 + line_offset}, "
                 f"column {pm.column + 1}")


def load(text: str, file: str, line_offset: int = 0) -> tuple[YNode | None, list[Diagnostic]]:
    """Parse one YAML document. Returns (root or None, findings).

    ``line_offset`` is added to every line number, for YAML embedded in a
    larger file (a fenced block in Markdown).
    """
    try:
        too_large = _measure(text, file, line_offset)
        if too_large is not None:
            return None, [too_large]
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        unclosed = _unclosed(exc, file, line_offset)
        if unclosed is not None:
            return None, [unclosed]
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark else 1 + line_offset
        col = (mark.column + 1) if mark else 1
        problem = exc.problem or exc.context or "invalid YAML"
        if "nesting depth" in problem:
            # libyaml >= 0.2.5 stops deep nesting itself, before our own measure.
            return None, [error("YAML005", f"the document nests deeper than {MAX_DEPTH} levels",
                                Span(file, line, col, line, col + 1))]
        notes = []
        cm = exc.context_mark
        if exc.context and exc.problem:
            problem = f"{problem} ({exc.context})"
            if cm is not None and mark is not None and (cm.line, cm.column) != (mark.line, mark.column):
                notes.append(f"{exc.context.removeprefix('while ')}"
                             f" started at line {cm.line + 1 + line_offset}, column {cm.column + 1}")
        return None, [error("YAML001", f"invalid YAML: {problem}", Span(file, line, col, line, col + 1),
                            *notes)]
    except yaml.YAMLError as exc:
        return None, [error("YAML001", f"invalid YAML: {exc}", Span(file, 1 + line_offset, 1,
                                                                     1 + line_offset, 2))]
    except (RecursionError, MemoryError, ValueError, UnicodeError) as exc:
        return None, [error("YAML001", f"invalid YAML: {type(exc).__name__}",
                            Span(file, 1 + line_offset, 1, 1 + line_offset, 2))]
    if node is None:
        return None, []
    builder = _Builder(file, line_offset)
    try:
        root = builder.build(node)
    except _TooLarge as exc:
        return None, builder.diags + [error("YAML005", exc.message, exc.span)]
    except RecursionError:
        return None, builder.diags + [error("YAML005", "the document nests too deeply",
                                            Span(file, 1 + line_offset, 1, 1 + line_offset, 2))]
    return root, builder.diags
