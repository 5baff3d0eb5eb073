"""The marks of the tests that run vLLM (``bash dev.sh vllm``): the ``vllm`` marker and the
warnings of vLLM's environment that are not ours to fix."""

from __future__ import annotations

import pytest

VLLM_MARKS = [
    pytest.mark.vllm,
    # vLLM's imports: torch's inductor imports torch.utils.mkldnn (script_method). The
    # report's plots: matplotlib's cbook takes math.isfinite of arrays, which the numpy vLLM
    # pins (2.3) warns about (2.4 raises, and matplotlib catches that).
    pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Conversion of an array with ndim > 0:DeprecationWarning"),
    # vLLM's engine client leaves its zmq contexts to the garbage collector, even after
    # VLLMEngine.close() has shut the engine down.
    pytest.mark.filterwarnings("ignore:Unclosed context:ResourceWarning"),
]
