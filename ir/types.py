"""The small type lattice used to check wiring between steps.

    any
     |-- null, bool, int <: float, string
     |-- array[T]
     `-- object{fields}   (open: extra fields allowed)

``ANY`` is the top: it is assignable to and from everything, so a value we
know nothing about never produces a false error.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Type:
    """A type: ``kind`` is one of null bool int float string array object any."""

    kind: str
    item: Type | None = None  # array element type
    fields: tuple[tuple[str, Type], ...] = ()  # object fields, in declaration order

    def __str__(self) -> str:
        if self.kind == "array":
            return f"array[{self.item}]" if self.item and self.item.kind != "any" else "array"
        if self.kind == "object" and self.fields:
            inner = ", ".join(f"{k}: {v}" for k, v in self.fields)
            return "object{" + inner + "}"
        return self.kind

    def field(self, name: str) -> Type | None:
        for key, value in self.fields:
            if key == name:
                return value
        return None


ANY = Type("any")
NULL = Type("null")
BOOL = Type("bool")
INT = Type("int")
FLOAT = Type("float")
STRING = Type("string")
ARRAY = Type("array", ANY)
OBJECT = Type("object")

SCALAR_NAMES = {"null": NULL, "bool": BOOL, "boolean": BOOL, "int": INT, "integer": INT,
                "float": FLOAT, "number": FLOAT, "string": STRING, "any": ANY}


def array_of(item: Type) -> Type:
    return Type("array", item)


def object_of(fields: dict[str, Type] | tuple[tuple[str, Type], ...]) -> Type:
    items = tuple(fields.items()) if isinstance(fields, dict) else tuple(fields)
    return Type("object", None, items)


def from_name(name: str) -> Type | None:
    """Map a dialect's type name (``string``, ``boolean``, ``array`` ...) to a Type."""
    if name in SCALAR_NAMES:
        return SCALAR_NAMES[name]
    if name == "array":
        return ARRAY
    if name == "object":
        return OBJECT
    return None


def is_assignable(source: Type, target: Type) -> bool:
    """Can a value of type ``source`` flow where ``target`` is expected?"""
    if source.kind == "any" or target.kind == "any":
        return True
    if source.kind == "null":
        # Skipped steps and missing fields produce null everywhere.
        return True
    if source.kind == target.kind:
        if source.kind == "array":
            return is_assignable(source.item or ANY, target.item or ANY)
        if source.kind == "object":
            for name, t in target.fields:
                s = source.field(name)
                if s is not None and not is_assignable(s, t):
                    return False
        return True
    return source.kind == "int" and target.kind == "float"


def join(a: Type, b: Type) -> Type:
    """Least upper bound: the type of a value that is either an ``a`` or a ``b``."""
    if a == b:
        return a
    if a.kind == "null":
        return b
    if b.kind == "null":
        return a
    if {a.kind, b.kind} == {"int", "float"}:
        return FLOAT
    if a.kind == b.kind == "array":
        return array_of(join(a.item or ANY, b.item or ANY))
    if a.kind == b.kind == "object":
        return OBJECT
    return ANY


def of_value(value: object) -> Type:
    """The type of a plain (JSON-like) constant."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STRING
    if isinstance(value, (list, tuple)):
        item: Type | None = None
        for v in value:
            t = of_value(v)
            item = t if item is None else join(item, t)
        return array_of(item or ANY)
    if isinstance(value, dict):
        return OBJECT
    return ANY
