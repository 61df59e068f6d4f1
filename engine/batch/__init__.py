"""``engine batch``: many questions over many maps, on this machine or a Dask cluster.

A job file holds one question a line, as the HTTP API of ``engine serve`` takes
it (with a ``"command"`` and an ``"id"``), or Moving AI scenario files;
`run_batch` answers them on ``dask.distributed`` workers, each map's grids
built once per worker, and streams a line of results per job.  Needs the
``distributed`` extra: ``pip install 'tabletop-movement[distributed]'``.
"""

from __future__ import annotations

from .run import Summary, run_batch

__all__ = ["Summary", "run_batch"]
