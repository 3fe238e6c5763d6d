"""Evaluating one expression, or a batch of them, in a context (``flowc eval``).

This module wires a dialect's front end (text -> IR expression) to the
Python backend (IR expression -> value); neither imports the other.

Output, one JSON line per expression (the format of
tests/data/expressions/README and the shared expression corpus):

- the value, as compact ``JSON.stringify`` with JavaScript number formatting
  (``1.0`` prints as ``1``);
- ``{"undefined": true}`` when the value is missing (JavaScript undefined);
- ``{"error": "<message>"}`` when the text doesn't lex/parse or evaluation
  fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import attrs
from flowc.backends.python.expr import ExprCompileError, evaluate
from flowc.compiler.workflowskill.expressions import ExpressionError, parse_expression, parse_value
from flowc.host import loads_json
from flowc.ir.span import Span
from flowc.runtime import wfs as rt

__all__ = ["LANGS", "LANGUAGES", "MODES", "ExpressionLanguage", "evaluate_text", "format_line", "run_batch", "run_eval"]

LANGS = ("workflowskill", "aevatar", "cel", "instruction")
MODES = ("expression", "value")

_ORIGIN = Span("<eval>", 1, 1, 1, 1)


def evaluate_text(lang: str, expr_text: str, vars: Any = None, mode: str = "expression",
                  backend: str = "python") -> tuple[str, Any]:
    """Evaluate ``expr_text`` (see :func:`_evaluate`). Fuel bounds the work
    of an evaluation but not the memory its values take, by design: one
    that runs out of memory is an error like any other, never a traceback,
    and a batch goes on with its next line."""
    return _guarded(_evaluate, lang, expr_text, vars, mode, backend)


def _guarded(evaluate_fn, *args) -> tuple[str, Any]:
    try:
        return evaluate_fn(*args)
    except MemoryError:
        return "error", "out of memory"
    except RecursionError:   # vars given through the API, which no loader measured
        return "error", "the values nest too deeply"


def _evaluate(lang: str, expr_text: str, vars: Any, mode: str, backend: str,
              case_insensitive: bool = False) -> tuple[str, Any]:
    """Evaluate ``expr_text`` in the context ``vars`` by the language's
    evaluator (:data:`LANGUAGES`): ``("value", v)``, ``("undefined",
    None)``, ``("json", text)`` or ``("error", message)``."""
    language = LANGUAGES.get(lang)
    if language is None:
        return "error", f"language not supported yet: {lang}"
    return language.evaluate(expr_text, vars, mode, backend, case_insensitive)


def _evaluate_workflowskill(expr_text: Any, vars: Any, mode: str, backend: str,
                            case_insensitive: bool) -> tuple[str, Any]:
    """WorkflowSkill: ``vars`` is the run context ``{inputs, steps: {id:
    {output}}, item?, index?, result?}`` (absent keys are missing) and
    ``mode`` is ``expression`` (a bare ``$``-expression: condition, each,
    where, map expression) or ``value`` (a value string: literal,
    ``$``-expression, ``${...}`` template or ``$$`` escape). The Python
    backend evaluates it; names are matched exactly."""
    if mode not in MODES:
        return "error", f"unknown mode: {mode} (expected expression or value)"
    if not isinstance(expr_text, str):
        return "error", "expr must be a string"
    if vars is None:
        vars = {}
    if not isinstance(vars, dict):
        return "error", "vars must be a JSON object"
    try:
        parse = parse_expression if mode == "expression" else parse_value
        value = evaluate(parse(expr_text, _ORIGIN), vars)
    except (ExpressionError, rt.EvalError) as e:
        return "error", e.message
    except ExprCompileError as e:
        return "error", str(e)
    if value is rt.MISSING:
        return "undefined", None
    return "value", rt.to_json_value(value)


def run_eval(lang: str, expr_text: str, vars: Any = None, mode: str = "expression") -> Any:
    """:func:`evaluate_text` as one JSON-ready result: the value,
    ``{"undefined": True}`` or ``{"error": message}``."""
    kind, value = evaluate_text(lang, expr_text, vars, mode)
    if kind == "undefined":
        return {"undefined": True}
    if kind == "error":
        return {"error": value}
    if kind == "json":
        return json.loads(value)
    return value


def format_line(kind: str, value: Any) -> str:
    """One output line (without the newline) for an :func:`evaluate_text` result."""
    if kind == "undefined":
        return '{"undefined": true}'
    if kind == "error":
        return '{"error": ' + rt.js_json(value) + "}"
    if kind == "json":  # already JSON text (CEL: int64 and uint64 stay exact, doubles keep a point)
        return value
    return rt.js_json(value)


def _batch_line(line: str, lang: str, backend: str = "python") -> str:
    try:
        request = loads_json(line, "the line")
    except ValueError as e:
        return format_line("error", f"invalid batch line: {e}")
    if not isinstance(request, dict) or not isinstance(request.get("expr"), str):
        return format_line("error", 'invalid batch line: expected {"expr": <string>, "vars": ..., "mode": ...}')
    # A line may ask for OrdinalIgnoreCase variable lookup (aevatar's while
    # and foreach scopes); the other languages match names exactly.
    return format_line(*_guarded(_evaluate, lang, request["expr"], request.get("vars"),
                                 request.get("mode", "expression"), backend,
                                 request.get("variables_comparer") == "OrdinalIgnoreCase"))


def run_batch(lines: Iterable[str], lang: str = "workflowskill", backend: str = "python") -> list[str]:
    """One output line per non-blank input line ``{"expr", "vars"?, "mode"?}``."""
    return [_batch_line(line, lang, backend) for line in lines if line.strip()]


# --- aevatar -------------------------------------------------------------------
def _evaluate_aevatar(expr_text: Any, vars: Any, mode: str, backend: str,
                      case_insensitive: bool) -> tuple[str, Any]:
    """aevatar: ``mode`` ``value`` is the engine's Evaluate (a parameter
    value with ``${...}`` placeholders), ``expression`` its EvaluateExpression
    (one expression, not trimmed: a while condition without ``${``).
    ``vars`` maps names to strings; ``case_insensitive`` looks them up
    ignoring case (the engine's while and foreach scopes). The result is a
    string, or ``("error", message)`` where the engine throws."""
    from flowc.backends.python import aevatar_expr
    from flowc.compiler.aevatar.expressions import Locator, Lowering
    from flowc.runtime import aevatar_text

    if mode not in MODES:
        return "error", f"unknown mode: {mode} (expected expression or value)"
    if not isinstance(expr_text, str):
        return "error", "expr must be a string"
    if vars is None:
        vars = {}
    if not isinstance(vars, dict) or not all(isinstance(v, str) for v in vars.values()):
        return "error", "vars must be a JSON object of strings (aevatar values are strings)"
    lowering = Lowering(None, Locator(_ORIGIN))
    expr = lowering.template(expr_text) if mode == "value" else lowering.expression(expr_text)
    try:
        return "value", aevatar_expr.evaluate(expr, vars, case_insensitive)
    except aevatar_text.AevatarError as e:
        return "error", e.message
    except aevatar_expr.AevatarCompileError as e:
        return "error", str(e)


# --- CEL (the instruction dialect's expressions) -----------------------------------
def _evaluate_with_fuel(evaluate: Any, *args: Any) -> Any:
    """``evaluate(*args)`` with the CEL runtime's comprehensions and list
    scans held to a run's iteration budget, as they are inside a run."""
    from flowc.runtime import cel
    from flowc.runtime.fuel import Fuel

    outer = cel.set_fuel(Fuel().iterate)
    try:
        return evaluate(*args)
    finally:
        cel.set_fuel(outer)


def _evaluate_cel(expr_text: Any, vars: Any, mode: str, backend: str,
                  case_insensitive: bool) -> tuple[str, Any]:
    """CEL: ``vars`` are the expression's variables (``{"inputs": {...},
    "steps": {...}}`` or any other names); the value comes back as JSON text
    (uint as a number, bytes as base64, see cel.to_json)."""
    from flowc.backends.python.cel_expr import CelCompileError
    from flowc.compiler.instruction.cel import CelSyntaxError, parse_cel
    from flowc.runtime import cel
    from flowc.runtime.fuel import OutOfFuel

    if not isinstance(expr_text, str):
        return "error", "expr must be a string"
    if vars is None:
        vars = {}
    if not isinstance(vars, dict):
        return "error", "vars must be a JSON object"
    from flowc.backends.vm import device
    from flowc.backends.vm.plan_assemble import PlanAssembleError, assemble_expressions

    try:
        expr = parse_cel(expr_text, _ORIGIN)
        if backend == "vm":   # compiled to expression code, loaded (verified) and run by the expression machine
            value = _evaluate_with_fuel(device.load(assemble_expressions([expr])).evaluate, 0, dict(vars))
        else:
            from flowc.backends.python.cel_expr import evaluate_cel

            value = _evaluate_with_fuel(evaluate_cel, expr, dict(vars))
        return "json", cel.to_json_text(value)
    except OutOfFuel as e:
        return "error", e.message
    except CelSyntaxError as e:
        return "error", f"syntax error: {e.message}"
    except cel.CelError as e:
        return "error", e.message
    except (CelCompileError, PlanAssembleError) as e:
        return "error", str(e)


@attrs.frozen
class ExpressionLanguage:
    """One language ``flowc eval`` reads."""

    # (expr_text, vars, mode, backend, case_insensitive) -> result
    evaluate: Callable[..., tuple[str, Any]]
    # A text holding ``${`` is a template, which only the value mode reads
    # as one: without --mode, such a text is evaluated as a value.
    templates: bool


# The languages, by name. `instruction` (in LANGS) has no evaluator of its
# own yet: its expressions are CEL.
LANGUAGES: dict[str, ExpressionLanguage] = {
    "workflowskill": ExpressionLanguage(_evaluate_workflowskill, templates=True),
    "aevatar": ExpressionLanguage(_evaluate_aevatar, templates=True),
    "cel": ExpressionLanguage(_evaluate_cel, templates=False),
}
