"""The properties flowc is fuzzed against, as plain functions.

Each check raises :class:`PropertyFailure` (naming the property) when it
does not hold, and returns normally otherwise. ``tests/test_properties.py``
runs them on a bounded number of examples; ``flowc fuzz`` runs them at
scale (:mod:`flowc.testing.campaign`).
"""

from __future__ import annotations

import json

from flowc.testing.failures import PropertyFailure, Unsupported, _canonical, _crash, _fail

__all__ = [
    "PROPERTIES",
    "PropertyFailure",
    "backend_equivalence",
    "bytecode_round_trip",
    "check_never_crashes",
    "check_valid",
    "cross_dialect",
    "determinism",
    "ir_round_trip",
    "mutant_caught",
    "translate_round_trip",
]

# name -> what it checks (the fuzz summary lists them).
PROPERTIES: dict[str, str] = {
    "valid": "every generated workflow checks without errors",
    "never-crash": "any bytes, any YAML, any mutant: findings with known codes, never an exception",
    "mutant-caught": "every mutant is reported with exactly its expected finding code",
    "backend-equivalence": "the Python module and the VM give identical run records",
    "ir-round-trip": "IR -> plain data -> IR (and through JSON text) is the identity",
    "bytecode-round-trip": "IR -> bytecode -> disasm is stable, and equal for the round-tripped IR",
    "determinism": "compiling twice gives byte-identical IR, Python source and bytecode",
    "translate-round-trip": "source -> translate to its own dialect -> IR equals the source's IR (modulo spans)",
    "cross-dialect": "a workflow translated to another dialect runs to the same record",
    "hostile-text": "payloads in every text field never run; modules are Python; nothing raises",
}


def _errors(result) -> list[str]:
    return [f"{d.code} {d.message} (line {d.span.line})" for d in result.diagnostics if d.is_error]


# ------------------------------------------------------------------ compile
def compile_text(text: str, file_name: str, dialect: str | None, prop: str = "never-crash"):
    from flowc.pipeline import driver

    try:
        return driver.compile_text(text, file_name, dialect)
    except Exception as exc:  # noqa: BLE001 - a crash is what this property looks for
        _crash(prop, "compile_text", exc)


def check_valid(text: str, file_name: str, dialect: str):
    """The generated workflow compiles without errors; returns the result."""
    result = compile_text(text, file_name, dialect, "valid")
    if not result.ok:
        _fail("valid", "a generated workflow does not check: " + "; ".join(_errors(result)))
    return result


def check_never_crashes(text: str, file_name: str, dialect: str | None = None):
    """Compiling ``text`` gives a result whose findings all have registered
    codes, and a missing workflow always comes with an error."""
    from flowc.compiler.codes import CODES
    from flowc.ir.workflow import Workflow

    result = compile_text(text, file_name, dialect)
    if result.workflow is not None and not isinstance(result.workflow, Workflow):
        _fail("never-crash", f"compile_text returned a {type(result.workflow).__name__}, not a Workflow")
    for d in result.diagnostics:
        if d.code not in CODES:
            _fail("never-crash", f"finding with unregistered code {d.code!r}: {d.message}")
        if not d.message:
            _fail("never-crash", f"finding {d.code} has no message")
    if result.workflow is None and not any(d.is_error for d in result.diagnostics):
        _fail("never-crash", "no workflow and no error: a silent failure")
    if result.ok:
        # What checks clean must also compile in both backends.
        _backends(result.workflow, "never-crash")
    return result


def mutant_caught(mutant) -> None:
    """The mutant is reported with exactly its expected code."""
    try:
        codes = mutant.error_codes()
    except Exception as exc:  # noqa: BLE001
        _crash("never-crash", f"checking mutant {mutant.operator}", exc)
    if codes != {mutant.code}:
        found = ", ".join(sorted(codes)) or "no error"
        _fail("mutant-caught", f"mutant {mutant.operator} ({mutant.description}) should be reported as "
              f"{mutant.code} only; flowc reports {found}")


# ------------------------------------------------------------------ backends
def _backends(workflow, prop: str) -> tuple[str, bytes | None]:
    """The Python source and the bytecode (None when the VM does not run
    the workflow's semantics)."""
    from flowc.backends.python import compile_workflow as python_source
    from flowc.backends.vm import AssembleError
    from flowc.backends.vm import compile_workflow as bytecode

    try:
        source = python_source(workflow)
    except Exception as exc:  # noqa: BLE001
        _crash(prop, "the Python backend", exc)
    try:
        data = bytecode(workflow)
    except AssembleError as exc:
        if vm_unsupported(workflow) is not None:
            return source, None
        _crash(prop, "the bytecode assembler", exc)
    except Exception as exc:  # noqa: BLE001
        _crash(prop, "the bytecode assembler", exc)
    return source, data


_VM_SEMANTICS: dict[str, str | None] = {}


def vm_unsupported(workflow) -> str | None:
    """Why the VM cannot run ``workflow``'s semantics (None: it can)."""
    if workflow.semantics in _VM_SEMANTICS:
        return _VM_SEMANTICS[workflow.semantics]
    from flowc.backends.vm import AssembleError
    from flowc.backends.vm import compile_workflow as bytecode

    try:
        bytecode(workflow)
    except AssembleError as exc:
        if "semantics" not in str(exc):
            return None  # a problem of this workflow: the property reports it
        _VM_SEMANTICS[workflow.semantics] = f"the VM does not run {workflow.semantics} workflows"
    except Exception:  # noqa: BLE001 - reported by the property itself
        return None
    else:
        _VM_SEMANTICS[workflow.semantics] = None
    return _VM_SEMANTICS[workflow.semantics]


