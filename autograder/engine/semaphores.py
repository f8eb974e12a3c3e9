"""multiprocessing's locks and shared values for workers whose /dev/shm is not their own.

Every multiprocessing Lock, Queue and Pool is built on a POSIX named semaphore, which glibc keeps as a file in
/dev/shm; shared values (multiprocessing.Value, Array) live in a file there too.  In the namespaces layer each
worker has a /dev/shm of its own (isolation.py: a folder of its private root, counted in its disk limit), so
multiprocessing works there as in Colab.  In the users and landlock layers /dev/shm is the machine's: Landlock
keeps it out of a worker's reach (it writes only its own folder), and as an ordinary user it holds the grading
user's own files, so it is never opened to a hand-in.

`install()` (in the zygote, for those layers) makes the same semaphores without a name instead.  With the start
method every Colab notebook uses ('fork', Linux's default) multiprocessing removes a semaphore's name the moment
it is made, so it is in effect an anonymous semaphore that forked children share.  Here it is made so from the
start: in shared memory that only the worker and the processes it forks can map (an anonymous mapping, never a
file), initialised by sem_init, and handed to multiprocessing through the constructor it rebuilds one with
(SemLock._rebuild).  Shared values go in the worker's own folder.  Nothing has a name, so no other hand-in can
find it and nothing is left behind when the hand-in's processes end.

The 'spawn' and 'forkserver' start methods start a new interpreter, which must open the semaphore by its name,
and multiprocessing.shared_memory names a file in /dev/shm: both are refused in those layers, with words that say
so (SPAWN_REFUSED, SHARED_MEMORY_REFUSED).

Standard library only: copied into the sandbox's folder with the zygote.
"""

import ctypes
import errno
import mmap

import _multiprocessing

SEMAPHORE_BYTES = 32     # sizeof(sem_t) on 64-bit Linux
SHARED_MEMORY_REFUSED = ("multiprocessing.shared_memory needs /dev/shm, which this grader's isolation layer does not "
                         "give a notebook: return the values from the pool's function instead, or use "
                         "multiprocessing.Array")
SPAWN_REFUSED = ("multiprocessing's 'spawn' and 'forkserver' start methods need /dev/shm, which this grader's "
                 "isolation layer does not give a notebook: use the default start method ('fork', as in Colab)")

_libc = ctypes.CDLL(None, use_errno=True)


class _SemLock:
    """What multiprocessing.synchronize calls `_multiprocessing.SemLock`: a maker of the real C type, whose
    unnamed semaphores it keeps in pages it maps itself."""

    SEM_VALUE_MAX = _multiprocessing.SemLock.SEM_VALUE_MAX
    _rebuild = _multiprocessing.SemLock._rebuild

    def __init__(self):
        # Pages of semaphores, never unmapped: a semaphore may be used as long as any object holds its address.
        self.pages = []
        self.used = mmap.PAGESIZE     # bytes given out of the last page

    def __call__(self, kind, value, maxvalue, name, unlink):
        if not unlink:
            # 'spawn' or 'forkserver': a new interpreter opens the semaphore by its name, which needs /dev/shm.
            try:
                return _multiprocessing.SemLock(kind, value, maxvalue, name, unlink)
            except FileExistsError:
                raise
            except OSError:
                raise PermissionError(errno.EACCES, SPAWN_REFUSED) from None
        return _multiprocessing.SemLock._rebuild(self._anonymous(value), kind, maxvalue, None)

    def _anonymous(self, value):
        """The address of a new process-shared semaphore holding `value`, in memory no other hand-in can map."""
        if self.used + SEMAPHORE_BYTES > mmap.PAGESIZE:
            self.pages.append(mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS))
            self.used = 0
        address = ctypes.addressof(ctypes.c_char.from_buffer(self.pages[-1], self.used))
        self.used += SEMAPHORE_BYTES
        if _libc.sem_init(ctypes.c_void_p(address), 1, ctypes.c_uint(value)) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"sem_init: {errno.errorcode.get(error, error)}")
        return address


class _Module:
    """Stands for the `_multiprocessing` module inside multiprocessing.synchronize: all of it, but SemLock."""

    def __init__(self):
        self.SemLock = _SemLock()

    def __getattr__(self, name):
        return getattr(_multiprocessing, name)


class _NoSharedMemory:
    """Stands for the `_posixshmem` module inside multiprocessing.shared_memory: named shared memory is a file in
    /dev/shm, so it is refused, in words."""

    def shm_open(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, SHARED_MEMORY_REFUSED)

    def shm_unlink(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, SHARED_MEMORY_REFUSED)


def install():
    """From now on (in this process and every worker it forks) multiprocessing never names a semaphore in
    /dev/shm, puts shared values in the worker's own folder (TMPDIR, isolation.py), and refuses named shared
    memory in words."""
    import multiprocessing.heap
    import multiprocessing.shared_memory
    import multiprocessing.synchronize

    multiprocessing.synchronize._multiprocessing = _Module()
    multiprocessing.heap.Arena._dir_candidates = []
    multiprocessing.shared_memory._posixshmem = _NoSharedMemory()
