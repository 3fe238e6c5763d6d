"""The front ends, one record per dialect: how a document of the dialect is
compiled, and which features of its documents the pipeline and the
command line read.

A rule about one dialect's documents is a field here, never a comparison
with the dialect's name: the driver passes ``strict`` to a front end that
has a strictest validation, a translation writes several workflows back
as one document where the dialect's documents hold several, and so on.
The dialects' meanings (expressions, scheduling, fuel) are in
:mod:`flowc.ir.dialects`.

Each front end is imported when a document of its dialect is first
compiled: a command that reads one WorkflowSkill file does not pay for the
aevatar expression parser.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

__all__ = ["FRONT_ENDS", "FrontEnd", "by_name"]


@attrs.frozen
class FrontEnd:
    name: str
    # (text, path, **options) -> (Workflow | None, diagnostics)
    compile: Callable[..., tuple]
    # Takes ``strict=True``: the dialect's strictest validation.
    strict: bool = False
    # A step may call another workflow by name (``workflow_call``): the
    # front end takes ``known_workflows``, the registry the calls are
    # checked against, and this reads the names a file adds to it:
    # (text, path) -> names.
    registry_names: Callable[[str, str], set[str]] | None = None
    # A document may hold several workflows: (text, path) -> (workflows,
    # diagnostics). The front end takes ``name`` (the one to compile), and
    # a document is written back whole when translated to its own dialect.
    compile_all: Callable[[str, str], tuple] | None = None
    # With compile_all: (text, path) -> the names of the document's
    # workflows, read even when a workflow has errors.
    document_names: Callable[[str, str], list[str]] | None = None
    # (text, path, capabilities) -> findings: the node kinds a document
    # uses that a host (``--host-capabilities``) does not support.
    check_host: Callable[..., list] | None = None
    # The suffix of a document written in this dialect; with
    # ``bare_yaml``, a workflow read from a bare YAML document of this
    # dialect (no Markdown, no front matter) is written as YAML again.
    suffix: str = ".yaml"
    bare_yaml: bool = False


def compile_workflowskill(text: str, path: str, **options):
    from flowc.compiler.workflowskill.frontend import compile_workflowskill as front_end

    return front_end(text, path, **options)


def compile_aevatar(text: str, path: str, **options):
    from flowc.compiler.aevatar.frontend import compile_aevatar as front_end

    return front_end(text, path, **options)


def compile_instruction(text: str, path: str, **options):
    from flowc.compiler.analyze import analyze
    from flowc.compiler.instruction.frontend import compile_instruction as front_end

    return front_end(text, path, analyze=analyze, **options)


def aevatar_registry_names(text: str, path: str) -> set[str]:
    from flowc.compiler.aevatar.registry import names_of

    return names_of(text, path)


def compile_instruction_all(text: str, path: str) -> tuple:
    from flowc.compiler.instruction.frontend import compile_instruction_all as front_end

    return front_end(text, path)


def instruction_document_names(text: str, path: str) -> list[str]:
    from flowc.compiler.instruction.frontend import workflow_names

    return workflow_names(text, path)


def check_instruction_host(text: str, path: str, capabilities) -> list:
    from flowc.compiler.instruction.capabilities import check_host

    return check_host(text, path, capabilities)


FRONT_ENDS: dict[str, FrontEnd] = {fe.name: fe for fe in (
    FrontEnd("workflowskill", compile_workflowskill, suffix=".md", bare_yaml=True),
    FrontEnd("aevatar", compile_aevatar, strict=True, registry_names=aevatar_registry_names),
    FrontEnd("instruction", compile_instruction, compile_all=compile_instruction_all,
             document_names=instruction_document_names, check_host=check_instruction_host),
)}


def by_name(dialect: str | None) -> FrontEnd | None:
    """The front end of ``dialect``; None for an unknown dialect or None."""
    return FRONT_ENDS.get(dialect) if dialect is not None else None
