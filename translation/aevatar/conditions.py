"""Conditions (WorkflowSkill guards and conditional tests, dialect-3
``when``) as aevatar expressions that evaluate to exactly ``'true'`` or
``'false'``.

aevatar's ``conditional`` primitive takes a branch by its ``condition``
parameter: text that ``bool.TryParse`` reads decides, any other text is
looked up in the step's input (case-insensitive). So a lowered condition
must evaluate to ``true``/``false`` for every value the source allows:
``eq``, ``not``, ``and``, ``or``, ``lt`` ... and ``if(x, 'true', 'false')``
always do. Whether the aevatar form takes the same branch as the source's
expression depends on what the operands' text can be; :data:`RULES` says,
per operator, when it does (from the declared type of each side, see
``ToAevatar.scalar``). A condition that no rule covers keeps its closest
form and the caller reports why it is not exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from flowc.ir import expr as E
from flowc.runtime import aevatar_text, wfs

__all__ = ["RULES", "Conditions"]

TRUE, FALSE = E.Literal("true", "string"), E.Literal("false", "string")

# What a condition's text is when the rule does not apply: (expression,
# why it is not exact) -- the reason None means exact.
Result = tuple[E.Expr, "str | None"]


def _call(name: str, *args: E.Expr) -> E.Call:
    return E.Call("aevatar." + name, tuple(args))


def _if(test: E.Expr) -> E.Expr:
    """'true'/'false' by aevatar's truthiness of ``test``."""
    return E.Conditional("aevatar.if", test, TRUE, FALSE)


def _number_text(value) -> str | None:
    """A number constant's text that .NET's double.TryParse reads as the
    same double (Python's repr is the shortest round-trip form)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        value = int(value)
    return str(value) if isinstance(value, int) else repr(value)


class Conditions:
    """``ToAevatar`` supplies ``scalar(ref) -> (kind, why)``, the declared
    scalar kind of a reference whose aevatar text is that value's text
    (``bool``, ``int``, ``float``, ``string``; None and a reason when
    nothing is known), and ``ref(ref)``, the reference in aevatar form.
    ``js``: WorkflowSkill's expressions (JavaScript truthiness; ``<`` reads
    null, missing values and non-numeric constants as numbers, null as 0);
    else CEL's (a condition is a boolean, ``<`` compares numbers only and
    dialect 3 only reads values that exist)."""

    def __init__(self, conv, js: bool) -> None:
        self.conv = conv
        self.js = js
        # Declared kinds a bare value may have as a condition: WorkflowSkill
        # judges any value (JavaScript truthiness), CEL only booleans.
        self.truthy_kinds = frozenset({"bool", "int", "string"}) if js else frozenset({"bool"})

    def test(self, e: E.Expr) -> Result:
        """``e`` as a condition (its truthiness)."""
        if isinstance(e, E.Literal) and isinstance(e.value, bool):
            return (TRUE if e.value else FALSE), None
        if isinstance(e, E.Literal) and self.js and (e.value is None or isinstance(e.value, (int, float, str))):
            # A constant's JavaScript truthiness is known here.
            return (TRUE if e.value not in (None, 0, "") else FALSE), None
        if isinstance(e, E.Ref):
            return self._truthy_ref(e)
        op = e.op if isinstance(e, (E.Unary, E.Binary)) else None
        rule = RULES.get(op.split(".", 1)[1] if op else "")
        if rule is None:
            return TRUE, f"{op or type(e).__name__} has no aevatar condition that keeps its meaning"
        how, fn = rule
        return how(self, e, fn)

    # ------------------------------------------------------------- operands
    def _truthy_ref(self, e: E.Ref) -> Result:
        kind, why = self.conv.scalar(e)
        ref = self.conv.ref(e)
        if kind not in self.truthy_kinds:
            return _if(ref), why or (f"a value of type {kind} as a condition" if kind else
                                    "a value whose type is not declared as a condition")
        if kind in ("bool", "int"):
            # true/false/blank, or an integer's text: aevatar's truthiness is
            # the source's (null and missing are blank: false).
            return _if(ref), None
        if kind == "string":
            # Non-empty is true in both; eq() compares texts ordinally when
            # one side ('') is not a number.
            return _call("not", _call("eq", ref, E.Literal("", "string"))), None
        return _if(ref), why or "a number that is not an integer is judged by aevatar's own truthiness " \
                                "(|n| >= 1e-9)"

    def _number(self, e: E.Expr) -> Result:
        if isinstance(e, E.Literal):
            value = wfs.to_number(e.value) if self.js else e.value
            text = _number_text(value)
            return (E.Literal(text, "string"), None) if text is not None else \
                (E.Literal("0", "string"), "a comparison with a constant that is not a number")
        if isinstance(e, E.Ref):
            kind, why = self.conv.scalar(e)
            ref = self.conv.ref(e)
            if kind in ("int", "float"):
                if self.js:
                    ref = E.Conditional("aevatar.if", _call("isblank", ref), E.Literal("0", "string"), ref)
                return ref, None
            return ref, why or "an ordering comparison of a value that is not declared a number"
        return E.Literal("0", "string"), "an ordering comparison of a computed value"

    # ------------------------------------------------------------- rules
    def _not(self, e: E.Unary, fn: str) -> Result:
        inner, why = self.test(e.operand)
        return _call(fn, inner), why

    def _both(self, e: E.Binary, fn: str) -> Result:
        (left, lw), (right, rw) = self.test(e.left), self.test(e.right)
        return _call(fn, left, right), lw or rw

    def equals(self, e: E.Binary, fn: str = "eq") -> Result:
        """``value == constant`` as aevatar's eq()."""
        folded = _fold_equal(e.left, e.right)
        if folded is not None:
            return (TRUE if folded else FALSE), None
        ref, const = (e.left, e.right) if isinstance(e.right, E.Literal) else (e.right, e.left)
        if not isinstance(ref, E.Ref) or not isinstance(const, E.Literal):
            return TRUE, "an equality that is not between a value and a constant"
        kind, why = self.conv.scalar(ref)
        aev = self.conv.ref(ref)
        value = const.value
        text = _equal_text(kind, value)
        if text is None:
            reason = why or f"aevatar's eq() compares text (numbers within 1e-9); a {kind or 'value'} " \
                            f"compared with {value!r} may compare differently"
            return _call("eq", aev, E.Literal(str(value), "string")), reason
        return _call("eq", aev, E.Literal(text, "string")), None

    def _ne(self, e: E.Binary, fn: str) -> Result:
        inner, why = self.equals(e)
        return _call(fn, inner), why

    def _order(self, e: E.Binary, fn: str) -> Result:
        (left, lw), (right, rw) = self._number(e.left), self._number(e.right)
        return _call(fn, left, right), lw or rw


