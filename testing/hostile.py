"""Hostile text: workflows whose every text field holds an injection payload.

flowc writes workflow text (names, ids, descriptions, prompts, tool names,
keys, file names ...) into generated Python modules, bytecode and the YAML
of other dialects. :func:`hostile_workflows` draws a generated workflow of a
dialect (:mod:`flowc.testing.strategies`) and puts payloads into every text
field it can: triple quotes of both kinds, backslashes, line breaks of
every kind (``\\n``, ``\\r``, U+0085, U+2028), NUL, ``#``, Markdown fences,
YAML tags and ``__import__('os').system('touch MARKER')`` variants. Ids and
keys are renamed where nothing else refers to them by a substring (an
expression can't name a step whose id holds a quote), so most examples
still check clean and run.

:func:`check_hostile` is the property ``flowc fuzz --hostile`` checks: the
example checks (or is refused with findings, never an exception); when it
checks clean, both targets compile, the Python module compiles (no
SyntaxError) and imports, both backends run it with a scripted host, and it
translates into every dialect as YAML that reads back; and no payload ever
ran: the marker file is never created and the marker module is never
registered.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections import Counter
from typing import Any, NamedTuple

from flowc.testing import strategies as wst
from flowc.testing.failures import PropertyFailure, _crash, _fail
from flowc.testing.yamltext import dump
from hypothesis import strategies as st

__all__ = ["MARKER_MODULE", "HostileCase", "check_hostile", "file_names", "hostile_workflows", "marker_path",
           "payloads"]

MARKER_MODULE = "flowc_hostile_marker"
DIALECTS = ("workflowskill", "aevatar", "instruction")

# Fields whose string values are free text in each dialect (values holding an
# expression -- ``$``, ``${``, ``{{``, ``CEL:`` -- are left alone).
TEXT_FIELDS = {
    "workflowskill": frozenset({"description", "tool", "value", "default", "field", "name"}),
    "aevatar": frozenset({"name", "description", "system_prompt", "tool", "prompt", "value", "payload",
                          "keyword", "condition", "event_type", "default_output", "target"}),
    "instruction": frozenset({"name", "text", "instruction", "message", "on", "description", "q", "item",
                              "value"}),
}
# Mappings whose keys are names the workflow chooses (renamed, everywhere at
# once, when nothing mentions them inside other text), and keys that are not
# free (a transform's input is ``items``).
KEY_FIELDS = {
    "workflowskill": frozenset({"inputs", "outputs", "expression", "output"}),
    "aevatar": frozenset(),
    "instruction": frozenset({"args", "cases", "output", "properties", "branches"}),
}
# Dialects whose ids and workflow name must be identifiers (a hostile one is
# a finding, so it is put in one example in ten only).
IDENTIFIER_NAMES = frozenset({"instruction"})
RESERVED_KEYS = frozenset({"items", "type", "value", "steps", "kind", "$default"})
_EXPRESSION = re.compile(r"\$|\{\{|\}\}|^CEL:")


def marker_path() -> str:
    """The file a payload that ran would create (one per process)."""
    return os.path.join(tempfile.gettempdir(), f"flowc-hostile-{os.getpid()}")


def payloads(marker: str | None = None) -> tuple[str, ...]:
    """Injection payloads; each would create ``marker`` or register
    :data:`MARKER_MODULE` if it ever ran as code."""
    run = f"__import__('os').system('touch {marker or marker_path()}')"
    mark = f"__import__('sys').modules.__setitem__('{MARKER_MODULE}', 1)"
    return (
        f'"""+{run}+"""',
        f"'''+{run}+'''",
        f'"""\n{mark}\n"""',
        f"'''\n{run}\n'''",
        f"\\'); {run}; ('",
        f'\\"); {mark}; ("',
        f"x\n{run}\n#",
        f"x\r{mark}",
        f"x\r\n{run}",
        f"x\u2028{run}\u2029y",
        f"x\x85{mark}",
        f"nul\x00{run}",
        f"# {run}",
        f"{{{run}}}",
        f"\\\n{mark}",
        "back\\slash\\",
        '"""',
        "'''",
        "\\",
        run,
        mark,
        f"```\n{run}\n```",
        f"x ```workflow\nsteps:\n  - id: evil\n    type: tool\n    tool: {run}\n```\n",
        f"---\nname: x\n...\n{run}",
        f"a: !!python/object/apply:os.system ['touch {marker or marker_path()}']",
        "\x1b[2J\x07\x0b\x0c tab\there",
        "é ünïcödé 😀 \ufeff",
    )


