"""Translation between the dialects: front end A -> IR -> emitter B.

This module wires the driver (front ends, analysis) to the three emitters
in ``translation/``; neither side imports the other. ``flowc translate``
and the tests call :func:`translate_text` / :func:`translate_file`.
"""

from __future__ import annotations

import os

import attrs
from flowc import translation
from flowc.ir.diagnostics import Diagnostic, Severity
from flowc.ir.limits import MAX_SOURCE_BYTES
from flowc.ir.workflow import Workflow
from flowc.pipeline import driver, frontends
from flowc.translation import TARGETS, Emission

__all__ = ["TARGETS", "Translation", "emit", "output_suffix", "translate_file", "translate_text",
           "translate_workflow"]


@attrs.frozen
class Translation:
    path: str
    source_dialect: str | None
    target: str
    workflow: Workflow | None            # the source IR
    emission: Emission | None            # None when the source does not compile
    source_diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.emission is not None and self.emission.ok

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.source_diagnostics + (self.emission.diagnostics if self.emission else ())

    @property
    def text(self) -> str | None:
        return self.emission.text if self.emission is not None else None


def emit(workflow: Workflow, target: str, strict: bool = False) -> Emission:
    """``workflow`` written in ``target``."""
    try:
        emission = translation.emit(workflow, target, strict)
    except RecursionError:
        # An emitter that writes a construct as nested ones (a switch as a
        # chain of conditionals) recurses once per level.
        return Emission("", (Diagnostic("LIM101", Severity.ERROR, f"the workflow nests too deeply to be "
                                         f"written in {target}", workflow.span),))
    return _within_limits(emission, workflow, target)


# Findings of the target's front end that say its output went over a limit.
_LIMIT_CODES = ("LIM", "YAML005", "ANA406")


