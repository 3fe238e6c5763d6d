"""The aevatar front end on real workflows, on the engine's own negative
cases and on the authoring guide's worked examples.

- Every one of the 177 workflows in tests/data/aevatar (MANIFEST.tsv) checks
  without an error finding, except the ones listed in BROKEN with the reason.
- Each of the 29 negative cases fails with a finding that names the problem
  its .txt names (NEGATIVE: the codes, and the options the engine's layer
  implies: strict for RequireKnownStepTypes, a registry for workflow_call).
- The guide's examples A-F compile.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from flowc import cli
from flowc.compiler.aevatar.frontend import compile_aevatar
from flowc.compiler.analyze import analyze
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data" / "aevatar"


def _manifest() -> list[tuple[str, Path]]:
    rows = []
    with open(DATA / "MANIFEST.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            folder = "aevatarAI__aevatar__index-only" if row["variant"] == "index-only" else "aevatarAI__aevatar"
            rows.append((row["path"], DATA / folder / row["path"]))
    return rows


CORPUS = _manifest()

# Genuinely broken workflows of the corpus: path -> (codes that must be
# reported, why the file is broken).
BROKEN: dict[str, tuple[set[str], str]] = {
    "demos/Aevatar.Demos.Workflow/workflows/03_conditional.yaml": (
        {"AEV140"}, ("a conditional without `branches`: the engine's validator (c8db46d) rejects it "
                     "(必须定义 branches); the file predates that rule")),
    "demos/Aevatar.Demos.Workflow/workflows/conditional.yaml": (
        {"AEV140"}, "the same conditional without `branches` (an older copy of 03_conditional)"),
    "workflows/onboarding.yaml": (
        {"ANA404"}, ("the success step `complete` has no `next` and falls through into the error "
                     "handling (create_failed -> route_retry), which loops back to select_provider or "
                     "ask_api_key; the last step `exit_failed` is unreachable, so no run can complete")),
}


def test_manifest_lists_177_workflows():
    assert len(CORPUS) == 177
    assert all(path.exists() for _, path in CORPUS)
    assert set(BROKEN) <= {rel for rel, _ in CORPUS}


@pytest.mark.parametrize("rel,path", CORPUS, ids=[rel for rel, _ in CORPUS])
def test_corpus_workflow(rel, path):
    text = path.read_text(encoding="utf-8-sig")
    assert driver.detect_dialect(text, str(path)) == "aevatar"
    result = driver.compile_text(text, str(path))
    errors = [d for d in result.diagnostics if d.is_error]
    if rel in BROKEN:
        codes, _why = BROKEN[rel]
        assert codes <= {d.code for d in errors}, [(d.code, d.message) for d in result.diagnostics]
    else:
        assert not errors, "\n".join(f"{d.code} {d.span.line}: {d.message}" for d in errors)
        assert result.workflow is not None
        assert result.workflow.dialect == result.workflow.semantics == "aevatar"


# case -> (codes that must be reported as errors, options)
NEGATIVE: dict[str, tuple[set[str], dict]] = {
    "01_parser_empty_yaml": ({"AEV101"}, {}),                      # YAML 为空
    "02_parser_missing_name": ({"AEV104"}, {}),                    # 缺少 name
    "03_parser_step_missing_id": ({"AEV106"}, {}),                 # step 缺 id
    "04_parser_unknown_role_field": ({"AEV103"}, {}),              # Property 'unknown_field' not found
    "05_validator_duplicate_step_id": ({"ANA401"}, {}),            # 步骤 'step1' 重复
    "06_validator_child_next_missing": ({"AEV132"}, {}),           # child1 next missing_step
    "07_validate_module_unknown_step_type": ({"AEV150"}, {"strict": True}),
    "08_host_unknown_step_type": ({"AEV150"}, {"strict": True}),
    "09_validate_module_dynamic_workflow_reserved": ({"AEV152"}, {}),
    "10_studio_unknown_step_type": ({"AEV150"}, {"strict": True}),
    "11_studio_runtime_agent_type_invalid": ({"AEV125"}, {}),
    "12_validator_blank_name_no_steps": ({"AEV104", "AEV105"}, {}),
    "13_validator_ids_roles_next_branches": ({"AEV106", "AEV130", "AEV132", "AEV133", "AEV140"}, {}),
    "14_validator_role_missing_id": ({"AEV107"}, {}),
    "15_validator_while_missing_termination": ({"AEV142"}, {}),
    "16_validator_workflow_call_unregistered": ({"AEV138"}, {"known_workflows": {"another_flow"}}),
    "17_validator_workflow_call_bad_lifecycle": ({"AEV143"}, {}),
    "18_validator_unknown_type_required": ({"AEV150"}, {"strict": True}),
    "19_validator_unknown_step_param_type": ({"AEV153"}, {"strict": True}),
    "20_validator_agent_type_empty_or_invalid": ({"AEV125"}, {}),
    "21_validator_agent_id_blank": ({"AEV125"}, {}),
    "22_src_conditional_no_branches": ({"AEV140"}, {}),
    "23_src_switch_no_default": ({"AEV141"}, {}),
    "24_src_while_bad_max_iterations": ({"AEV142"}, {}),
    "25_src_workflow_call_missing_workflow": ({"AEV121"}, {}),
    "26_src_unknown_root_key": ({"AEV103"}, {}),
    "27_src_unknown_step_key_op_root": ({"AEV109"}, {"strict": True}),   # c8db46d rejects, newer accepts
    "28_src_missing_role_ref": ({"AEV130"}, {}),
    "29_src_timeout_ms_not_int": ({"AEV108"}, {}),
}

# The words of the engine's message that flowc's message must repeat, so the
# finding names the same problem (ids, roles, keys, types).
NEGATIVE_WORDS: dict[str, tuple[str, ...]] = {
    "01_parser_empty_yaml": ("YAML 为空",),
    "02_parser_missing_name": ("缺少 name",),
    "03_parser_step_missing_id": ("step 缺 id",),
    "04_parser_unknown_role_field": ("unknown_field",),
    "05_validator_duplicate_step_id": ("step1",),
    "06_validator_child_next_missing": ("child1", "missing_step"),
    "07_validate_module_unknown_step_type": ("unknown_step",),
    "08_host_unknown_step_type": ("does_not_exist",),
    "09_validate_module_dynamic_workflow_reserved": ("ensure_runtime_ready", "dynamic_workflow"),
    "10_studio_unknown_step_type": ("demo_template",),
    "11_studio_runtime_agent_type_invalid": ("run_actor", "bad agent type!"),
    "12_validator_blank_name_no_steps": ("缺少 name", "至少需要一个 step"),
    "13_validator_ids_roles_next_branches": ("存在缺少 id 的步骤", "missing-role", "missing-next",
                                             "missing-branch-step", "缺少 true 分支", "缺少 false 分支"),
    "14_validator_role_missing_id": ("存在缺少 id 的角色",),
    "15_validator_while_missing_termination": ("loop-1", "condition 或 max_iterations"),
    "16_validator_workflow_call_unregistered": ("call-sub", "sub_flow"),
    "17_validator_workflow_call_bad_lifecycle": ("call-sub", "isolate"),
    "18_validator_unknown_type_required": ("m1", "mystery_step"),
    "19_validator_unknown_step_param_type": ("loop-1", "mystery_sub_step"),
    "20_validator_agent_type_empty_or_invalid": ("s-empty", "s-invalid", "bad type ???"),
    "21_validator_agent_id_blank": ("s-agent-id", "agent_id"),
    "22_src_conditional_no_branches": ("gate", "必须定义 branches"),
    "23_src_switch_no_default": ("route", "_default"),
    "24_src_while_bad_max_iterations": ("loop", "max_iterations 必须是正整数"),
    "25_src_workflow_call_missing_workflow": ("call", "缺少 workflow 参数"),
    "26_src_unknown_root_key": ("version",),
    "27_src_unknown_step_key_op_root": ("`op`",),
    "28_src_missing_role_ref": ("'s'", "'b'"),
    "29_src_timeout_ms_not_int": ("timeout_ms", "soon"),
}


def _negative(case: str):
    path = DATA / "negative" / f"{case}.yaml"
    _codes, options = NEGATIVE[case]
    text = path.read_text(encoding="utf-8")
    if "known_workflows" in options:
        workflow, diags = compile_aevatar(text, str(path), **options)
        return list(diags) + (analyze(workflow) if workflow is not None else [])
    return list(driver.compile_text(text, str(path), "aevatar", options.get("strict", False)).diagnostics)


def test_negative_table_covers_all_29():
    cases = sorted(p.stem for p in (DATA / "negative").glob("*.yaml"))
    assert len(cases) == 29
    assert sorted(NEGATIVE) == cases == sorted(NEGATIVE_WORDS)
    assert all((DATA / "negative" / f"{c}.txt").exists() for c in cases)


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_negative_case_fails_with_its_finding(case):
    diags = _negative(case)
    errors = [d for d in diags if d.is_error]
    codes, _ = NEGATIVE[case]
    assert codes <= {d.code for d in errors}, [(d.code, d.message) for d in diags]
    messages = " | ".join(d.message for d in errors if d.code in codes)
    for word in NEGATIVE_WORDS[case]:
        assert word in messages, f"{word!r} not in {messages!r}"


@pytest.mark.parametrize("case", ["07_validate_module_unknown_step_type", "18_validator_unknown_type_required",
                                  "27_src_unknown_step_key_op_root"])
def test_strict_only_cases_are_warnings_by_default(case):
    path = DATA / "negative" / f"{case}.yaml"
    diags = driver.compile_file(str(path), "aevatar").diagnostics
    codes, _ = NEGATIVE[case]
    assert codes <= {d.code for d in diags if not d.is_error}
    assert not any(d.is_error for d in diags)


def test_workflow_call_without_registry_is_clean():
    path = DATA / "negative" / "16_validator_workflow_call_unregistered.yaml"
    assert not any(d.is_error for d in driver.compile_file(str(path), "aevatar").diagnostics)


SEED_EXAMPLES = sorted((DATA / "seed_examples").glob("*.yaml"))


def test_seed_examples_a_to_f_are_present():
    assert [p.name[0] for p in SEED_EXAMPLES] == list("ABCDEF")


@pytest.mark.parametrize("path", SEED_EXAMPLES, ids=[p.stem for p in SEED_EXAMPLES])
def test_seed_example_compiles(path):
    result = driver.compile_file(str(path))
    assert result.dialect == "aevatar"
    assert result.ok, [(d.code, d.message) for d in result.diagnostics if d.is_error]


def test_seed_example_b_switch_on_dollar_input_is_reported():
    """The guide's example B switches on "$input", which the engine reads as
    literal text: every run takes _default. flowc warns."""
    result = driver.compile_file(str(DATA / "seed_examples" / "B_fetch_and_route.yaml"))
    assert "AEV126" in {d.code for d in result.diagnostics}


# ---------------------------------------------------------------- the command
def test_check_strict_flag(capsys):
    path = str(DATA / "negative" / "18_validator_unknown_type_required.yaml")
    assert cli.main(["check", path]) == 0
    assert "warning[AEV150]" in capsys.readouterr().out
    assert cli.main(["check", "--strict", path]) == 1
    assert "error[AEV150]" in capsys.readouterr().out


def test_check_dialect_flag_forces_aevatar(capsys, tmp_path):
    path = tmp_path / "flow.yaml"
    path.write_text("name: x\nsteps:\n  - id: a\n    type: assign\n    parameters: {target: t, value: v}\n",
                    encoding="utf-8")
    assert cli.main(["check", "--dialect", "aevatar", str(path)]) == 0


def test_check_whole_corpus_from_the_command_line(capsys):
    code = cli.main(["check", "--format", "json", str(DATA / "aevatarAI__aevatar"),
                     str(DATA / "aevatarAI__aevatar__index-only")])
    out = capsys.readouterr().out
    assert code == 1  # the three broken files
    import json

    errors = {f["file"] for f in json.loads(out) if f["severity"] == "error"}
    assert {Path(f).as_posix().split("aevatarAI__aevatar/")[-1] for f in errors} == set(BROKEN)
