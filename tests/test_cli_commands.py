"""The command line's layout: one module per command, each with its
``add_parser`` and ``run``; every exit status in ``flowc.cli.exits``; the
bytecode commands (``flowc exec``, ``flowc bundle``) in the one parser."""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from flowc import cli
from flowc.cli import app, exits

ROOT = Path(cli.__file__).resolve().parents[1]
NOT_PACKAGE = {"tests", "benchmarks", "build", "dist", "docs", "examples", "node_modules"}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_each_command_is_one_module_of_the_cli_package():
    commands = _subcommands(cli.build_parser())
    assert list(commands) == [m.__name__.rsplit(".", 1)[1] for m in app.COMMANDS]
    assert list(commands)[:12] == ["check", "eval", "compile", "run", "resume", "runs", "disasm", "graph",
                                   "translate", "schema", "explain", "fuzz"]   # the order --help has always had
    for name, sub in commands.items():
        func = sub.get_default("func")
        if name == "runs":   # list and show: the subcommands of its own parser
            func = _subcommands(sub)["list"].get_default("func")
        assert func.__module__ == f"flowc.cli.{name}", name


def _exit_constants(path: Path) -> list[str]:
    """Module-level names bound to exit statuses (``EXIT_X = 1``, ``EXIT_A, EXIT_B = 0, 1``)."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                found += [n.id for n in names if isinstance(n, ast.Name) and n.id.startswith("EXIT_")
                          and not n.id.endswith("STATUSES")]
    return found


def test_exit_statuses_are_defined_in_one_place():
    defining = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in NOT_PACKAGE or any(p.startswith(".") for p in rel.parts):
            continue
        names = _exit_constants(path)
        if names:
            defining[rel.as_posix()] = names
    assert list(defining) == ["cli/exits.py"], defining
    assert (exits.EXIT_OK, exits.EXIT_FINDINGS, exits.EXIT_USAGE, exits.EXIT_INTERRUPTED) == (0, 1, 2, 130)


def test_python_m_flowc_vm_is_the_bundle_and_exec_commands(tmp_path, capsys):
    """``python -m flowc.vm`` names the VM's two commands and is nothing else:
    ``--bundle DIR`` writes flowc bundle's file, ``PROGRAM`` is flowc exec."""
    vm_source = (ROOT / "vm.py").read_text(encoding="utf-8")
    assert "flowc.backends" not in vm_source   # the VM itself is flowc.backends.vm
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent)}
    done = subprocess.run([sys.executable, "-m", "flowc.vm", "--bundle", str(tmp_path / "a"), "--dialect", "aevatar"],
                          check=False, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert cli.main(["bundle", str(tmp_path / "b"), "--dialect", "aevatar"]) == 0
    assert (tmp_path / "a" / "flowc_vm.py").read_bytes() == (tmp_path / "b" / "flowc_vm.py").read_bytes()
    triage = ROOT / "examples" / "triage"
    program = tmp_path / "triage.wfb"
    assert cli.main(["compile", str(triage / "SKILL.md"), "--target", "bytecode", "-o", str(program)]) == 0
    files = ["--inputs", str(triage / "inputs.json"), "--host", str(triage / "host.json")]
    capsys.readouterr()
    assert cli.main(["exec", str(program), *files]) == 0
    executed = capsys.readouterr().out
    done = subprocess.run([sys.executable, "-m", "flowc.vm", str(program), *files],
                          check=False, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, executed)


def test_exec_runs_a_compiled_program_as_run_does(tmp_path, capsys):
    triage = ROOT / "examples" / "triage"
    program = tmp_path / "triage.wfb"
    assert cli.main(["compile", str(triage / "SKILL.md"), "--target", "bytecode", "-o", str(program)]) == 0
    files = ["--inputs", str(triage / "inputs.json"), "--host", str(triage / "host.json")]
    capsys.readouterr()
    assert cli.main(["exec", str(program), *files]) == 0
    executed = json.loads(capsys.readouterr().out)
    assert cli.main(["run", str(triage / "SKILL.md"), *files, "--backend", "vm", "--json"]) == 0
    assert executed == json.loads(capsys.readouterr().out)
    assert executed["status"] == "success"
    assert cli.main(["exec", str(program), *files, "--max-host-calls", "1"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["error"]["message"] == "fuel exhausted: more than 1 host calls"


def test_exec_refuses_what_is_not_a_program(tmp_path, capsys):
    not_bytecode = tmp_path / "x.wfb"
    not_bytecode.write_bytes(b"WFBC not a program")
    assert cli.main(["exec", str(not_bytecode)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("flowc: error: ") and err.count("\n") == 1
