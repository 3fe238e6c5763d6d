"""The compiler driver: source text -> dialect front end -> IR -> analyze.

This is the one place that knows every front end; the CLI and the library
API call it. Backends are reached from the CLI, never from here.
"""

from __future__ import annotations

import gc
import os
import re

import attrs
from flowc.compiler.analyze import analyze
from flowc.compiler.workflowskill.markdown import has_workflow_fence
from flowc.host import encoding_hint
from flowc.ir.diagnostics import Diagnostic, error
from flowc.ir.span import Span
from flowc.ir.workflow import Workflow

DIALECTS = ("workflowskill", "aevatar", "instruction")

# Findings that are consequences of a gap the front end already reported.
CASCADE_CODES = frozenset({"ANA402", "ANA404", "ANA405"})


# Each front end is imported when a document of its dialect is first
# compiled: a command that reads one WorkflowSkill file does not pay for
# the aevatar expression parser.
def compile_workflowskill(text: str, path: str, **options):
    from flowc.compiler.workflowskill.frontend import compile_workflowskill as front_end

    return front_end(text, path, **options)


def compile_aevatar(text: str, path: str, **options):
    from flowc.compiler.aevatar.frontend import compile_aevatar as front_end

    return front_end(text, path, **options)


def compile_instruction(text: str, path: str, **options):
    from flowc.compiler.instruction.frontend import compile_instruction as front_end

    return front_end(text, path, **options)


# One front end per dialect: (text, path) -> (Workflow | None, diagnostics).
FRONT_ENDS = {
    "workflowskill": compile_workflowskill,
    "aevatar": compile_aevatar,
    "instruction": compile_instruction,
}
# Front ends that take ``strict=True`` (the dialect's strictest validation).
STRICT_FRONT_ENDS = frozenset({"aevatar"})
SOURCE_SUFFIXES = (".md", ".yaml", ".yml", ".json")

_WFS_STEP_TYPES = re.compile(r"^\s*(-\s+)?type:\s*['\"]?(tool|transform|conditional|exit)['\"]?\s*$",
                             re.MULTILINE)
_AEVATAR_HINT = re.compile(r"^(roles:|\s*(-\s+)?(target_role|parameters|next|branches):)", re.MULTILINE)
# An aevatar document: top-level `name:` and `steps:`, steps a list of `- id:`
# items, and none of WorkflowSkill's top-level `inputs:` / `outputs:`.
_AEVATAR_SHAPE = re.compile(r"\A(?=[\s\S]*^name:)(?=[\s\S]*^steps:)(?=[\s\S]*^\s*-\s+id:)"
                            r"(?![\s\S]*^(inputs|outputs):)", re.MULTILINE)
_INSTRUCTION_HINT = re.compile(r"^(\s*(kind|depends_on):|workflows:|version:\s*3\b|:::+!?workflow|"
                               r"##\s+!workflow)", re.MULTILINE)
# Instruction steps are a map whose values carry `kind:`; aevatar steps are a
# list of `- id:` items. `branches:`/`next:` alone don't decide between them.
_INSTRUCTION_KIND = re.compile(r"(^\s+|\{\s*)kind:\s*['\"]?[a-z][a-z0-9_.]*", re.MULTILINE)
_AEVATAR_STEP_LIST = re.compile(r"^\s*-\s+id:|^roles:", re.MULTILINE)


@attrs.frozen
class CompileResult:
    path: str
    dialect: str | None
    workflow: Workflow | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return self.workflow is not None and not any(d.is_error for d in self.diagnostics)