def _within_limits(emission: Emission, workflow: Workflow, target: str) -> Emission:
    """``emission``, with an error for each limit of ``target`` its text goes
    over. A translation may grow: a switch of 40 keys is a CEL choice 80
    levels deep in dialect 3, nested conditional steps in WorkflowSkill; a
    workflow near MAX_STEPS gains steps. What `flowc translate` writes,
    `flowc check` accepts: the text is read back as the target reads it
    (linear, as every check)."""
    if not emission.text:
        return emission
    size = len(emission.text.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        found = [Diagnostic("LIM001", Severity.ERROR, f"it is {size:,} bytes; the limit is {MAX_SOURCE_BYTES:,}")]
    else:
        found = _limit_findings(emission.text, "translation" + output_suffix(target, workflow), target)
    if not found:
        return emission
    over = []
    for d in found[:10]:
        where = f"line {d.span.line} of the translation: " if d.span.known else ""
        over.append(Diagnostic(d.code, Severity.ERROR, f"the translation to {target} goes over a limit "
                               f"({where}{d.message})", workflow.span))
    return attrs.evolve(emission, diagnostics=(*emission.diagnostics, *over))


def _limit_findings(text: str, path: str, target: str) -> list[Diagnostic]:
    """The limits of ``target`` that ``text`` goes over: its front end's
    findings and the IR's limits (the rest of the analysis is not needed
    for them, and would double the cost of a translation)."""
    from flowc.compiler.analyze.limits import check_limits
    from flowc.ir.limits import MAX_ID_LENGTH

    try:
        compiled, diags = driver.FRONT_ENDS[target].compile(text, path)
    except RecursionError:
        return [Diagnostic("LIM101", Severity.ERROR, "the workflow nests too deeply to compile")]
    found = [d for d in diags if d.is_error and d.code.startswith(_LIMIT_CODES)]
    if compiled is not None and not found:
        found = [d for d in check_limits(compiled) if d.is_error]
        found += [Diagnostic("ANA406", Severity.ERROR, f"step id is {len(n.id)} characters long; the limit is "
                             f"{MAX_ID_LENGTH}", n.span) for n in compiled.nodes if len(n.id) > MAX_ID_LENGTH]
    return found


def translate_workflow(workflow: Workflow, target: str, strict: bool = False) -> Emission:
    return emit(workflow, target, strict)


def translate_text(text: str, path: str, target: str, strict: bool = False,
                   dialect: str | None = None) -> Translation:
    """Compile ``text`` (any dialect) and write it in ``target``. A source
    with errors is not translated (``emission`` is None)."""
    result = driver.compile_text(text, path, dialect)
    if not result.ok:
        return Translation(path, result.dialect, target, result.workflow, None, result.diagnostics)
    front_end = frontends.by_name(result.dialect)
    if front_end is not None and front_end.compile_all is not None:
        return _translate_document(front_end, text, path, target, strict, result)
    return Translation(path, result.dialect, target, result.workflow,
                       emit(result.workflow, target, strict), result.diagnostics)


def _translate_document(front_end: frontends.FrontEnd, text: str, path: str, target: str, strict: bool,
                        result: driver.CompileResult) -> Translation:
    """A document of ``front_end``'s dialect (instruction) may hold several
    workflows. In its own dialect they are written back as one document;
    other dialects hold one workflow per document, so the first is
    translated (with a note)."""
    workflows, _ = front_end.compile_all(text, path)
    if target == front_end.name and len(workflows) > 1:
        return Translation(path, front_end.name, target, result.workflow,
                           translation.emit_document(workflows, strict), result.diagnostics)
    emission = emit(result.workflow, target, strict)
    if len(workflows) > 1:
        note = Diagnostic("TRN001", Severity.NOTE, f"the document holds {len(workflows)} workflows; only the "
                          f"first, {result.workflow.name!r}, is translated", result.workflow.span)
        emission = attrs.evolve(emission, diagnostics=(note, *emission.diagnostics))
    return Translation(path, front_end.name, target, result.workflow, emission, result.diagnostics)


def translate_file(path: str, target: str, strict: bool = False, dialect: str | None = None) -> Translation:
    text, problem = driver.read_source(path)
    if problem is not None:
        return Translation(path, dialect, target, None, None, (problem,))
    return translate_text(text, path, target, strict, dialect)


def output_suffix(target: str, workflow: Workflow | None = None) -> str:
    """The file suffix a translation to ``target`` is written with."""
    front_end = frontends.by_name(target)
    if front_end is None:
        return ".yaml"
    if front_end.bare_yaml and workflow is not None and workflow.dialect == target:
        meta = workflow.metadata or {}
        if "markdown" not in meta and "frontmatter" not in meta:
            return ".yaml"
    return front_end.suffix


def default_output_name(path: str, target: str, workflow: Workflow | None = None) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem + output_suffix(target, workflow)


# ------------------------------------------------------------------ the corpus matrix
VERDICTS = ("native", "lowered", "approximate")


def matrix(workflows: dict[str, list[Workflow]]) -> dict[tuple[str, str], dict[str, int]]:
    """For each (source dialect, target): how many of the source's workflows
    translate natively, with lowerings only, or only approximately (with a
    finding: ``--strict`` refuses them)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for source, wfs in workflows.items():
        for target in TARGETS:
            counts = dict.fromkeys(VERDICTS, 0)
            for wf in wfs:
                counts[emit(wf, target).verdict] += 1
            out[(source, target)] = counts
    return out


def render_matrix(table: dict[tuple[str, str], dict[str, int]]) -> str:
    """The matrix as a Markdown table: one row per source, one column per
    target, each cell `native / lowered / not exactly`."""
    sources = list(dict.fromkeys(s for s, _ in table))
    lines = ["| source \\ target | " + " | ".join(TARGETS) + " |", "|---|" + "---|" * len(TARGETS)]
    for s in sources:
        cells = []
        for t in TARGETS:
            c = table[(s, t)]
            cells.append(f"{c['native']} / {c['lowered']} / {c['approximate']}")
        total = sum(table[(s, TARGETS[0])].values())
        lines.append(f"| {s} ({total}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)
