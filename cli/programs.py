"""From a workflow file to a program to run: compile it (findings on
stderr) and load it on the chosen backend, the Python module or the VM.
``flowc compile``, ``run`` and ``resume`` start here."""

from __future__ import annotations

import sys

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.output import backend_error

VM_MISSING = "the vm backend is not available yet; use --backend python"


def compile_for_backend(path: str, dialect: str | None, show_warnings: bool,
                        workflow_name: str | None = None):
    """Front end + analyze; print the findings (to stderr). The workflow, or
    None with the exit status to use. ``workflow_name`` picks one workflow
    of an instruction document that holds several (default: the first);
    only its own findings (and the document's) can stop it."""
    from flowc.cli import reporting
    from flowc.pipeline import driver

    text, problem = driver.read_source(path)
    if problem is not None:
        print(reporting.render_text(problem, None), file=sys.stderr)
        return None, EXIT_USAGE
    result = driver.compile_text(text, path, dialect, workflow=workflow_name)
    if workflow_name is not None and not _has_workflow(text, path, result, workflow_name):
        return None, EXIT_USAGE
    if result.diagnostics and (show_warnings or not result.ok):
        print(reporting.render_all_text(result.diagnostics, {path: text}), file=sys.stderr)
    if not result.ok:
        return None, EXIT_FINDINGS
    return result.workflow, EXIT_OK


def _has_workflow(text: str, path: str, result, name: str) -> bool:
    """``--workflow NAME`` names a workflow of an instruction document (a
    config with several `workflows:` entries, an instruction.md with
    several); say so when it does not."""
    from flowc.pipeline import frontends

    if result.dialect is None:
        return True  # the findings say why
    front_end = frontends.by_name(result.dialect)
    if front_end is None or front_end.document_names is None:
        print(f"flowc: error: --workflow picks a workflow of an instruction document; {path} is "
              f"{result.dialect}", file=sys.stderr)
        return False
    if result.workflow is not None:
        return True
    names = front_end.document_names(text, path)
    if name in names:
        return True
    from flowc.termtext import shown

    print(shown(f"flowc: error: {path} has no workflow named {name!r} (it has: {', '.join(names)})"),
          file=sys.stderr)
    return False


def vm_backend():
    """The VM's (compile, load) pair, or None while backends/vm lacks them."""
    try:
        from flowc.backends import vm
    except ImportError:
        return None
    compile_fn = getattr(vm, "compile_workflow", None)
    load_fn = getattr(vm, "load", None)
    if callable(compile_fn) and callable(load_fn):
        return compile_fn, load_fn
    return None


def vm_errors(used: bool) -> tuple:
    """What the bytecode backend raises for a workflow it can't compile or load."""
    if not used:
        return ()
    from flowc.backends.vm import VMError
    from flowc.backends.vm.plan_assemble import AssembleError

    return (AssembleError, VMError)


def load(path: str, workflow, vm):
    """The program of a compiled ``workflow``: a Python module, or a VM
    program when ``vm`` is the VM's (compile, load) pair; None after
    printing why the backend refused it."""
    from flowc.backends.python import BackendError, compile_workflow, load_module

    try:
        if vm is not None:
            return vm[1](vm[0](workflow))
        return load_module(compile_workflow(workflow))
    except BackendError as exc:
        backend_error(path, exc)
    except vm_errors(vm is not None) as exc:
        backend_error(path, exc)
    return None


def load_program(path: str, dialect: str | None, backend: str, workflow_name: str | None):
    """The compiled program (module or VM program) of a workflow, or None
    and the exit status (the findings are printed)."""
    vm = vm_backend() if backend == "vm" else None
    if backend == "vm" and vm is None:
        print(f"flowc: error: {VM_MISSING}", file=sys.stderr)
        return None, EXIT_USAGE
    workflow, status = compile_for_backend(path, dialect, show_warnings=False, workflow_name=workflow_name)
    if workflow is None:
        return None, status
    program = load(path, workflow, vm)
    return (program, EXIT_OK) if program is not None else (None, EXIT_FINDINGS)
