"""No hangs, linear work, bounded reads: hostile inputs get a quick, clear answer.

Each case is sized so that it takes well under a second when the work is
linear and would take minutes (or never end) when it is not: a catastrophic
regular expression, a megabyte of blank lines, FIFOs and devices, files and
step lists just over the limits of ir/limits.py, alias bombs. The file
generators are those of benchmarks/bench_big_inputs.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flowc.compiler import yamlsrc
from flowc.compiler.instruction import frontend as fe
from flowc.host import load_json_file
from flowc.ir.limits import MAX_SOURCE_BYTES, MAX_STEPS, MAX_YAML_NODES
from flowc.pipeline import driver
from flowc.pipeline.evaluate import evaluate_text
from flowc.plan import build_plan
from flowc.runtime import cel, nfa, routing_run

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_big_inputs as gen

# Generous: the linear answers take well under a second on an idle machine,
# the super-linear ones took minutes (or never ended).
QUICK = 10
CATASTROPHIC = "^(a+)+$"
VICTIM = "a" * 5000 + "!"


def _timed(fn, *args):
    # CPU time of this process: other processes on a busy machine do not
    # count, so the ratios below measure the algorithm, not the load.
    started = time.process_time()
    out = fn(*args)
    return out, time.process_time() - started


def _flowc(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent))
    return subprocess.run([sys.executable, "-m", "flowc", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False)


# ------------------------------------------------------------------ regular expressions

@pytest.mark.parametrize("backend", ["python", "vm"])
def test_cel_matches_catastrophic_pattern_is_quick(backend):
    (kind, value), took = _timed(evaluate_text, "cel", f"'{VICTIM}'.matches('{CATASTROPHIC}')", {}, "expression",
                                 backend)
    assert (kind, value) == ("json", "false")
    assert took < QUICK


@pytest.fixture
def without_re2(monkeypatch):
    """Forces the built-in automaton, as on MicroPython or without the wheel."""
    monkeypatch.setattr(nfa, "_re2", None)
    monkeypatch.setattr(nfa, "_CACHE", {})
    yield
    nfa._CACHE.clear()


@pytest.mark.parametrize("backend", ["python", "vm"])
def test_cel_matches_fallback_is_linear_too(without_re2, backend):
    (kind, value), took = _timed(evaluate_text, "cel", f"'{VICTIM}'.matches('{CATASTROPHIC}')", {}, "expression",
                                 backend)
    assert (kind, value) == ("json", "false")
    assert took < QUICK
    assert evaluate_text("cel", "'x-42'.matches('^[a-z]-\\\\d+$')", {}, "expression", backend) == ("json", "true")


def test_re2_is_installed_here():
    # .[test] pulls google-re2 in: the RE2 path is the one this suite tests by default.
    assert nfa.has_re2()


def test_fallback_agrees_with_re2_on_common_patterns():
    patterns = [r"^(a+)+$", r"a.c", r"^[a-z]+@[a-z]+\.com$", r"(?i)HeLLo", r"\bfoo\b", r"x{2,3}y", r"[^abc]",
                r"\d+\.\d*", r"(?m)^b$", r"(?s)a.b", r"a|b|", r"[[:alpha:]]+1", r"[\w-]+", r"colou?r",
                r"(?:ab)*c", r"(?P<n>x)y", r"[]a]", r"\Aab\z", r"^$", r"(?i)[a-c]", r"\S\s\S", r"(a*)*b"]
    texts = ["", "a", "abc", "aaaa!", "HELLO there", "a foo b", "xxxxy", "3.14", "a\nb\nc", "a\nb", "ab1c",
             "x-y_z", "colour", "ababc", "xy", "]", "ab", "B", "a b", "aaab", "me@x.com"]
    for pattern in patterns:
        fast, slow = nfa.compile(pattern), nfa.compile(pattern, use_re2=False)
        for text in texts:
            assert fast.search(text) == slow.search(text), (pattern, text)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)b", r"(?<!a)b", r"\pL", "a**", "(", "[a", "a{2000}"])
def test_fallback_refuses_what_it_cannot_run_in_linear_time(pattern):
    with pytest.raises(nfa.RegexError):
        nfa.compile(pattern, use_re2=False)


def test_fallback_work_is_linear_in_the_text():
    rx = nfa.compile("(x+x+)+y", use_re2=False)
    _, small = _timed(rx.search, "x" * 5000)
    _, large = _timed(rx.search, "x" * 20000)
    assert large < 1 + 8 * small   # 4x the text: about 4x the work, never 16x or worse


def test_cel_matches_reports_an_invalid_pattern(without_re2):
    kind, message = evaluate_text("cel", "'aa'.matches('(a)\\\\1')")
    assert kind == "error" and "invalid regular expression" in message


@pytest.mark.parametrize("force_fallback", [False, True])
def test_aevatar_regex_guard_is_quick(monkeypatch, force_fallback):
    if force_fallback:
        monkeypatch.setattr(nfa, "_re2", None)
        monkeypatch.setattr(nfa, "_CACHE", {})
    (ok, message), took = _timed(routing_run.guard, {"check": "regex", "pattern": CATASTROPHIC}, VICTIM)
    assert not ok and "does not match" in message and took < QUICK
    # `(?!)` (never matches) is what flowc's translations to aevatar write
    assert routing_run.guard({"check": "regex", "pattern": "(?!)"}, "x")[0] is False
    assert routing_run.guard({"check": "regex", "pattern": "^a"}, "abc") == (True, "")


def test_cel_matches_uses_no_backtracking_re():
    # Python's re would take longer than the age of the universe on this one.
    assert cel.matches("a" * 40 + "!", CATASTROPHIC) is False


# ------------------------------------------------------------------ dialect detection

@pytest.mark.parametrize("text", ["\n" * 1_000_000, " " * 1_000_000, " \t\n" * 333_333, "-\n \n" * 250_000,
                                  "\n kind:" * 150_000, (" " * 1000 + "\n") * 1000])
def test_dialect_detection_is_linear(text):
    for path in ("x.yaml", "x.md"):
        _, took = _timed(driver.detect_dialect, text, path)
        assert took < QUICK, (path, took)   # ~0.2 s when linear; quadratic was minutes


def test_detection_answers_are_kept():
    assert driver.detect_dialect(gen.aevatar(3), "w.yaml") == "aevatar"
    assert driver.detect_dialect(gen.workflowskill(3), "w.yaml") == "workflowskill"
    assert driver.detect_dialect(gen.instruction(3), "w.yaml") == "instruction"
    # `kind:` at the start of a line after a blank one still counts, as before
    assert driver._INSTRUCTION_KIND.search("a: 1\n\nkind: tool\n")


# ------------------------------------------------------------------ files

def test_fifo_on_the_command_line_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "wf.yaml"
    os.mkfifo(fifo)
    done = _flowc("check", str(fifo), timeout=30)
    assert done.returncode == 2
    assert "FLC003" in done.stdout and "FIFO" in done.stdout


def test_fifo_in_a_checked_directory_is_refused_without_blocking(tmp_path):
    (tmp_path / "ok.yaml").write_text(gen.workflowskill(2), encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.yaml")
    done = _flowc("check", str(tmp_path), timeout=30)
    assert "pipe.yaml" in done.stdout and "FLC003" in done.stdout
    assert "ok.yaml" not in done.stdout


def test_dev_zero_is_refused():
    assert Path("/dev/zero").exists()
    text, problem = driver.read_source("/dev/zero")
    assert text is None and problem.code == "FLC003" and "not a regular file" in problem.message


def test_fifo_as_inputs_file_is_refused(tmp_path):
    fifo = tmp_path / "inputs.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        load_json_file(str(fifo), "inputs file")


def test_source_bytes_limit_at_the_boundary(tmp_path):
    at = tmp_path / "at.yaml"
    at.write_bytes(b"#" * (MAX_SOURCE_BYTES - 1) + b"\n")
    text, problem = driver.read_source(str(at))
    assert problem is None and len(text) == MAX_SOURCE_BYTES
    over = tmp_path / "over.yaml"
    over.write_bytes(b"#" * MAX_SOURCE_BYTES + b"\n")
    text, problem = driver.read_source(str(over))
    assert text is None and problem.code == "LIM001"
    assert (problem.span.line, problem.span.col) == (1, 1)


def test_oversized_file_is_one_finding_quickly(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text(gen.aevatar_bytes(10_000_000), encoding="utf-8")
    done = _flowc("check", str(big), timeout=30)
    assert done.returncode == 1 and "error[LIM001]" in done.stdout


# ------------------------------------------------------------------ steps

@pytest.mark.parametrize("dialect", ["workflowskill", "aevatar"])
def test_too_many_steps_is_lim002_before_any_step_work(dialect):
    text = gen.compact(dialect, MAX_STEPS + 1)
    result, took = _timed(driver.compile_text, text, "big.yaml", dialect)
    codes = [d.code for d in result.diagnostics]
    assert codes == ["LIM002"], codes
    assert took < QUICK


def test_steps_at_the_limit_compile():
    result = driver.compile_text(gen.compact("aevatar", MAX_STEPS), "big.yaml", "aevatar")
    assert "LIM002" not in {d.code for d in result.diagnostics}
    assert result.workflow is not None and len(result.workflow.nodes) >= MAX_STEPS


def test_instruction_nested_steps_count_toward_lim002(monkeypatch):
    # A smaller limit keeps the test fast; the front end reads it from ir/limits.py.
    monkeypatch.setattr(fe, "MAX_STEPS", 1000)
    # start + fan + the nested ones: 1,001 in all, counted before any is compiled
    over = driver.compile_text(gen.instruction_nested(999), "big.yaml", "instruction")
    assert [d.code for d in over.diagnostics] == ["LIM002"]
    assert fe._count_steps(_steps_map(gen.instruction_nested(998))) == 1000
    at = driver.compile_text(gen.instruction_nested(998), "big.yaml", "instruction")
    assert "LIM002" not in {d.code for d in at.diagnostics}


def _steps_map(text):
    root, _ = yamlsrc.load(text, "x.yaml")
    return root.get("steps")


def test_instruction_top_level_limit_comes_before_graph_work():
    # 5,000 steps: per-step graph searches would take 25 million steps
    result, took = _timed(driver.compile_text, gen.compact("instruction", 5_000), "big.yaml", "instruction")
    assert [d.code for d in result.diagnostics] == ["INS306"]
    assert took < QUICK


def test_instruction_upstream_check_is_linear():
    """512 chained steps each reading its predecessor: the upstream check
    (once per-step graph searches) is one pass."""
    result, took = _timed(driver.compile_text, gen.instruction(512), "chain.yaml", "instruction")
    assert "INS310" not in {d.code for d in result.diagnostics}
    assert took < QUICK


def test_instruction_upstream_warning_still_fires():
    text = ("name: w\nsteps:\n  start: { kind: manual }\n  a: { kind: tool, depends_on: start, name: t }\n"
            "  b: { kind: tool, depends_on: start, name: t, args: { x: \"{{ steps.a.output }}\" } }\n"
            "  done: { kind: finish, depends_on: [a, b] }\n")
    assert "INS310" in {d.code for d in driver.compile_text(text, "w.yaml", "instruction").diagnostics}


class NoBodies:
    """Bodies as None: the plan's nodes and edges alone."""

    def params(self, node, entries, ci):
        return None

    def expression(self, node, expr, what, ci):
        return None