def _category(v) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number" if not (isinstance(v, float) and math.isnan(v)) else None
    return "string" if isinstance(v, str) else None


def _fold_equal(a: E.Expr, b: E.Expr) -> bool | None:
    """Two constants of one kind are equal or not in every dialect (numbers
    by value, text and booleans as they are); None otherwise."""
    if not (isinstance(a, E.Literal) and isinstance(b, E.Literal)):
        return None
    kind = _category(a.value)
    if kind is None or kind != _category(b.value):
        return None
    return a.value == b.value


def _equal_text(kind: str | None, value) -> str | None:
    """The text to compare a value of declared ``kind`` with, when aevatar's
    eq() on the two texts is the source's equality for every value of that
    kind (null and missing are blank text in aevatar); else None."""
    if kind == "bool" and isinstance(value, bool):
        return "true" if value else "false"
    if kind == "int" and not isinstance(value, bool) and isinstance(value, (int, float)) \
            and math.isfinite(value) and float(value).is_integer() and abs(value) < 2 ** 53:
        # Integers differ by at least 1, far outside eq()'s 1e-9.
        return str(int(value))
    if kind == "string" and isinstance(value, str) and value != "" \
            and aevatar_text.try_parse_double(value) is None:
        # Not a number to .NET, so eq() compares the texts ordinally; not
        # blank, so a null or missing value never equals it.
        return value
    return None


# operator (without its dialect prefix) -> (how, the aevatar function)
RULES: dict[str, tuple[Callable, str]] = {
    "not": (Conditions._not, "not"),
    "and": (Conditions._both, "and"),
    "or": (Conditions._both, "or"),
    "eq": (Conditions.equals, "eq"),
    "ne": (Conditions._ne, "not"),
    "lt": (Conditions._order, "lt"),
    "le": (Conditions._order, "lte"),
    "gt": (Conditions._order, "gt"),
    "ge": (Conditions._order, "gte"),
}
