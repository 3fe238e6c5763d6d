"""One module per dialect, each defining that dialect's meanings: its
:class:`~flowc.ir.specs.DialectProfile` (``PROFILE``), ``OPERATORS``,
``FUNCTIONS``, ``OPERATIONS``, ``TRUTHINESS`` and ``STRINGIFY``. Operations
more than one dialect lowers to live in :mod:`.common`.

A dialect module imports only :mod:`flowc.ir.specs`; none changes another
module's tables. :mod:`flowc.ir.semantics` and :mod:`flowc.ir.ops` build
the combined tables from them.
"""