def python_runs(workflow, inputs: dict, host_script: dict) -> dict:
    """The Python module runs to a record without raising."""
    from flowc.backends.python import compile_workflow, load_module
    from flowc.host import ScriptedHost

    try:
        source = compile_workflow(workflow)
    except Exception as exc:  # noqa: BLE001
        _crash("never-crash", "the Python backend", exc)
    try:
        record = load_module(source).run(inputs, ScriptedHost(host_script))
    except Exception as exc:  # noqa: BLE001
        _crash("never-crash", "running the Python module", exc)
    try:
        json.dumps(record, allow_nan=True, default=_not_json)
    except (TypeError, ValueError) as exc:
        _fail("never-crash", f"the run record is not JSON data: {exc}")
    return record


def _not_json(value):
    raise TypeError(f"{type(value).__name__} in the run record")


def backend_equivalence(workflow, inputs: dict, host_script: dict) -> dict:
    """The Python module and the VM give identical run records (same
    status, outputs, steps, calls and sleeps) with the same scripted host.
    Returns the Python record."""
    from flowc.backends.python import load_module
    from flowc.backends.vm import load
    from flowc.host import ScriptedHost

    source, data = _backends(workflow, "backend-equivalence")
    try:
        want = load_module(source).run(inputs, ScriptedHost(host_script))
    except Exception as exc:  # noqa: BLE001
        _crash("backend-equivalence", "running the Python module", exc)
    if data is None:
        raise Unsupported("backend-equivalence", vm_unsupported(workflow) or "the VM cannot run it")
    try:
        got = load(data).run(inputs, ScriptedHost(host_script))
    except Exception as exc:  # noqa: BLE001
        _crash("backend-equivalence", "running the bytecode on the VM", exc)
    if got != want or _canonical(got) != _canonical(want):
        _fail("backend-equivalence", "the VM's run record differs from the Python module's:\n"
              f"python: {_canonical(want)}\nvm:     {_canonical(got)}")
    return want


# ------------------------------------------------------------------ round trips
def ir_round_trip(workflow) -> None:
    from flowc.ir.serialize import from_data, to_data

    try:
        data = to_data(workflow)
        again = from_data(data)
        via_json = from_data(json.loads(json.dumps(data, allow_nan=True)))
    except Exception as exc:  # noqa: BLE001
        _crash("ir-round-trip", "serializing the IR", exc)
    if again != workflow:
        _fail("ir-round-trip", "from_data(to_data(ir)) differs from the IR")
    if via_json != workflow:
        _fail("ir-round-trip", "the IR does not survive JSON text")
    if to_data(again) != data:
        _fail("ir-round-trip", "to_data of the round-tripped IR differs")


def bytecode_round_trip(workflow) -> None:
    from flowc.backends.vm import compile_workflow, disassemble, load
    from flowc.ir.serialize import from_data, to_data

    reason = vm_unsupported(workflow)
    if reason is not None:
        raise Unsupported("bytecode-round-trip", reason)
    try:
        data = compile_workflow(workflow)
        load(data)  # verifies
        listing = disassemble(data)
        again = compile_workflow(from_data(to_data(workflow)))
        listing_again = disassemble(again)
        twice = disassemble(data)
    except Exception as exc:  # noqa: BLE001
        _crash("bytecode-round-trip", "assembling, verifying or disassembling", exc)
    if listing != twice:
        _fail("bytecode-round-trip", "disassembling the same bytecode twice gives different listings")
    if again != data:
        _fail("bytecode-round-trip", "the round-tripped IR assembles to different bytecode")
    if listing_again != listing:
        _fail("bytecode-round-trip", "the round-tripped IR disassembles differently")


def determinism(text: str, file_name: str, dialect: str) -> None:
    """Two compilations of the same text give byte-identical outputs."""
    from flowc.ir.serialize import to_data

    first = compile_text(text, file_name, dialect, "determinism")
    second = compile_text(text, file_name, dialect, "determinism")
    if [d.as_json() for d in first.diagnostics] != [d.as_json() for d in second.diagnostics]:
        _fail("determinism", "the findings differ between two compilations")
    if first.workflow is None:
        return
    a, b = to_data(first.workflow), to_data(second.workflow)
    if json.dumps(a, sort_keys=True, default=repr) != json.dumps(b, sort_keys=True, default=repr):
        _fail("determinism", "the IR differs between two compilations")
    if not first.ok:
        return
    source_a, data_a = _backends(first.workflow, "determinism")
    source_b, data_b = _backends(second.workflow, "determinism")
    if source_a != source_b:
        _fail("determinism", "the Python source differs between two compilations")
    if data_a != data_b:
        _fail("determinism", "the bytecode differs between two compilations")


# ------------------------------------------------------------------ translation
def translation_unavailable(dialect: str) -> str | None:
    """Why translation properties cannot run for ``dialect`` (None: they can)."""
    try:
        from flowc.testing import translation
    except ImportError:
        return "flowc cannot translate yet"
    return translation.unavailable(dialect)


def translation_targets(workflow) -> list[str]:
    from flowc.testing import translation

    return translation.targets(workflow)


def translate_round_trip(workflow, dialect: str, file_name: str | None = None) -> None:
    """Translating a workflow into its own dialect and compiling the text
    gives the same IR, modulo spans; translating again gives the same text."""
    from flowc.testing import translation

    translation.round_trip(workflow, dialect, file_name)


def cross_dialect(workflow, target: str, inputs: dict, host_script: dict) -> bool:
    """A translation into ``target`` that claims to be exact checks clean
    and runs to the same outcome, outputs and host calls."""
    from flowc.testing import translation

    return translation.cross_dialect(workflow, target, inputs, host_script)
