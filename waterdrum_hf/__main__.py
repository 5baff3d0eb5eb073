"""``python -m waterdrum_hf``: the ``waterdrum`` command."""

import sys

from waterdrum_hf.scripts import main

sys.exit(main())
