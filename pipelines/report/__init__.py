"""The self-contained HTML report of a pipeline run: `<root>/reports/<run id>.html`.

`RunReporter` is the run hook that writes it (see `pipelines.api`); `write_report` writes one
from what a runner knows; `report_path` says where it goes.
"""

from pipelines.report.paths import report_path
from pipelines.report.reporter import RunReporter, write_report

__all__ = ["RunReporter", "write_report", "report_path"]