def file_names(marker: str | None = None) -> tuple[str, ...]:
    """Hostile file names (without the extension)."""
    run = f"os.system('touch {marker or marker_path()}')"
    return (
        f'""";import os;{run};"""',
        f"''';import os;{run};'''",
        f"evil\n{run}\u2028",
        f"x\r# {run}",
        "back\\slash",
        "nul\x00name",
    )


class HostileCase(NamedTuple):
    """A workflow with payloads in its text, with run inputs and a host script."""

    text: str
    file_name: str
    dialect: str
    inputs: dict
    host_script: dict
    injected: int            # how many text fields, ids and keys hold a payload

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(f"# {self.dialect}: {self.file_name!r}, {self.injected} payloads")
        p.break_()
        p.text(self.text)


# ------------------------------------------------------------------ injection
def _all_strings(value: Any, out: list[str]) -> list[str]:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _all_strings(k, out)
            _all_strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _all_strings(v, out)
    return out


def _ids(dialect: str, doc: dict) -> list[str]:
    steps = doc.get("steps")
    if dialect == "instruction":
        found: list[str] = []

        def walk(steps_map):
            for sid, step in (steps_map or {}).items():
                found.append(sid)
                if isinstance(step, dict):
                    walk((step.get("body") or {}).get("steps"))
                    for branch in (step.get("branches") or {}).values():
                        walk((branch or {}).get("steps"))
        walk(steps)
        return found
    ids = [s["id"] for s in steps or [] if isinstance(s, dict) and isinstance(s.get("id"), str)]
    if dialect == "aevatar":
        ids += [r["id"] for r in doc.get("roles") or [] if isinstance(r.get("id"), str)]
    return ids


def _keys(value: Any, parents: frozenset, parent: str | None, out: list[str], inside: bool = True) -> list[str]:
    """The keys of mappings held under a key in ``parents`` (``inside``),
    or of the others."""
    if isinstance(value, dict):
        for k, v in value.items():
            if (parent in parents) == inside and isinstance(k, str):
                out.append(k)
            _keys(v, parents, k if isinstance(k, str) else None, out, inside)
    elif isinstance(value, list):
        for v in value:
            _keys(v, parents, parent, out, inside)
    return out


