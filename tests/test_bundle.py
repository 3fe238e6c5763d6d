"""The device bundle (``flowc bundle DIR``): one file that
loads, verifies and runs programs of all three dialects, on CPython
without flowc and on MicroPython with a small heap.

The bundler derives the modules from the device entry's imports, so these
tests assert against the closure it computes, never a list of files.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from flowc.backends.vm import bundle as B
from flowc.backends.vm import compile_workflow, load, plan_loops
from flowc.cli import main as flowc_main
from flowc.host import ScriptedHost
from flowc.pipeline import driver
from flowc.runtime import cel

TESTS = Path(__file__).resolve().parent
MP_DIR = TESTS / "micropython"
MP_PACKAGE = MP_DIR / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
# The heap the WebAssembly port starts with. That port collects garbage only
# between two top-level calls and grows its heap inside one, so it cannot
# hold a run to this size: the test asserts what it can, that the loaded
# bundle keeps less than this after a collection. The smallest heap that
# runs the sample is measured on MicroPython's unix port by
# benchmarks/bench_bundle.py (docs/embedding.md gives the figures).
MP_HEAP = 256 * 1024
DIALECTS = ("aevatar", "instruction", "workflowskill")


@functools.cache
def _sample() -> tuple:
    return tuple(tuple(j) for j in _build_sample())


def sample_jobs() -> list[list]:
    """[name, program, inputs, host script]: a handful of corpus workflows
    of each dialect (WorkflowSkill, instruction, aevatar)."""
    return [list(j) for j in copy.deepcopy(_sample())]   # a run may not change another test's inputs


def _build_sample() -> list[list]:
    from tests.test_aevatar_run import SCRIPTS
    from tests.test_vm_equivalence import corpus_programs

    jobs: list[list] = []
    wanted = ("two-step-pipe", "branch/then", "each-loop", "retry-backoff/succeeds-3rd", "sort-pipeline",
              "error-ignore")
    for name, data, inputs, script in corpus_programs():
        if name in wanted:
            jobs.append(["workflowskill " + name, data, inputs, script])
    for name in ("02-agentd-e2e-data-pipeline.yaml", "03-agentd-e2e-control-flow.yaml"):
        wf = driver.compile_file(str(TESTS / "data" / "instruction" / name)).workflow
        jobs.append(["instruction " + name, compile_workflow(wf), {}, {}])
    for letter in ("A", "B", "D", "F"):
        inputs, script, _ = SCRIPTS[letter]
        path = next((TESTS / "data" / "aevatar" / "seed_examples").glob(f"{letter}_*.yaml"))
        jobs.append(["aevatar " + letter, compile_workflow(driver.compile_file(str(path)).workflow), inputs, script])
    return jobs


def expected(job: list) -> dict:
    """The line the bundle should print for ``job``: flowc's own VM's record."""
    name, data, inputs, script = job
    return json.loads(json.dumps({"name": name, "record": cel.to_json(load(data).run(inputs,
                                                                                          ScriptedHost(script)))}))


def _lines(stdout: str) -> list[dict]:
    # "\n" only: records may hold U+2028, which str.splitlines() splits at
    return [json.loads(line) for line in stdout.split("\n") if line.strip()]


def _assert_same_records(jobs: list[list], lines: list[dict]) -> None:
    assert lines[-1] == {"flowc_modules": []}, lines[-1]
    assert [x.get("name") for x in lines[:-1]] == [j[0] for j in jobs]
    for job, got in zip(jobs, lines, strict=False):
        assert got == expected(job), job[0]


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    assert flowc_main(["bundle", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["flowc_vm.py"]
    return out


def test_the_bundle_holds_the_closure_of_the_device_entry(bundle_dir):
    built = B.build_bundle()
    closure = B.closure()
    modules = [m.name for m in closure]
    assert built.modules == modules and modules[-1] == B.ENTRY
    # what a device runs: the VM, each dialect's loader, the kernel
    for name in ("flowc.backends.vm.plan_steps", "flowc.backends.vm.plan_vm", "flowc.runtime.sequence_run",
                 "flowc.runtime.kernel"):
        assert name in modules
    assert built.text.splitlines()[0].endswith(", ".join(m.removeprefix("flowc.") for m in modules))
    # every top-level function and class of every module is in the bundle, under its name or its new one,
    # unless no code of the bundle reaches it (and then no code kept of its module names it)
    tree = ast.parse(built.text)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    mentioned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for mod in closure:
        renamed = built.renamed.get(mod.name, {})
        kept = {n.id for n in ast.walk(mod.tree) if isinstance(n, ast.Name)}
        for node in ast.parse(mod.path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                if node.name in built.dropped.get(mod.name, []):
                    assert node.name not in kept, (mod.name, node.name)
                else:
                    assert renamed.get(node.name, node.name) in defined, (mod.name, node.name)
    # what a host uses is there
    for name in ("load", "VMError", "VerifyError", "unpackb", "copy_json", "to_json", "to_json_text", "json_dumps"):
        assert name in defined or name in mentioned, name
    # no import of flowc is left, and no docstring
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith("flowc"), node.module
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("flowc") for a in node.names)
    assert not any(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in ast.walk(tree))
    # deterministic, and what the command wrote
    assert built.text == (bundle_dir / "flowc_vm.py").read_text(encoding="utf-8")
    assert built.size < built.source_bytes


def test_the_same_tree_gives_the_same_bytes_whatever_the_hash_seed():
    """Dropping and short names follow no set's order: two interpreters with
    other string hashes write the same bundles."""
    import os

    code = ("import hashlib; from flowc.backends.vm import bundle as B\n"
            "print([hashlib.sha256(B.build_bundle(None, m).text.encode()).hexdigest()"
            " for m in [None, *(B.models_of(d) for d in ('aevatar', 'instruction', 'workflowskill'))]])")
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                              check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs.add(proc.stdout)
    assert len(outputs) == 1


def test_the_command_prints_the_sizes(tmp_path, capsys):
    assert flowc_main(["bundle", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    size = (tmp_path / "out" / "flowc_vm.py").stat().st_size
    assert f": {size} bytes from {len(B.closure())} modules of " in out
    with pytest.raises(SystemExit) as usage:   # no DIR: a usage error
        flowc_main(["bundle"])
    assert usage.value.code == 2
    assert "flowc bundle: error: the following arguments are required: DIR" in capsys.readouterr().err


def test_the_command_writes_one_dialect_and_reports_a_directory_it_cannot_make(tmp_path, capsys):
    assert flowc_main(["bundle", str(tmp_path / "plain"), "--readable"]) == 0
    assert (tmp_path / "plain" / "flowc_vm.py").read_text(encoding="utf-8") == B.build_bundle(minify=False).text
    assert flowc_main(["bundle", str(tmp_path / "wfs"), "--dialect", "workflowskill"]) == 0
    path, _ = B.write_bundle(tmp_path / "again", "workflowskill")
    assert (tmp_path / "wfs" / "flowc_vm.py").read_bytes() == path.read_bytes()
    capsys.readouterr()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    assert flowc_main(["bundle", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("flowc: error: ") and "Traceback" not in err


def test_the_bundle_runs_every_dialect_on_cpython_without_flowc(bundle_dir, tmp_path):
    jobs = sample_jobs()
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    run_dir = tmp_path / "device"
    run_dir.mkdir()
    shutil.copy(bundle_dir / "flowc_vm.py", run_dir)
    shutil.copy(MP_DIR / "mp_host.py", run_dir)
    shutil.copy(MP_DIR / "mp_bundle.py", run_dir)
    # -I -S: no site-packages, no PYTHONPATH: flowc cannot be imported at all
    script = ("import sys; sys.path[:] = [sys.argv[1]] + [p for p in sys.path if 'site-packages' not in p]\n"
              "try:\n import flowc\nexcept ImportError:\n pass\nelse:\n raise SystemExit('flowc importable')\n"
              "import mp_bundle; mp_bundle.main(sys.argv[2])\n")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", script, str(run_dir), str(jobs_file)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _lines(proc.stdout)
    assert {j[0].split()[0] for j in jobs} == {"workflowskill", "instruction", "aevatar"}
    _assert_same_records(jobs, lines)


def test_the_bundle_api_in_process(bundle_dir):
    import importlib.util

    spec = importlib.util.spec_from_file_location("flowc_vm_bundle_test", bundle_dir / "flowc_vm.py")
    bundled = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bundled)
    for name, data, inputs, script in sample_jobs():
        program = bundled.load(data)
        record = program.run(inputs, ScriptedHost(script))
        assert cel.to_json(record) == cel.to_json(load(data).run(inputs, ScriptedHost(script))), name
        if hasattr(load(data), "run_virtual"):   # aevatar and dataflow programs: a virtual clock
            got = bundled.load(data).run_virtual(inputs, script)
            assert cel.to_json(got) == cel.to_json(load(data).run_virtual(inputs, script)), name
    with pytest.raises(bundled.VerifyError):
        bundled.load(b"WFBC not a program")


def _whole_corpus() -> list[tuple]:
    """(name, bytecode, inputs, script) of every runnable corpus program of
    the three dialects: the WorkflowSkill cases with their hosts, every
    instruction workflow, every aevatar seed example."""
    from tests.test_aevatar_run import SCRIPTS
    from tests.test_vm_equivalence import corpus_programs

    jobs = [("workflowskill " + n, d, i, s) for n, d, i, s in corpus_programs()]
    for path in sorted((TESTS / "data" / "instruction").iterdir()):
        result = driver.compile_file(str(path))
        if result.ok:
            jobs.append(("instruction " + path.name, compile_workflow(result.workflow), {}, {}))
    for path in sorted((TESTS / "data" / "aevatar" / "seed_examples").glob("*.yaml")):
        inputs, script, _ = SCRIPTS.get(path.name[0], ({}, {}, None))
        jobs.append(("aevatar " + path.name, compile_workflow(driver.compile_file(str(path)).workflow), inputs,
                     script))
    return jobs


def _outcome(run, *args) -> object:
    """A run's record, or the name and message of what it raised."""
    try:
        return cel.to_json(run(*args))
    except Exception as exc:   # noqa: BLE001 - the bundle must raise what the package raises
        return [type(exc).__name__, str(exc)]


