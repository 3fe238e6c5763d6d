"""Hypothesis strategies for flowc workflows: valid ones, runnable ones, and mutants.

Use them to fuzz your own runtime or tooling with the workflows people
write::

    from hypothesis import given
    from flowc.testing import strategies as wst

    @given(wst.runnable_workflows(dialect="workflowskill", max_steps=5))
    def test_my_runtime_agrees_with_flowc(case):
        expected = case.run()                  # flowc's Python backend
        assert my_runtime(case.text, case.inputs, case.host_script) == expected

The strategies:

- :func:`documents` -- a valid workflow as plain data (what ``yaml.safe_load``
  of the file gives);
- :func:`workflows` -- its text (a :class:`WorkflowText`, a ``str``), in the
  dialect's own format; ``dialect="ir"`` gives compiled
  :class:`~flowc.ir.workflow.Workflow` values instead;
- :func:`runnable_workflows` -- a :class:`Runnable`: the text, run inputs and
  a :class:`~flowc.host.ScriptedHost` script that answers every call the
  workflow makes (sometimes with errors, failures and sequences of answers,
  so error policies and retries run);
- :func:`invalid_workflows` -- a :class:`Mutant`: a valid workflow with one
  defect put in by a mutation operator (:mod:`flowc.testing.mutants`), and
  the finding code flowc must report for it.

Every generated workflow is *valid*: ``flowc check`` reports no error for it.
Hypothesis shrinks a failing example towards one step with a short id; the
example prints as the YAML of its dialect.

``features`` restricts what is generated (see :func:`features`); the
default is everything.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, Self

from flowc.testing import gen_aevatar, gen_instruction, gen_workflowskill, mutants
from hypothesis import strategies as st

__all__ = [
    "DIALECTS",
    "Mutant",
    "Runnable",
    "WorkflowText",
    "dialects",
    "documents",
    "features",
    "invalid_workflows",
    "ir_workflows",
    "malformed_texts",
    "runnable_workflows",
    "workflows",
]

# Source dialects with a generator, in the order `dialect="ir"` draws them.
GENERATORS: dict[str, Any] = {"workflowskill": gen_workflowskill, "aevatar": gen_aevatar,
                              "instruction": gen_instruction}
DIALECTS = ("workflowskill", "aevatar", "instruction", "ir")


def dialects() -> tuple[str, ...]:
    """The source dialects the strategies generate (``"ir"`` works too)."""
    return tuple(GENERATORS)


def _generator(dialect: str):
    gen = GENERATORS.get(dialect)
    if gen is None:
        known = ", ".join([*GENERATORS, "ir"])
        raise ValueError(f"no workflow generator for dialect {dialect!r} (known: {known})")
    return gen


def features(dialect: str = "workflowskill") -> frozenset[str]:
    """The feature names ``features=`` accepts for ``dialect``."""
    return _generator(dialect).FEATURES


def _features(dialect: str, wanted) -> frozenset[str]:
    known = features(dialect)
    if wanted is None:
        return known
    wanted = frozenset(wanted)
    unknown = wanted - known
    if unknown:
        raise ValueError(f"unknown {dialect} feature(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(sorted(known))}")
    return wanted


def _file_name(dialect: str, text: str) -> str:
    gen = _generator(dialect)
    return gen.file_name(text) if hasattr(gen, "file_name") else "workflow.yaml"


# ------------------------------------------------------------------ values
class WorkflowText(str):
    """The text of a generated workflow. A ``str``; it also knows its
    ``dialect`` and a ``file_name`` that flowc reads it from (``SKILL.md``
    forms need a ``.md`` name), and prints as the YAML it is."""

    dialect: str
    file_name: str

    def __new__(cls, text: str, dialect: str, file_name: str | None = None) -> Self:
        self = super().__new__(cls, text)
        self.dialect = dialect
        self.file_name = file_name or _file_name(dialect, text)
        return self

    def compile(self):
        """``flowc.driver.compile_text`` of this text."""
        from flowc import driver

        return driver.compile_text(str(self), self.file_name, self.dialect)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(_block(f"# {self.dialect}: {self.file_name}", str(self)))


def _block(title: str, text: str) -> str:
    body = text if text.endswith("\n") else text + "\n"
    return f"'''\\\n{title}\n{body}'''"


class Runnable(NamedTuple):
    """A valid workflow with inputs and a host script that drive it."""

    text: WorkflowText
    inputs: dict
    host_script: dict
    dialect: str

    @property
    def file_name(self) -> str:
        return self.text.file_name

    def compile(self):
        return self.text.compile()

    def workflow(self):
        """The IR (raises ``ValueError`` if it does not compile)."""
        result = self.compile()
        if not result.ok:
            raise ValueError("the workflow does not compile: "
                             + "; ".join(f"{d.code} {d.message}" for d in result.diagnostics if d.is_error))
        return result.workflow

    def host(self):
        from flowc.host import ScriptedHost

        return ScriptedHost(self.host_script)

    def run(self, backend: str = "python") -> dict:
        """The run record from flowc's ``python`` (default) or ``vm`` backend."""
        workflow = self.workflow()
        if backend == "vm":
            from flowc.backends.vm import compile_workflow, load

            return load(compile_workflow(workflow)).run(self.inputs, self.host())
        from flowc.backends.python import compile_workflow, load_module

        return load_module(compile_workflow(workflow)).run(self.inputs, self.host())

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(_block(f"# {self.dialect}: {self.file_name}", str(self.text)))
        p.break_()
        p.text(f"# inputs: {json.dumps(self.inputs, sort_keys=True, default=repr)}")
        p.break_()
        p.text(f"# host script: {json.dumps(self.host_script, sort_keys=True, default=repr)}")


