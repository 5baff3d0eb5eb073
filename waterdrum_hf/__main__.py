"""``python -m waterdrum_hf``: the ``waterdrum`` command."""

import sys

from waterdrum_hf.cli import main

sys.exit(main())
