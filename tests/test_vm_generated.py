"""Property: on generated valid workflows, the VM and the Python backend
give identical run records with the same scripted host.

The workflows, inputs and host scripts come from the public strategies
(flowc.testing.strategies): every step kind, `each` with delays, retries,
error policies, guards, branches, declared output types checked at run
time, and inputs that are sometimes of the wrong type; host answers
include tool errors, host failures and sequences of answers.
"""

from __future__ import annotations

import json

import pytest
from flowc.backends.python import compile_workflow as python_compile
from flowc.backends.python import load_module
from flowc.backends.vm import compile_workflow, load
from flowc.host import ScriptedHost
from flowc.testing import strategies as wst
from flowc.testing.properties import vm_unsupported
from hypothesis import HealthCheck, given, settings


@pytest.mark.parametrize("dialect", wst.dialects())
def test_vm_and_python_backend_agree(dialect):
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(wst.runnable_workflows(dialect))
    def agree(case):
        wf = case.workflow()
        reason = vm_unsupported(wf)
        if reason is not None:
            pytest.skip(reason)
        want = load_module(python_compile(wf)).run(case.inputs, ScriptedHost(case.host_script))
        got = load(compile_workflow(wf)).run(case.inputs, ScriptedHost(case.host_script))
        assert got == want, case.text
        assert json.dumps(got, default=repr) == json.dumps(want, default=repr)

    agree()