class Mutant(NamedTuple):
    """A workflow with one defect, and the finding code flowc must report.

    For ``dialect="ir"`` mutants, ``workflow`` is the mutated IR (check it
    with ``flowc.compiler.analyze.analyze``) and ``text`` the source it was
    compiled from."""

    text: WorkflowText
    code: str
    operator: str
    dialect: str
    description: str
    workflow: Any = None

    @property
    def file_name(self) -> str:
        return self.text.file_name

    def findings(self) -> list:
        """Every finding flowc reports for the mutant."""
        if self.workflow is not None:
            from flowc.compiler.analyze import analyze

            return analyze(self.workflow)
        return list(self.text.compile().diagnostics)

    def error_codes(self) -> set[str]:
        return {d.code for d in self.findings() if d.is_error}

    def caught(self) -> bool:
        """True when flowc reports exactly the expected code (and no other error)."""
        return self.error_codes() == {self.code}

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(f"# mutant {self.operator} (expects {self.code}): {self.description}")
        p.break_()
        p.text(_block(f"# {self.dialect}: {self.file_name}", str(self.text)))


# ------------------------------------------------------------------ strategies
def documents(dialect: str = "workflowskill", *, max_steps: int = 6, features=None) -> st.SearchStrategy[dict]:
    """Valid workflows of ``dialect`` as plain data."""
    return _generator(dialect).documents(max_steps, _features(dialect, features))


@st.composite
def _texts(draw, dialect: str, max_steps: int, features) -> tuple[WorkflowText, dict]:
    gen = _generator(dialect)
    text, doc = draw(gen.texts(max_steps, _features(dialect, features)))
    return WorkflowText(text, dialect), doc


def workflows(dialect: str = "workflowskill", *, max_steps: int = 6, features=None) -> st.SearchStrategy:
    """Valid workflow texts of ``dialect`` (:class:`WorkflowText`), or, for
    ``dialect="ir"``, compiled IR workflows (from any source dialect)."""
    if dialect == "ir":
        return ir_workflows(max_steps=max_steps)
    _features(dialect, features)
    return _texts(dialect, max_steps, features).map(lambda pair: pair[0])


def ir_workflows(source: str | None = None, *, max_steps: int = 6, features=None) -> st.SearchStrategy:
    """Compiled IR (:class:`~flowc.ir.workflow.Workflow`) of generated valid
    workflows; ``source`` picks the dialect (default: any)."""
    if source is not None:
        _features(source, features)
    return _ir_workflows(source, max_steps, features)


