"""cel-spec conformance (tests/data/cel/*.json) through flowc's compiled CEL,
on both backends: the Python backend's generated code and the VM's
expression code.

No case is skipped silently: :func:`flowc.testing.cel_conformance.exclusion`
decides, from the case data alone, which cases need protobuf messages or
enums (the only exclusions); the number of excluded and run cases per file
is recorded below, every run case must pass except the ones listed in
``KNOWN_FAILURES`` (the list is exact, so fixing a case forces removing it
from the list), and the pass rate must stay at or above the recorded one.
docs/cel.md shows the same table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from flowc.backends.python.cel_expr import evaluate_cel
from flowc.backends.vm import device
from flowc.backends.vm.plan_assemble import assemble_expressions
from flowc.testing.cel_conformance import decode_value, exclusion, load_cases, run_file, same_value

CEL_DIR = Path(__file__).resolve().parent / "data" / "cel"

# file -> (cases, excluded, run)
SCOPE = {
    "basic.json": (43, 0, 43),
    "bindings_ext.json": (8, 2, 6),
    "comparisons.json": (406, 72, 334),
    "conversions.json": (109, 0, 109),
    "encoders_ext.json": (4, 0, 4),
    "fields.json": (60, 0, 60),
    "fp_math.json": (30, 0, 30),
    "integer_math.json": (64, 0, 64),
    "lists.json": (39, 0, 39),
    "logic.json": (30, 0, 30),
    "macros.json": (44, 0, 44),
    "macros2.json": (46, 0, 46),
    "math_ext.json": (199, 0, 199),
    "namespace.json": (12, 9, 3),
    "parse.json": (196, 3, 193),
    "plumbing.json": (5, 0, 5),
    "string.json": (51, 0, 51),
    "string_ext.json": (216, 3, 213),
    "timestamps.json": (78, 2, 76),
    "type_deduction.json": (12, 0, 12),
}
# backend -> file -> "section/case" of every run case that fails today.
# string_ext: a map with both `true` and `1` as keys; cel's maps are Python
# dicts, where True and 1 are the same key, so building it is an error (docs/cel.md).
_BOOL_AND_INT_KEYS = {"string_ext.json": {"format/map support (all key types)"}}
KNOWN_FAILURES: dict[str, dict[str, set[str]]] = {
    "python": {name: set(_BOOL_AND_INT_KEYS.get(name, ())) for name in SCOPE},
    "vm": {name: set(_BOOL_AND_INT_KEYS.get(name, ())) for name in SCOPE},
}
# backend -> file -> the minimum pass rate over the run cases
MIN_RATE = {
    backend: {name: (SCOPE[name][2] - len(failing[name])) / SCOPE[name][2] for name in SCOPE}
    for backend, failing in KNOWN_FAILURES.items()
}


def evaluate_on_vm(expr, env):
    """Compile to expression code, load (decode and verify) and run on the VM's expression machine."""
    return device.load(assemble_expressions([expr])).evaluate(0, env)


EVALUATORS = {"python": evaluate_cel, "vm": evaluate_on_vm}


def test_the_data_is_all_there():
    assert sorted(p.name for p in CEL_DIR.glob("*.json")) == sorted(SCOPE)


@pytest.mark.parametrize("backend", sorted(EVALUATORS))
@pytest.mark.parametrize("name", sorted(SCOPE))
def test_conformance(backend, name):
    report = run_file(CEL_DIR / name, EVALUATORS[backend])
    cases, excluded, run = SCOPE[name]
    assert (len(report.results), len(report.excluded), len(report.run)) == (cases, excluded, run)
    failures = {r.key: r.detail for r in report.failed}
    assert set(failures) == KNOWN_FAILURES[backend][name], failures
    assert report.rate >= MIN_RATE[backend][name]


def test_every_exclusion_names_a_protobuf_construct():
    for path in sorted(CEL_DIR.glob("*.json")):
        for _section, case in load_cases(path):
            reason = exclusion(case)
            if reason is not None:
                assert case.get("container") or "TestAllTypes" in case["expr"] \
                    or "google.protobuf." in case["expr"], case["name"]


def test_type_environment_cases_are_run_not_excluded():
    with_env = [case for path in sorted(CEL_DIR.glob("*.json")) for _s, case in load_cases(path)
                if case.get("has_type_env")]
    assert with_env
    # A type environment never excludes a case; a container (a protobuf package) does.
    assert all((exclusion(case) is None) == (not case.get("container")) for case in with_env)
    assert sum(exclusion(case) is None for case in with_env) > len(with_env) // 2


def test_the_comparison_is_strict_about_types():
    assert not same_value(1, 1.0)
    assert not same_value(decode_value({"uint": 1}), 1)
    assert same_value(float("nan"), float("nan"))
    assert not same_value(-0.0, 0.0)
    assert same_value(decode_value({"map": [[{"int": 1}, {"string": "a"}]]}), {1: "a"})
    assert not same_value(decode_value({"map": [[{"uint": 1}, {"string": "a"}]]}), {1: "a"})


def test_the_docs_table_is_the_recorded_scope():
    """docs/cel.md's pass-rate table shows the figures this test enforces."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "cel.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].endswith(".json"):
            rows[cells[0]] = cells[1:]
    assert sorted(rows) == sorted(SCOPE)
    for name, (cases, excluded, run) in SCOPE.items():
        passed = {b: run - len(KNOWN_FAILURES[b][name]) for b in EVALUATORS}
        rate = f"{100 * min(passed.values()) // run}%"
        assert rows[name] == [str(cases), str(excluded), str(run), str(passed["python"]), str(passed["vm"]), rate]


def test_the_readme_table_is_the_recorded_scope():
    page = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].endswith(".json"):
            rows[cells[0]] = cells[1:]
    assert sorted(rows) == sorted(SCOPE)
    for name, (_cases, excluded, run) in SCOPE.items():
        shown = [str(run), str(excluded)]
        for backend in ("python", "vm"):
            passed = run - len(KNOWN_FAILURES[backend][name])
            shown.append(f"{passed} ({100 * passed // run}%)")
        assert rows[name] == shown