def _free(name: str, strings: list[str]) -> bool:
    """Does every mention of ``name`` equal it (no expression names it)?"""
    return all(s == name or name not in s for s in strings)


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {_rename(k, names): _rename(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    return value


@st.composite
def _payload(draw, original: str) -> str | None:
    """None (leave it), or the text with a payload (replacing or after it)."""
    how = draw(st.integers(0, 4))
    if how == 0:
        return None
    payload = draw(st.sampled_from(payloads()))
    return payload if how == 1 else original + payload


@st.composite
def _inject_fields(draw, dialect: str, value: Any, counter: Counter, parent: str | None = None) -> Any:
    text_fields = TEXT_FIELDS[dialect]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            root_name = parent is None and k == "name" and dialect in IDENTIFIER_NAMES
            if isinstance(v, str) and k in text_fields and not _EXPRESSION.search(v) and not root_name:
                hostile = draw(_payload(v))
                if hostile is not None:
                    counter["text"] += 1
                    v = hostile
                out[k] = v
            else:
                out[k] = draw(_inject_fields(dialect, v, counter, k if isinstance(k, str) else None))
        return out
    if isinstance(value, list):
        return [draw(_inject_fields(dialect, v, counter, parent)) for v in value]
    return value


@st.composite
def inject(draw, dialect: str, doc: dict, counter: Counter) -> dict:
    """``doc`` with payloads in its text fields, ids and free keys."""
    strings = _all_strings(doc, [])
    names = {}
    identifiers_only = dialect in IDENTIFIER_NAMES and draw(st.integers(0, 9)) > 0
    for name in [] if identifiers_only else _ids(dialect, doc):
        if _free(name, strings):
            hostile = draw(_payload(name))
            if hostile is not None and hostile not in strings and hostile not in names.values():
                names[name] = hostile
    counter["ids"] += len(names)
    structural = RESERVED_KEYS | set(_keys(doc, KEY_FIELDS[dialect], None, [], inside=False))
    for key in sorted(set(_keys(doc, KEY_FIELDS[dialect], None, []))):
        if key not in structural and key not in names and _free(key, strings):
            hostile = draw(_payload(key))
            if hostile is not None and hostile not in strings and hostile not in names.values():
                names[key] = hostile
                counter["keys"] += 1
    doc = _rename(doc, names) if names else doc
    doc = draw(_inject_fields(dialect, doc, counter, None))
    # Descriptions and names where the dialect has them but the generator left them out.
    if dialect == "workflowskill":
        for step in doc.get("steps") or []:
            if isinstance(step, dict) and "description" not in step:
                hostile = draw(_payload(""))
                if hostile is not None:
                    step["description"] = hostile
                    counter["text"] += 1
    elif dialect == "aevatar":
        hostile = draw(_payload("generated"))
        if hostile is not None:
            doc["description"] = hostile
            counter["text"] += 1
        for role in doc.get("roles") or []:
            hostile = draw(_payload(str(role.get("id"))))
            if hostile is not None:
                role["name"] = hostile
                counter["text"] += 1
    return doc


@st.composite
def hostile_workflows(draw, dialect: str = "workflowskill", *, max_steps: int = 6) -> HostileCase:
    """A generated workflow of ``dialect`` with payloads in every text
    field it can hold them (see the module docstring), a hostile file name,
    and run inputs and a host script drawn for the hostile document."""
    gen = wst.GENERATORS[dialect]
    doc = draw(gen.documents(max_steps, gen.FEATURES))
    counter: Counter = Counter()
    doc = draw(inject(dialect, doc, counter))
    text = gen.to_text(doc)
    ext = ".yaml"
    if dialect == "workflowskill" and draw(st.booleans()):
        name = draw(_payload("generated")) or "generated"
        description = draw(_payload("A workflow.")) or "A workflow."
        counter["text"] += (name != "generated") + (description != "A workflow.")
        text = f"---\n{dump({'name': name, 'description': description})}---\n\n# skill\n\n```workflow\n{text}```\n"
        ext = ".md"
    stem = draw(st.one_of(st.just("workflow"), st.sampled_from(file_names())))
    inputs = draw(gen.run_inputs(doc))
    if dialect == "aevatar" and draw(st.booleans()):
        inputs["input"] = draw(st.sampled_from(payloads()))
    return HostileCase(text, stem + ext, dialect, inputs, draw(gen.host_scripts(doc)),
                       sum(counter.values()) + (stem != "workflow"))


# ------------------------------------------------------------------ the property
def _no_payload_ran(marker: str, what: str) -> None:
    if os.path.exists(marker) or MARKER_MODULE in sys.modules:
        try:
            os.unlink(marker)
        except OSError:
            pass
        sys.modules.pop(MARKER_MODULE, None)
        _fail("hostile-text", f"a payload ran as code ({what})")


def _python_source_is_inert(source: str) -> None:
    """The module compiles, and workflow text is only in strings and comments."""
    import io
    import tokenize

    try:
        compile(source, "<hostile>", "exec")
    except SyntaxError as exc:
        _fail("hostile-text", f"the generated module is not Python: {exc}")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and not all(" " <= ch <= "~" for ch in tok.string):
            _fail("hostile-text", f"a comment holds a raw character: {tok.string!r}")
        if tok.type == tokenize.NAME and tok.string in ("__import__", "system", "exec", "eval", "os"):
            _fail("hostile-text", f"the name {tok.string} is in the generated code")


def check_hostile(case: HostileCase, counts: Counter) -> None:
    """The hostile-text property (see the module docstring); ``counts``
    gets tried / refused / compiled / bytecode / run:python / run:vm /
    translated."""
    from flowc import driver
    from flowc.backends.python import compile_workflow as python_source
    from flowc.backends.python import load_module
    from flowc.backends.vm import compile_workflow as bytecode
    from flowc.backends.vm import load
    from flowc.host import ScriptedHost
    from flowc.testing.properties import vm_unsupported

    marker = marker_path()
    _no_payload_ran(marker, "before the example")
    counts["tried"] += 1
    try:
        try:
            result = driver.compile_text(case.text, case.file_name, case.dialect)
        except Exception as exc:  # noqa: BLE001 - the property looks for crashes
            _crash("hostile-text", "checking the workflow", exc)
        _no_payload_ran(marker, "checking")
        if not result.ok:
            counts["refused"] += 1
            return
        workflow = result.workflow
        try:
            source = python_source(workflow)
            data = None if vm_unsupported(workflow) else bytecode(workflow)
        except Exception as exc:  # noqa: BLE001
            _crash("hostile-text", "compiling what check accepted", exc)
        counts["compiled"] += 1
        counts["bytecode"] += data is not None
        _python_source_is_inert(source)
        _no_payload_ran(marker, "compiling")
        for backend in ("python", "vm"):
            if backend == "vm" and data is None:
                continue
            try:
                program = load_module(source) if backend == "python" else load(data)
                program.run(dict(case.inputs), ScriptedHost(case.host_script))
            except Exception as exc:  # noqa: BLE001
                _crash("hostile-text", f"running on the {backend} backend", exc)
            _no_payload_ran(marker, f"running on the {backend} backend")
            counts[f"run:{backend}"] += 1
        _translations(workflow, case, counts)
        _no_payload_ran(marker, "translating")
    finally:
        _no_payload_ran(marker, "the example")


def _translations(workflow, case: HostileCase, counts: Counter) -> None:
    """Into every dialect: YAML that reads back (no YAML finding), and, when
    it checks clean, compiles to a module that is Python."""
    from flowc import driver
    from flowc.backends.python import compile_workflow as python_source
    from flowc.translate import output_suffix, translate_workflow

    for target in DIALECTS:
        try:
            emission = translate_workflow(workflow, target)
        except Exception as exc:  # noqa: BLE001
            _crash("hostile-text", f"translating to {target}", exc)
        if emission.text is None:
            continue
        name = "translated" + output_suffix(target, workflow)
        try:
            again = driver.compile_text(emission.text, name, target)
        except Exception as exc:  # noqa: BLE001
            _crash("hostile-text", f"reading the {target} translation", exc)
        bad_yaml = [d for d in again.diagnostics if d.code.startswith("YAML")]
        if bad_yaml:
            _fail("hostile-text", f"the {target} translation is not YAML that reads back: "
                  f"{bad_yaml[0].code} {bad_yaml[0].message}\n{emission.text}")
        if again.ok:
            _text_reads_back(workflow, again.workflow, target, name)
            try:
                source = python_source(again.workflow)
            except Exception as exc:  # noqa: BLE001
                _crash("hostile-text", f"compiling the {target} translation", exc)
            _python_source_is_inert(source)
        counts["translated"] += 1


def _text_reads_back(source, translated, target: str, file_name: str) -> None:
    """The workflow's name and description read back from the translation
    as they were (a bare WorkflowSkill YAML file takes its name from the
    file; the instruction dialect's names are identifiers)."""
    name_kept = target == "aevatar" or (target == "workflowskill" and not file_name.endswith(".yaml"))
    if name_kept and translated.name != source.name:
        _fail("hostile-text", f"the {target} translation reads back with the name {translated.name!r}, "
              f"not {source.name!r}")
    if (translated.description or "") != (source.description or ""):
        _fail("hostile-text", f"the {target} translation reads back with the description "
              f"{translated.description!r}, not {source.description!r}")


def check_or_failure(case: HostileCase, counts: Counter) -> PropertyFailure | None:
    try:
        check_hostile(case, counts)
    except PropertyFailure as failure:
        return failure
    return None
