"""A pytest plugin for the gate's runs: tqdm's lock, safe for the children mutmut forks.

mutmut runs the tests once in its own process, then forks one child per mutant. tqdm guards
its bars with a multiprocessing lock, a semaphore made at the first bar and inherited by every
child forked after it: a child that mutmut's timeout kills while it holds the lock (inside a
bar's refresh) leaves it held for good, and every later child then blocks at its first bar
until its own timeout. Every mutant whose tests draw a bar read "timeout" (counted as killed)
from then on: seen as mutants of ``_details`` and ``query_means`` each waiting 80 s on a
semaphore. A thread lock is all tqdm needs within one process, and fork copies it rather than
sharing it.
"""

from __future__ import annotations

import threading

from tqdm import tqdm

tqdm.set_lock(threading.RLock())
