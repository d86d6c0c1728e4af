"""Where a run's HTML report lives: one file per run under the pipeline root."""

from __future__ import annotations

import os
import re

__all__ = ["report_path", "REPORTS_DIR"]

REPORTS_DIR = "reports"


def report_path(root: str, run_id: str) -> str:
    """`<root>/reports/<run id>.html`, the run id made safe for a file name (`:` and other marks become `-`).

    Args:
        root: the pipeline root (`ResolvedSpec.root`).
        run_id: the run's id (`RunResult.run_id`, an ISO timestamp).

    Returns:
        The report's path; the file exists once the run has written it.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", run_id)
    return os.path.join(root, REPORTS_DIR, f"{safe}.html")