def test_aevatar_plan_is_linear():
    wfs = {n: driver.compile_text(gen.aevatar(n), "a.yaml", "aevatar").workflow for n in (500, 2000)}

    def plan(n):
        return build_plan(wfs[n], NoBodies())

    _, small = _timed(plan, 500)
    large_plan, large = _timed(plan, 2000)
    assert large_plan["edges"][0][:3] == ["s0", "s1", "sequence"] and len(large_plan["nodes"]) == 2000
    assert large < 0.5 + 8 * small  # scanning every edge per step would be 16x


# ------------------------------------------------------------------ YAML

def test_alias_bomb_just_under_the_cap_is_cheap():
    text = gen.alias_bomb(MAX_YAML_NODES * 9 // 10)
    assert len(text) < 8192
    result, took = _timed(driver.compile_text, text, "bomb.yaml", "workflowskill")
    assert not [d for d in result.diagnostics if d.code == "YAML005"]
    assert took < QUICK


def test_alias_bomb_over_the_cap_says_what_it_counts():
    result, took = _timed(driver.compile_text, gen.alias_bomb(50_000_000), "bomb.yaml", "workflowskill")
    [finding] = [d for d in result.diagnostics if d.code == "YAML005"]
    assert f"more than {MAX_YAML_NODES} YAML nodes" in finding.message and "?" not in finding.message
    assert took < QUICK


@pytest.mark.parametrize("shape", ["comments", "block_scalar"])
def test_a_million_line_yaml_file_is_quick(shape):
    text = getattr(gen, shape)(1_000_000)
    assert len(text.encode()) <= MAX_SOURCE_BYTES
    result, took = _timed(driver.compile_text, text, "big.yaml", None)
    assert result.dialect is not None
    assert took < 3 * QUICK
