"""`flowc check DIR` on many files: --jobs, progress and the summary."""

from __future__ import annotations

import io
import re
import shutil

import pytest
from flowc import cli
from flowc.pipeline import batch

SUMMARY = re.compile(r"checked (\d+) files?: (\d+) errors?, (\d+) warnings? in \d+\.\d\ds")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def many(tmp_path_factory, wfs_dir):
    """The corpus copied five times over: enough files for a process pool."""
    root = tmp_path_factory.mktemp("many")
    for i in range(5):
        shutil.copytree(wfs_dir, root / f"copy{i}")
    return root


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_jobs_do_not_change_the_output(capsys, many, fmt):
    serial = run(capsys, "check", "--format", fmt, "--jobs", "1", str(many))
    parallel = run(capsys, "check", "--format", fmt, "--jobs", "3", str(many))
    assert parallel[0] == serial[0] == 1
    assert parallel[1] == serial[1]


def test_jobs_0_uses_every_core(capsys, many):
    assert run(capsys, "check", "--jobs", "0", str(many))[0] == 1


def test_worker_count():
    assert batch.worker_count(None, 3) == 1
    assert batch.worker_count(None, batch.PARALLEL_THRESHOLD) == min(batch.cpu_count(),
                                                                     batch.PARALLEL_THRESHOLD)
    assert batch.worker_count(0, 1000) == batch.cpu_count()
    assert batch.worker_count(4, 2) == 2          # never more processes than files
    assert batch.worker_count(-3, 10) == min(batch.cpu_count(), 10)


def test_results_keep_the_order_of_the_paths(many):
    paths = sorted(str(p) for p in many.rglob("*.md"))
    results = batch.check_files(paths, jobs=3)
    assert [r.path for r in results] == paths


def test_summary_is_on_stderr_in_text_mode_only(capsys, many):
    _, out, err = run(capsys, "check", str(many))
    m = SUMMARY.search(err)
    assert m and int(m.group(1)) == len(list(many.rglob("*.md"))) - 5   # no-block files are skipped
    assert int(m.group(2)) > 0 and int(m.group(3)) > 0
    assert not SUMMARY.search(out)
    for fmt in ("json", "sarif"):
        assert not SUMMARY.search(run(capsys, "check", "--format", fmt, str(many))[2])


def test_no_progress_when_stderr_is_not_a_terminal(capsys, many):
    _, _, err = run(capsys, "check", str(many))
    assert "[" not in err.split("checked")[0]


def test_progress_on_request(capsys, many):
    _, _, err = run(capsys, "check", "--progress", "--format", "json", str(many))
    lines = err.splitlines()
    assert lines[0].startswith("checking ") and "file" in lines[0]
    assert re.match(r"\[\s*\d+/\d+\] \d+ E, \d+ W  ", lines[-1])
    total = lines[-1].split("/")[1].split("]")[0]
    assert lines[-1].startswith(f"[{total}/{total}]")


def test_interactive_progress_rewrites_one_line():
    stream = io.StringIO()
    progress = batch.Progress(stream, interactive=True, interval=0)
    results = [batch.FileResult(f"f{i}.md", "", ()) for i in range(3)]
    progress.start(3, 1)
    for r in results:
        progress.advance(r)
    progress.finish()
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") >= 4
    assert "[3/3] 0 E, 0 W  f2.md" in text
    assert text.endswith("\r")   # the line is cleared at the end


def test_unreadable_file_in_a_batch(capsys, tmp_path, many):
    code, out, _ = run(capsys, "check", "--jobs", "2", str(tmp_path / "gone.md"), str(many / "copy0"))
    assert code == 1 and "error[FLC003]" in out
