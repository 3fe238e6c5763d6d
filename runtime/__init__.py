"""flowc's execution core: everything a run needs, and nothing else of flowc.

Generated Python modules and the VM import this package; it imports no
other flowc package (tests/test_layering.py checks it).

- the kernel: :mod:`~flowc.runtime.kernel` (requests ``Call``, ``Sleep``;
  answers ``Result``, ``Error``, ``Thrown``, ``TimedOut``; the task
  kernel), :mod:`~flowc.runtime.fuel` (the budgets),
  :mod:`~flowc.runtime.edges` (a plan's edges by kind);
- the drivers: :mod:`~flowc.runtime.drivers` (sync, virtual time),
  :mod:`~flowc.runtime.aio` (asyncio);
- one scheduler per scheduling model, each a kernel task:
  :mod:`~flowc.runtime.sequence_run` (sequential: WorkflowSkill),
  :mod:`~flowc.runtime.routing_run` (aevatar's step loop),
  :mod:`~flowc.runtime.dataflow_run` (dataflow: the instruction dialect);
- the dialects' values: :mod:`~flowc.runtime.wfs`,
  :mod:`~flowc.runtime.cel`, :mod:`~flowc.runtime.aevatar_text`, with
  :mod:`~flowc.runtime.nfa` (regular expressions in linear time) and
  :mod:`~flowc.runtime.json_text` (CPython's JSON text on any Python).

All but ``aio`` are standard library only and run on MicroPython. See
docs/runtime.md. Importing this package imports nothing else.
"""