def detect_dialect(text: str, path: str) -> str | None:
    """Recognise the dialect from the content; None when it is unclear."""
    if has_workflow_fence(text):
        return "workflowskill"
    instruction = bool(_INSTRUCTION_HINT.search(text) or _INSTRUCTION_KIND.search(text))
    aevatar = bool(_AEVATAR_HINT.search(text)) or (
        not path.endswith(".md") and bool(_AEVATAR_SHAPE.match(text)))
    wfs = bool(_WFS_STEP_TYPES.search(text)) and re.search(r"^steps:", text, re.MULTILINE) is not None
    if path.endswith(".md"):
        # Markdown carries WorkflowSkill (```workflow) or instruction.md embeddings.
        return "instruction" if instruction and not has_workflow_fence(text) else "workflowskill"
    if instruction and not aevatar:
        return "instruction"
    if instruction and _INSTRUCTION_KIND.search(text) and not _AEVATAR_STEP_LIST.search(text):
        return "instruction"
    if aevatar and not instruction:
        return "aevatar"
    if wfs and not (aevatar or instruction):
        return "workflowskill"
    if aevatar and _AEVATAR_SHAPE.match(text):
        return "aevatar"  # aevatar's shape wins over `kind:` text inside parameters
    return None


def compile_text(text: str, path: str, dialect: str | None = None, strict: bool = False) -> CompileResult:
    """Front end + analyze for one document. ``strict`` asks the front end
    for its dialect's strictest validation (aevatar: unknown primitives and
    keys of the newer engine generation only are errors)."""
    chosen = dialect or detect_dialect(text, path)
    here = Span(path, 1, 1, 1, 2)
    if chosen is None:
        return CompileResult(path, None, None, (error(
            "FLC001", "cannot recognise the workflow dialect of this file", here,
            "use --dialect workflowskill|aevatar|instruction to say which it is"),))
    front_end = FRONT_ENDS.get(chosen)
    if front_end is None:
        return CompileResult(path, chosen, None, (error(
            "FLC002", f"the {chosen} dialect is not supported by this version of flowc", here),))
    # The front ends build large acyclic trees (YAML nodes, spans, IR);
    # the cyclic garbage collector would re-walk them on every full pass,
    # making a check quadratic in the workflow's size. Nothing compiled here
    # forms reference cycles that need it, so it is paused while we work.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if strict and chosen in STRICT_FRONT_ENDS:
            workflow, diags = front_end(text, path, strict=True)
        else:
            workflow, diags = front_end(text, path)
        diags = list(diags)
        if workflow is not None:
            findings = analyze(workflow)
            if any(d.is_error for d in diags):
                # The front end dropped what it rejected (a step without a
                # kind, an edge to a missing step); the graph-shape findings
                # that follow from the hole would only repeat the error.
                findings = [d for d in findings if d.code not in CASCADE_CODES]
            diags.extend(findings)
    except RecursionError:
        workflow, diags = None, [error("ANA406", "the workflow nests too deeply to compile", here)]
    finally:
        if gc_was_enabled:
            gc.enable()
    return CompileResult(path, chosen, workflow, tuple(sorted(diags, key=Diagnostic.sort_key)))


def read_source(path: str) -> tuple[str | None, Diagnostic | None]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        hint = encoding_hint(data)
        if hint is not None:
            return None, error("FLC003", f"{path} looks {hint}, not UTF-8: save it as UTF-8",
                               Span(path, 1, 1, 1, 2))
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, error("FLC003", f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                           Span(path, 1, 1, 1, 2))
    except OSError as exc:
        return None, error("FLC003", f"cannot read {path}: {exc.strerror or exc}", Span(path, 0, 0, 0, 0))


def compile_file(path: str, dialect: str | None = None, strict: bool = False) -> CompileResult:
    text, problem = read_source(path)
    if problem is not None:
        return CompileResult(path, dialect, None, (problem,))
    return compile_text(text, path, dialect, strict)


def expand_paths(paths: list[str]) -> list[str]:
    """Files as given; directories walked, sorted, keeping only files that
    look like workflows (a README.md or package.json in the tree is not an
    error). A file named explicitly is always checked."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    candidate = os.path.join(root, name)
                    if name.endswith(SOURCE_SUFFIXES) and looks_like_workflow(candidate):
                        out.append(candidate)
        else:
            out.append(path)
    return out


def looks_like_workflow(path: str) -> bool:
    text, problem = read_source(path)
    if problem is not None:
        return True  # let the check report why it can't be read
    if path.endswith(".md"):
        return has_workflow_fence(text) or bool(_INSTRUCTION_HINT.search(text))
    return detect_dialect(text, path) is not None
