"""The servers' threads import numpy and pypto one at a time (`server.threads`): two threads of a fresh server
process, one unpickling a job's answer that holds a numpy scalar (a direct import of `numpy._core.multiarray`) and
one importing numpy, started together, both finish. With a plain thread pool CPython raises `_DeadlockError` in
one of them in most such races on this machine (session 53's CI lost a record so); the race is run in several
fresh processes at once, so a regression shows on any of them."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RACES = 6

RACE = """
import asyncio, pickle, sys, threading
from server import threads

assert "numpy" not in sys.modules and "pypto" not in sys.modules, sorted(m for m in sys.modules if "numpy" in m)
BLOB = bytes.fromhex(sys.argv[1])
barrier = threading.Barrier(2, timeout=60)

def unpickle():
    barrier.wait()
    return pickle.loads(BLOB)

def import_numpy():
    barrier.wait()
    import numpy
    return numpy.__name__

async def main():
    threads.install()
    answer, name = await asyncio.gather(asyncio.to_thread(unpickle), asyncio.to_thread(import_numpy))
    print(float(answer["makespan"]), answer["lanes"].tolist(), name)  # (not reprs: they differ by numpy version)

asyncio.run(main())
"""


def test_a_fresh_servers_threads_unpickle_numpy_while_another_imports_it():
    blob = pickle.dumps({"makespan": np.float64(1.5), "lanes": np.arange(3)}).hex()
    procs = [subprocess.Popen([sys.executable, "-c", RACE, blob], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(RACES)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "1.5 [0, 1, 2] numpy", out
