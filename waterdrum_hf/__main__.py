"""``python -m waterdrum_hf``: the ``waterdrum`` command."""

import sys

from .cli import main

sys.exit(main())
