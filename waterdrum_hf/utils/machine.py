"""The machine a run's results were measured on, as a results file records it."""

from __future__ import annotations

import os
import platform
from typing import Any


def machine_record() -> dict[str, Any]:
    """This machine's architecture and CPU core count."""
    return {"machine": platform.machine(), "cpu_count": os.cpu_count() or 1}