@st.composite
def _ir_workflows(draw, source, max_steps, features):
    dialect = source or draw(st.sampled_from(dialects()))
    text, _ = draw(_texts(dialect, max_steps, features))
    result = text.compile()
    if not result.ok:  # a generator bug: the test of the strategies reports it
        raise AssertionError(f"generated {dialect} workflow does not compile: "
                             + "; ".join(f"{d.code} {d.message}" for d in result.diagnostics if d.is_error)
                             + "\n" + text)
    return result.workflow


def runnable_workflows(dialect: str = "workflowskill", *, max_steps: int = 6, features=None) -> st.SearchStrategy:
    """A valid workflow with run inputs and a host script that answers every
    call it can make (:class:`Runnable`). For ``dialect="ir"`` the source
    dialect is drawn."""
    if dialect != "ir":
        _features(dialect, features)
    return _runnable(dialect, max_steps, features)


@st.composite
def _runnable(draw, dialect, max_steps, features) -> Runnable:
    if dialect == "ir":
        dialect = draw(st.sampled_from(dialects()))
    gen = _generator(dialect)
    text, doc = draw(_texts(dialect, max_steps, features))
    return Runnable(text, draw(gen.run_inputs(doc)), draw(gen.host_scripts(doc)), dialect)


def invalid_workflows(dialect: str = "workflowskill", *, max_steps: int = 6, features=None,
                      operators=None) -> st.SearchStrategy:
    """A valid workflow with one defect and the finding code it must give
    (:class:`Mutant`).

    ``operators`` restricts the mutation operators by name
    (:data:`flowc.testing.mutants.OPERATORS` lists them per dialect). For
    ``dialect="ir"`` the defect is put into the compiled IR."""
    table = _operators(dialect, operators)
    if dialect != "ir":
        _features(dialect, features)
    return _mutants(dialect, max_steps, features, table)


@st.composite
def _mutants(draw, dialect, max_steps, features, table) -> Mutant:
    op = draw(st.sampled_from(table))
    if dialect == "ir":
        # Sources whose semantics make the defect a finding (a cycle is not
        # one in a dialect whose engine loops). A dialect is its semantics.
        sources = [d for d in dialects() if op.applies is None or op.applies(d)]
        source = draw(st.sampled_from(sources))
        text, _ = draw(_texts(source, max_steps, None))
        workflow = text.compile().workflow
        return Mutant(text, op.code, op.name, "ir", op.description, op.apply(draw, workflow))
    gen = _generator(dialect)
    f = _features(dialect, features)
    doc = draw(gen.documents(max_steps, f))
    if op.text:
        text = op.apply(draw, gen.to_text(doc))
    else:
        mutated = mutants.apply_to_document(op, draw, doc)
        text = gen.to_text(mutated, **gen.text_options(draw, f))
    return Mutant(WorkflowText(text, dialect), op.code, op.name, dialect, op.description)


def _operators(dialect: str, names) -> tuple:
    table = mutants.operators_for(dialect)
    if not table:
        raise ValueError(f"no mutation operators for dialect {dialect!r}")
    if names is None:
        return table
    names = set(names)
    chosen = tuple(op for op in table if op.name in names)
    unknown = names - {op.name for op in chosen}
    if unknown:
        raise ValueError(f"unknown {dialect} mutation operator(s): {', '.join(sorted(unknown))}")
    return chosen


@st.composite
def malformed_texts(draw, dialect: str | None = None, *, max_steps: int = 6) -> WorkflowText:
    """Noise for never-crash testing: random bytes and text, random YAML,
    and generated workflows of ``dialect`` (default: any) damaged line by
    line. No finding is expected; flowc must report findings, never crash."""
    from flowc.testing import noise

    source = dialect if dialect in GENERATORS else draw(st.sampled_from(dialects()))

    def valid(pair):
        text = pair[0]
        return str(text), text.file_name

    text, name = draw(noise.malformed(_texts(source, max_steps, None).map(valid)))
    return WorkflowText(text, source, name)
