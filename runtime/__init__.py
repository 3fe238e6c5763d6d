"""flowc's execution core: a sans-I/O kernel and the drivers that feed it.

- :mod:`flowc.runtime.kernel`: requests (``Call``, ``Sleep``), answers
  (``Result``, ``Error``, ``Thrown``, ``TimedOut``) and the task kernel;
- :mod:`flowc.runtime.dag`: dataflow workflows (the instruction dialect) as
  kernel tasks;
- :mod:`flowc.runtime.drivers`: the sync and virtual-time drivers
  (WorkflowSkill modules reach the kernel through
  :mod:`flowc.backends.python.runtime`);
- :mod:`flowc.runtime.aio`: the asyncio driver.

See docs/runtime.md. Importing this package imports nothing else.
"""
