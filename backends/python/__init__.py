"""The Python module backend: checked IR -> the source of a runnable module.

The module needs only the standard library and :mod:`flowc.runtime` when
it runs (its scheduling model's run module and its dialect's values). It
exposes ``run(inputs, host) -> record`` (see docs/host.md) and runs from a
shell with ``python module.py --inputs in.json --host script.json``.

Importing this package imports nothing else, so the code generator (and
the IR, attrs ...) loads only when something is compiled.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flowc.ir.workflow import Workflow

__all__ = ["BackendError", "compile_workflow", "load_module"]


def compile_workflow(workflow: Workflow) -> str:
    """The source text of the Python module for ``workflow``. The same
    workflow always gives the same text. Raises :class:`BackendError` for
    constructs this backend does not implement."""
    from flowc.backends.python.codegen import BackendError, generate
    from flowc.backends.python.plan_codegen import MODELS as PLAN_MODELS
    from flowc.backends.python.plan_codegen import generate as generate_from_plan
    from flowc.plan import ExecutionModelError, execution_model

    try:
        scheduling = execution_model(workflow)   # the profile's flags, never the dialect
    except ExecutionModelError as exc:
        raise BackendError(str(exc)) from None
    if scheduling in PLAN_MODELS:   # the plan + its model's scheduler (kernel routing, dataflow)
        return generate_from_plan(workflow)
    return generate(workflow)


def load_module(source: str, name: str = "flowc_workflow") -> types.ModuleType:
    """Execute generated module ``source`` as a fresh module (not added to
    ``sys.modules``) and return it; call its ``run(inputs, host)``."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - running it is the point
    return module


def __getattr__(name: str) -> Any:
    if name == "BackendError":
        from flowc.backends.python.codegen import BackendError

        return BackendError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