@pytest.mark.parametrize(("dialect", "small"), [(None, False), *[(d, False) for d in DIALECTS], (None, True),
                                               ("workflowskill", True)])
def test_the_bundled_code_behaves_as_the_package_on_the_whole_corpus(dialect, small, tmp_path):
    """What the bundler rewrites (flat names, dropped definitions, short
    names, the optional parts a small bundle leaves out) changes no
    behaviour: the bundle, imported by CPython, gives the
    package's records on every program of the corpus, the package's errors
    on every truncation and bit flip of a few programs, on a virtual clock
    too where the program has one."""
    import importlib.util

    path, _ = B.write_bundle(tmp_path, dialect, small=small)
    spec = importlib.util.spec_from_file_location(f"flowc_vm_corpus_{dialect}_{small}", path)
    bundled = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bundled)
    jobs = [j for j in _whole_corpus() if dialect is None or j[0].startswith(dialect)]
    assert len(jobs) >= (4 if dialect else 30)
    for name, data, inputs, script in jobs:
        want = _outcome(lambda d=data, i=inputs, s=script: load(d).run(i, ScriptedHost(s)))
        got = _outcome(lambda d=data, i=inputs, s=script: bundled.load(d).run(i, ScriptedHost(s)))
        assert got == want, name
        if hasattr(load(data), "run_virtual"):
            assert _outcome(lambda d=data, i=inputs, s=script: bundled.load(d).run_virtual(i, s)) == \
                _outcome(lambda d=data, i=inputs, s=script: load(d).run_virtual(i, s)), name
    for _name, data, _inputs, _script in jobs[:: max(1, len(jobs) // 6)]:
        for broken in [data[:n] for n in range(0, len(data), max(1, len(data) // 40))] + \
                [data[:n] + bytes([data[n] ^ 0x5A]) + data[n + 1:] for n in range(0, len(data), 7)]:
            assert _outcome(bundled.load, broken) == _outcome(load, broken)


def test_the_bundle_runs_every_dialect_on_micropython(bundle_dir, tmp_path):
    node = shutil.which("node")
    assert node, "node is not installed: the MicroPython test needs node (v18+)"
    assert MP_PACKAGE.is_dir(), f"{MP_PACKAGE} is missing: run `npm ci` in {MP_DIR}"
    jobs = sample_jobs()
    jobs_file = tmp_path / "jobs.bin"
    jobs_file.write_bytes(msgpack.packb(jobs, use_bin_type=True))
    proc = subprocess.run([node, str(MP_DIR / "run_bundle.mjs"), str(MP_HEAP), str(bundle_dir / "flowc_vm.py"),
                           str(MP_DIR / "mp_bundle.py"), str(jobs_file), str(MP_DIR / "mp_host.py")],
                          check=False, capture_output=True, text=True, timeout=600, cwd=MP_DIR)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _lines(proc.stdout)
    heap = lines.pop()["heap"]
    _assert_same_records(jobs, lines)
    assert heap["initial"] <= MP_HEAP
    assert 0 < heap["resident"] < MP_HEAP, f"the loaded bundle keeps {heap['resident']} bytes of heap"


def test_a_module_that_is_not_device_safe_fails_the_build(tmp_path, monkeypatch):
    """An unconditional import of typing (or any module MicroPython lacks)
    in the closure stops the build with the module and the line."""
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text("try:\n    from flowc.dev import helper as _h\n"
                                              "except ImportError:\n    import helper as _h\n\n"
                                              "def load(data):\n    return _h.go(data)\n", encoding="utf-8")
    (package / "dev" / "helper.py").write_text("import typing\n\ndef go(x):\n    return x\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    with pytest.raises(B.BundleError, match=r"flowc.dev.helper:1: imports typing unconditionally"):
        B.build_bundle("flowc.dev.entry")
    (package / "dev" / "helper.py").write_text("try:\n    import typing\nexcept ImportError:\n    typing = None\n"
                                               "\ndef go(x):\n    return x\n", encoding="utf-8")
    assert "return go(data)" in B.build_bundle("flowc.dev.entry").text


def test_collisions_and_scopes_are_resolved(tmp_path, monkeypatch):
    """Two modules binding one name: the non-entry one is renamed, its
    locals and parameters of the same name are not, and a name another
    module reads as a builtin moves out of the way."""
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(
        "try:\n    from flowc.dev import a as _a\n    from flowc.dev.a import helper\n"
        "except ImportError:\n    import a as _a\n    from a import helper\n\n"
        "LIMIT = 2\n\ndef load(data):\n    return [_a.load(data), helper(), len(data), LIMIT, _a.K.x, _a.K().f()]\n",
        encoding="utf-8")
    (package / "dev" / "a.py").write_text(
        "LIMIT = 10\n\nlen = 3\n\n"
        "def load(data, LIMIT=LIMIT):\n    return [LIMIT, data, [LIMIT for LIMIT in (1,)], len]\n\n"
        "def helper():\n    global LIMIT\n    LIMIT += 1\n    return LIMIT\n\n"
        "class K:\n    LIMIT = 5\n    x = LIMIT\n    def f(self):\n        return LIMIT\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    built = B.build_bundle("flowc.dev.entry", minify=False)
    assert built.renamed == {"flowc.dev.a": {"LIMIT": "LIMIT_a", "len": "len_a", "load": "load_a"}}
    for text in (built.text, B.build_bundle("flowc.dev.entry").text):
        namespace: dict = {}
        exec(compile(text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
        assert namespace["load"]("xy") == [[10, "xy", [1], 3], 11, 2, 2, 5, 11]


def test_what_no_code_reaches_is_dropped(tmp_path, monkeypatch):
    """A top-level definition that neither the entry's load and __all__, the
    host API (HOST_API) nor any statement that must run reaches is not
    written; a statement that must run (a call, a try) is, with all it
    mentions, and so is every binding of a name that is kept."""
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(
        "try:\n    from flowc.dev import a as _a\nexcept ImportError:\n    import a as _a\n\n"
        "def load(data):\n    return _a.used(data)\n\ndef _private():\n    return 0\n", encoding="utf-8")
    (package / "dev" / "a.py").write_text(
        "TABLE = {'k': 1}\nUNUSED = (1, 2)\nREGISTRY = []\n\n"
        "def used(x):\n    return [x, TABLE['k'], _fast(x), REGISTRY]\n\n"
        "def _fast(x):\n    return 'slow'\n\n"
        "try:\n    from json import dumps as _fast\nexcept ImportError:\n    pass\n\n"
        "def unused():\n    return only_unused()\n\n"
        "def only_unused():\n    return UNUSED\n\n"
        "def register(f):\n    REGISTRY.append(f.__name__)\n\n"
        "def hook():\n    pass\n\nregister(hook)\n\n"
        "def copy_json(v):\n    return v\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    built = B.build_bundle("flowc.dev.entry")
    assert built.dropped == {"flowc.dev.a": ["UNUSED", "unused", "only_unused"], "flowc.dev.entry": ["_private"]}
    namespace: dict = {}
    exec(compile(built.text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
    assert namespace["load"](1) == [1, 1, "1", ["hook"]]
    assert namespace["copy_json"]([2]) == [2]   # a host's name (HOST_API)


SCOPES = """
COUNT = 0
_table = {"k": 3}


def _helper(value, scale=2):
    return value * scale


def _by_keyword(value, limit):
    return value + limit


def counter(start):
    total = start
    history = []

    def bump(step=total):
        nonlocal total
        total += step
        history.append(total)
        return total

    class Box:
        kind = total
        size = len(history)

        def read(self, extra=kind):
            return (total, extra, self.size)

    bump()
    bump(1)
    squares = [total * n for n in range(3) if (last := n) >= 0]
    inner = {n: [n + m for m in range(n)] for n in range(3)}
    fn = lambda n, total=total: n + total
    try:
        raise KeyError("x")
    except KeyError as problem:
        caught = type(problem).__name__
    return [total, history, squares, last, inner, fn(1), Box().read(), Box.__name__, bump.__name__, caught,
            _helper(2), _helper(value=3), _by_keyword(1, limit=2), _table["k"], dynamic(5)]


def dynamic(value):
    doubled = value * 2
    return sorted(locals())


def bump_global():
    global COUNT
    COUNT += 1
    return COUNT


def load(data):
    return [counter(data), bump_global(), bump_global()]
"""


def test_short_names_keep_what_every_scope_means(tmp_path, monkeypatch):
    """Closures, nonlocal and global, class bodies in functions, defaults
    evaluated outside, comprehensions and a walrus, lambdas, except-as,
    keywords passed to private functions, locals(): the minified bundle
    computes what the plain one does, and it is shorter."""
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(SCOPES, encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    plain, small = B.build_bundle("flowc.dev.entry", minify=False), B.build_bundle("flowc.dev.entry")
    results = []
    for text in (plain.text, small.text):
        namespace: dict = {}
        exec(compile(text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
        results.append(namespace["load"](10))
    assert results[0] == results[1]
    assert results[0][0][7:10] == ["Box", "bump", "KeyError"] and results[0][0][-1] == ["doubled", "value"]
    assert small.size < plain.size
    assert "history" not in small.text and "limit" in small.text and "value" in small.text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_bundle_of_one_dialect_runs_that_dialect(dialect, tmp_path):
    import importlib.util

    path, built = B.write_bundle(tmp_path, dialect)
    assert built.modules[-1] == B.entry_of(B.models_of(dialect))
    assert set(built.modules) < {m.name for m in B.closure()}
    spec = importlib.util.spec_from_file_location(f"flowc_vm_{dialect}", path)
    bundled = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bundled)
    jobs = [j for j in sample_jobs() if j[0].startswith(dialect)]
    assert jobs
    for name, data, inputs, script in jobs:
        got = bundled.load(data).run(inputs, ScriptedHost(script))
        assert cel.to_json(got) == cel.to_json(load(data).run(inputs, ScriptedHost(script))), name


# Each dialect's builtins come with its loader: a bundle holds no other dialect's runtime
# and no other model's scheduler.
_WFS = ("plan_steps", "plan_loops", "sequence_run", "wfs", "expr_wfs")
NOT_IN_BUNDLE = {"workflowskill": ("cel", "aevatar_text", "nfa", "dataflow_run", "routing_run", "json_text",
                                   "expr_cel", "expr_aevatar"),
                 "aevatar": ("cel", "dataflow_run", "expr_cel", *_WFS),
                 "instruction": ("aevatar_text", "expr_aevatar", "routing_run", *_WFS)}


@pytest.mark.parametrize("dialect", sorted(NOT_IN_BUNDLE))
def test_a_bundle_of_one_dialect_holds_no_other_runtime(dialect):
    models = B.models_of(dialect)
    built = B.build_bundle(None, models)
    shorts = {m.rsplit(".", 1)[-1] for m in built.modules}
    assert not shorts & set(NOT_IN_BUNDLE[dialect]), shorts
    assert {"expr_vm", "container", "errors"} <= shorts
    # the other models' rows and the code only they use are not in it
    namespace: dict = {}
    exec(compile(built.text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
    # what docs/embedding.md promises a host of every bundle
    for name in ("load", "VMError", "VerifyError", "unpackb", "copy_json"):
        assert name in namespace, (dialect, name)
    assert built.modules[-1] == B.ENTRY and set(namespace["LOADERS"]) == set(models)


def test_the_models_of_a_dialect_are_its_profiles_scheduling():
    assert [B.models_of(d) for d in DIALECTS] == [("kernel",), ("dataflow",), ("sequential",)]
    with pytest.raises(B.BundleError, match="no dialect"):
        B.models_of("nope")


def test_a_bundle_of_some_models_keeps_their_rows_and_the_code_they_use(tmp_path, monkeypatch):
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(
        "try:\n    from flowc.dev import a as _a\n    from flowc.dev import b as _b\n"
        "except ImportError:\n    import a as _a\n    import b as _b\n\n"
        "__all__ = ['load']\nBY_MODEL = ('ROWS',)\n\n"
        "def _only_b(x):\n    return _b.f(x)\n\n"
        "ROWS = {'kernel': _a.f, 'dataflow': _only_b}\n\n"
        "def load(model, x):\n    return ROWS[model](x)\n", encoding="utf-8")
    (package / "dev" / "a.py").write_text("def f(x):\n    return ['a', x]\n", encoding="utf-8")
    (package / "dev" / "b.py").write_text("def f(x):\n    return ['b', x]\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    assert B.build_bundle("flowc.dev.entry").modules == ["flowc.dev.a", "flowc.dev.b", "flowc.dev.entry"]
    built = B.build_bundle("flowc.dev.entry", ("kernel",))
    assert built.modules == ["flowc.dev.a", "flowc.dev.entry"]
    assert "_only_b" not in built.text
    namespace: dict = {}
    exec(compile(built.text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
    assert namespace["load"]("kernel", 1) == ["a", 1]
    (package / "dev" / "entry.py").write_text("BY_MODEL = ('MISSING',)\n", encoding="utf-8")
    with pytest.raises(B.BundleError, match="not there: MISSING"):
        B.build_bundle("flowc.dev.entry", ("kernel",))


def test_a_bundle_of_some_models_keeps_only_what_the_entry_reaches(tmp_path, monkeypatch):
    """The rows of the other models go first, then what only they reached:
    one pass of reachability for every bundle."""
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(
        "try:\n    from flowc.dev import a as _a\n    from flowc.dev.a import shared\n"
        "except ImportError:\n    import a as _a\n    from a import shared\n\n"
        "__all__ = ['BY_MODEL', 'ROWS']\nBY_MODEL = ('ROWS',)\nROWS = {'kernel': _a.f, 'dataflow': _a.g}\n\n"
        "def load(x):\n    return shared(ROWS['kernel'](x))\n", encoding="utf-8")
    (package / "dev" / "a.py").write_text(
        "try:\n    from flowc.dev import c as _c\nexcept ImportError:\n    import c as _c\n\n"
        "REGISTERED = []\nREGISTERED.append('a')\n\n"
        "def f(x):\n    return ['f', x]\n\ndef g(x):\n    return _c.h(x)\n\n"
        "def shared(x):\n    return x + REGISTERED\n\nclass VMError(Exception):\n    pass\n", encoding="utf-8")
    (package / "dev" / "c.py").write_text("def h(x):\n    return x\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    assert [m.rsplit(".", 1)[-1] for m in B.build_bundle("flowc.dev.entry").modules] == ["c", "a", "entry"]
    built = B.build_bundle("flowc.dev.entry", ("kernel",))
    # g, only reader of c, is left out with c; the registration, f, shared and the host's VMError stay
    assert built.modules == ["flowc.dev.a", "flowc.dev.entry"] and built.dropped == {"flowc.dev.a": ["g"]}
    namespace: dict = {}
    exec(compile(built.text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
    assert "g" not in namespace and issubclass(namespace["VMError"], Exception)
    assert namespace["load"](1) == ["f", 1, "a"]


def test_a_one_dialect_bundle_of_another_model_holds_the_container_reader_not_the_workflowskill_steps():
    for dialect in ("aevatar", "instruction"):
        built = B.build_bundle(None, B.models_of(dialect))
        assert "flowc.backends.vm.container" in built.modules
        for name in ("flowc.backends.vm.plan_steps", "flowc.runtime.sequence_run", "flowc.runtime.wfs",
                     "flowc.backends.vm.expr_wfs"):
            assert name not in built.modules, (dialect, name)


def test_a_small_bundle_leaves_the_compiled_loops_out_which_the_corpus_runs(tmp_path):
    from tests.test_vm_equivalence import corpus_programs

    for dialect in (None, "workflowskill"):
        models = B.models_of(dialect) if dialect else None
        full, small = B.build_bundle(None, models, minify=False), B.build_bundle(None, models, minify=False, small=True)
        assert "def compile_loop(" in full.text and "def _fast_loop(" in full.text
        assert "def compile_loop(" not in small.text and "def _fast_loop(" not in small.text
        assert {"compile_loop", "_fast_loop"} <= set(small.dropped["flowc.backends.vm.plan_loops"])
        assert small.size < full.size and small.modules == full.modules
    # the records the small bundles give (above, on the whole corpus) cover loops the package compiles
    compiled = 0
    for _name, data, inputs, script in corpus_programs():
        program = load(data)
        program.run(inputs, ScriptedHost(script))
        compiled += sum(1 for n in program.plan["nodes"] if "loop" in n and isinstance(n["loop"][2], plan_loops._Loop))
    assert compiled >= 3, compiled
    assert flowc_main(["bundle", str(tmp_path), "--small", "--dialect", "workflowskill"]) == 0
    assert (tmp_path / "flowc_vm.py").read_text(encoding="utf-8") == \
        B.build_bundle(None, ("sequential",), small=True).text


def test_a_small_bundle_keeps_no_row_of_the_tables_of_optional_parts(tmp_path, monkeypatch):
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(
        "BY_FEATURE = ('EXTRAS',)\n\n"
        "def _quick(x):\n    return ['quick', x]\n\n"
        "EXTRAS = {'quick': _quick}\n\n"
        "def load(x):\n    f = EXTRAS.get('quick')\n    return f(x) if f else ['slow', x]\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    for small, want in ((False, ["quick", 1]), (True, ["slow", 1])):
        built = B.build_bundle("flowc.dev.entry", small=small)
        namespace: dict = {}
        exec(compile(built.text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
        assert namespace["load"](1) == want
        assert ("_quick" in built.dropped.get("flowc.dev.entry", [])) == small
    (package / "dev" / "entry.py").write_text("BY_FEATURE = ('MISSING',)\n", encoding="utf-8")
    with pytest.raises(B.BundleError, match="BY_FEATURE names tables that are not there: MISSING"):
        B.build_bundle("flowc.dev.entry", small=True)


def test_a_name_reexported_through_another_module_is_followed(tmp_path, monkeypatch):
    package = tmp_path / "flowc"
    (package / "dev").mkdir(parents=True)
    (package / "dev" / "entry.py").write_text(
        "try:\n    from flowc.dev import a as _a\nexcept ImportError:\n    import a as _a\n\n"
        "def load(data):\n    return _a.deep(data)\n", encoding="utf-8")
    (package / "dev" / "a.py").write_text(
        "try:\n    from flowc.dev.b import deep\nexcept ImportError:\n    from b import deep\n", encoding="utf-8")
    (package / "dev" / "b.py").write_text("def deep(x):\n    return [x]\n", encoding="utf-8")
    monkeypatch.setattr(B, "PACKAGE_ROOT", package)
    built = B.build_bundle("flowc.dev.entry")
    assert built.modules == ["flowc.dev.b", "flowc.dev.a", "flowc.dev.entry"]
    namespace: dict = {}
    exec(compile(built.text, "bundle", "exec"), namespace)   # noqa: S102 - the bundle under test
    assert namespace["load"](1) == [1]
    (package / "dev" / "entry.py").write_text(
        "try:\n    from flowc.dev import a as _a\nexcept ImportError:\n    import a as _a\n\n"
        "def load(data):\n    return _a.missing(data)\n", encoding="utf-8")
    with pytest.raises(B.BundleError, match="flowc.dev.a has no top-level name missing"):
        B.build_bundle("flowc.dev.entry")


def test_every_text_of_the_bundle_is_utf8_so_it_can_be_frozen():
    """A device embeds the bundle frozen into its firmware (its bytecode in
    flash, not in the heap); MicroPython's freezer stores every string
    constant as UTF-8, so a lone surrogate anywhere would stop the build."""
    for models in (None, *(B.models_of(d) for d in DIALECTS)):
        tree = ast.parse(B.build_bundle(models=models).text)
        texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        assert texts
        for text in texts:
            text.encode("utf-8")   # raises on a lone surrogate
