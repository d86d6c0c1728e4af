import sys

from pipelines.cli import main
from pipelines.resources.gc_tuning import skip_collection_at_exit

sys.exit(skip_collection_at_exit(main()))
