"""multiprocessing in every isolation layer (issue 41): what Colab runs works, and what a layer cannot allow says so.

In the namespaces layer each worker has a /dev/shm of its own; in users and landlock multiprocessing's semaphores
have no name (engine/semaphores.py).  Either way a Pool, a Queue, a Lock and a shared Value work with the start
method every Colab notebook uses ('fork'), and nothing of one hand-in's is left where the next could find it.
Where a layer shares the machine's /dev/shm, what needs a name there ('spawn', multiprocessing.shared_memory) is
refused in words the student reads.  Run as root (as CI does), each layer in-process; the ordinary user and root
without CAP_SYS_ADMIN grade the Pool hand-in in tests/engine/test_isolation_layers.py.
"""

import os
import tempfile

import pytest

from autograder.core.calls import parse_call
from autograder.engine import Call, runner
from autograder.engine.sandbox import Sandbox
from autograder.engine.semaphores import SHARED_MEMORY_REFUSED, SPAWN_REFUSED

pytestmark = pytest.mark.slow

NOTEBOOK = '''
import multiprocessing, os

def _square(x):
    return x * x

def pool():
    with multiprocessing.Pool() as workers:
        return sum(workers.map(_square, range(100)))

def _add(total, lock, n):
    for _ in range(n):
        with lock:
            total.value += 1

def shared():
    total, lock = multiprocessing.Value("i", 0, lock=False), multiprocessing.Lock()
    queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_add, args=(total, lock, 500)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    queue.put(total.value)
    return queue.get()

def leave_a_file():
    with open("/dev/shm/left-by-" + TOKEN, "w") as handle:
        handle.write("x")
    return True

def spawned():
    return multiprocessing.get_context("spawn").Lock() is not None

def named():
    from multiprocessing import shared_memory
    block = shared_memory.SharedMemory(create=True, size=64)
    block.close()
    block.unlink()
    return True
'''


def _run(layer, token, *calls):
    folder = tempfile.mkdtemp(prefix="autograder-mp-")
    os.chmod(folder, 0o755)      # a worker's own user id must reach the sandbox's folder
    with Sandbox(workdir=folder, isolation=layer) as sandbox:
        encoded = [Call.of(parse_call(call).encoded()) for call in calls]
        return runner.run(sandbox, 0, [f"TOKEN = {token!r}", NOTEBOOK], encoded, [10.0] * len(calls), 20, 120)


@pytest.mark.skipif(os.geteuid() != 0, reason="the users layer, and landlock with a user id per slot, need root")
@pytest.mark.parametrize("layer", ["namespaces", "users", "landlock"])
def test_a_pool_a_queue_a_lock_and_a_shared_value_work_and_what_needs_a_name_says_why(layer, tmp_path):
    token = tmp_path.name
    outcome = _run(layer, token, "pool()", "shared()", "leave_a_file()", "spawned()", "named()")
    if any("cannot read Python's own files" in (c.message or "") for c in outcome.calls):
        pytest.skip("Python is installed where other users cannot read it (.ci/run makes it readable)")
    pool, shared, left, spawned, named = outcome.calls
    assert (pool.status, pool.value) == ("ok", 328350), pool
    assert (shared.status, shared.value) == ("ok", 1000), shared
    assert not os.path.exists(f"/dev/shm/left-by-{token}")     # never the machine's /dev/shm
    if layer == "namespaces":
        # Its own /dev/shm, as in Colab: named semaphores and shared memory work, and end with the hand-in.
        assert left.status == "ok" and spawned.status == "ok" and named.status == "ok", (left, spawned, named)
    else:
        assert left.status == "error"
        assert spawned.status == "error" and SPAWN_REFUSED in spawned.message, spawned
        assert named.status == "error" and SHARED_MEMORY_REFUSED in named.message, named
