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
from flowc.ir.limits import MAX_SOURCE_BYTES
from flowc.ir.span import Span
from flowc.ir.workflow import Workflow
from flowc.pipeline import frontends
from flowc.sourcefile import FileTooLarge, read_limited

# Findings that are consequences of a gap the front end already reported.
CASCADE_CODES = frozenset({"ANA402", "ANA404", "ANA405"})


# One front end per dialect (pipeline/frontends.py): how its documents are
# compiled and which of their features the pipeline reads.
FRONT_ENDS = frontends.FRONT_ENDS
DIALECTS = tuple(FRONT_ENDS)
SOURCE_SUFFIXES = (".md", ".yaml", ".yml", ".json")

# The detection patterns run over whole files, so none may backtrack over a
# run of whitespace from each line it starts on: a line's indentation is
# [^\S\n]* (whitespace, but not a newline), never \s* (which would read on
# through every following blank line, from every one of them: quadratic).
# Where the older \s* could cross newlines, the line it reached matches on
# its own, so the answers are the same.
_INDENT = r"[^\S\n]*"
_WFS_STEP_TYPES = re.compile(rf"^{_INDENT}(-[^\S\n]+)?type:\s*['\"]?(tool|transform|conditional|exit)['\"]?"
                             rf"{_INDENT}$", re.MULTILINE)
_AEVATAR_HINT = re.compile(rf"^(roles:|{_INDENT}(-[^\S\n]+)?(target_role|parameters|next|branches):)",
                           re.MULTILINE)
# An aevatar document: top-level `name:` and `steps:`, steps a list of `- id:`
# items, and none of WorkflowSkill's top-level `inputs:` / `outputs:`.
_TOP_NAME = re.compile(r"^name:", re.MULTILINE)
_TOP_STEPS = re.compile(r"^steps:", re.MULTILINE)
_ID_ITEM = re.compile(rf"^{_INDENT}-\s+id:", re.MULTILINE)
_TOP_WFS_IO = re.compile(r"^(inputs|outputs):", re.MULTILINE)
_INSTRUCTION_HINT = re.compile(rf"^({_INDENT}(kind|depends_on):|workflows:|version:\s*3\b|:::+!?workflow|"
                               r"##\s+!workflow)", re.MULTILINE)
# Instruction steps are a map whose values carry `kind:`; aevatar steps are a
# list of `- id:` items. `branches:`/`next:` alone don't decide between them.
# (`kind:` after indentation, after `{`, or at the start of a line that
# follows a blank one.)
_INSTRUCTION_KIND = re.compile(rf"(^[^\S\n]+|^{_INDENT}\n|\{{\s*)kind:\s*['\"]?[a-z][a-z0-9_.]*", re.MULTILINE)
_AEVATAR_STEP_LIST = re.compile(rf"^{_INDENT}-\s+id:|^roles:", re.MULTILINE)


def _aevatar_shape(text: str) -> bool:
    return bool(_TOP_NAME.search(text) and _TOP_STEPS.search(text) and _ID_ITEM.search(text)
                and not _TOP_WFS_IO.search(text))


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
        not path.endswith(".md") and _aevatar_shape(text))
    wfs = bool(_WFS_STEP_TYPES.search(text)) and _TOP_STEPS.search(text) is not None
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
    if aevatar and _aevatar_shape(text):
        return "aevatar"  # aevatar's shape wins over `kind:` text inside parameters
    return None


def compile_text(text: str, path: str, dialect: str | None = None, strict: bool = False,
                 workflow: str | None = None,
                 known_workflows: frozenset[str] | None = None) -> CompileResult:
    """Front end + analyze for one document. ``strict`` asks the front end
    for its dialect's strictest validation (aevatar: unknown primitives and
    keys of the newer engine generation only are errors). ``workflow`` names
    one workflow of an instruction document that holds several: it is
    compiled with its own findings, whatever the others' (other dialects
    hold one workflow and ignore it). ``known_workflows`` is the registry an
    aevatar ``workflow_call`` must name (None: no registry, as the engine
    without one: calls are not checked)."""
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
        compiled, diags = front_end.compile(text, path, **_options(front_end, strict, workflow, known_workflows))
        diags = list(diags)
        if compiled is not None:
            findings = analyze(compiled)
            if any(d.is_error for d in diags):
                # The front end dropped what it rejected (a step without a
                # kind, an edge to a missing step); the graph-shape findings
                # that follow from the hole would only repeat the error.
                findings = [d for d in findings if d.code not in CASCADE_CODES]
            diags.extend(findings)
    except RecursionError:
        compiled, diags = None, [error("ANA406", "the workflow nests too deeply to compile", here)]
    finally:
        if gc_was_enabled:
            gc.enable()
    return CompileResult(path, chosen, compiled, tuple(sorted(diags, key=Diagnostic.sort_key)))


def _options(front_end: frontends.FrontEnd, strict: bool, workflow: str | None,
             known_workflows: frozenset[str] | None) -> dict:
    """The options of compile_text that ``front_end`` takes."""
    options: dict = {}
    if strict and front_end.strict:
        options["strict"] = True
    if known_workflows is not None and front_end.registry_names is not None:
        options["known_workflows"] = known_workflows
    if workflow is not None and front_end.compile_all is not None:
        options["name"] = workflow
    return options


def read_source(path: str) -> tuple[str | None, Diagnostic | None]:
    """The text of a workflow file, or the finding that says why there is
    none: not a regular file or unreadable (FLC003, without ever blocking on
    a FIFO or reading a device), larger than MAX_SOURCE_BYTES (LIM001: only
    that many bytes and one more are read), or not UTF-8 (FLC003)."""
    try:
        data = read_limited(path, MAX_SOURCE_BYTES)
        hint = encoding_hint(data)
        if hint is not None:
            return None, error("FLC003", f"{path} looks {hint}, not UTF-8: save it as UTF-8",
                               Span(path, 1, 1, 1, 2))
        return data.decode("utf-8-sig"), None
    except FileTooLarge:
        return None, error("LIM001", f"the file is larger than {MAX_SOURCE_BYTES} bytes, the limit of one "
                           "workflow file", Span(path, 1, 1, 1, 2))
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


def workflow_registry(paths: list[str], checked: list[str] = (),
                      dialect: str | None = None) -> tuple[frozenset[str], str | None]:
    """The names of the workflows in ``paths`` (files or directories,
    walked as by ``flowc check``) and in the files being ``checked`` (read as
    ``dialect`` when given): the registry a ``workflow_call`` is checked
    against (aevatar's). Files of dialects without workflow calls by name
    are left out. Returns the names and a
    problem (a path of ``paths`` that does not exist) or None."""
    for path in paths:
        if not os.path.exists(path):
            return frozenset(), f"{path}: no such file or directory"
    names: set[str] = set()
    files = [(f, None) for f in expand_paths(list(paths))] + [(f, dialect) for f in checked]
    for file, given in files:
        text, problem = read_source(file)
        front_end = frontends.by_name(given or detect_dialect(text, file)) if problem is None else None
        if front_end is not None and front_end.registry_names is not None:
            names |= front_end.registry_names(text, file)
    return frozenset(names), None


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
