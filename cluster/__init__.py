"""Batch runs, fuzz campaigns and checks on a Dask distributed cluster.

flowc grows no cluster of its own: ``--workers N`` starts a local Dask
cluster of N worker processes for one command, ``--scheduler ADDR`` uses a
running one. ``distributed`` is an optional extra (``pip install
'flowc[distributed]'``); :mod:`flowc.cluster.engine` is the only module
that imports it at the top, so everything else here stays importable
without it (``flowc run --batch`` without a cluster runs in-process).
"""
