"""malleable_rt.py: the runtime's C ABI (libmalleable_rt.so) for Python, by ctypes.

The library is where MALLEABLE_RT_LIB names it, else beside this file,
else wherever the loader finds it. Each call raises MallError with the runtime's reason when it
fails. The calls are malleable_rt.h's; see docs/malleable-jobs.md.
"""

import ctypes
import os

NONE, EXPAND, SHRINK, RECOVER = 0, 1, 2, 3


class MallError(RuntimeError):
    """A runtime call failed; the message is the runtime's reason."""


def _library():
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmalleable_rt.so")
    # Else the loader's own search (a site installs it in the library path).
    path = os.environ.get("MALLEABLE_RT_LIB") or (beside if os.path.exists(beside) else "libmalleable_rt.so")
    lib = ctypes.CDLL(path)
    lib.mall_last_error.restype = ctypes.c_char_p
    return lib


_lib = _library()


def _check(rc):
    if rc != 0:
        raise MallError(_lib.mall_last_error().decode(errors="replace"))


class Runtime:
    """One worker's runtime: mall_init on creation."""

    def __init__(self):
        self._rt = ctypes.c_void_p()
        joining = ctypes.c_uint64()
        _check(_lib.mall_init(ctypes.byref(self._rt), ctypes.byref(joining)))
        self.joining = joining.value

    def _u32(self, fn):
        v = ctypes.c_uint32()
        _check(fn(self._rt, ctypes.byref(v)))
        return v.value

    def rank(self):
        return self._u32(_lib.mall_rank)

    def size(self):
        return self._u32(_lib.mall_size)

    def restarts(self):
        """Whether mall-run runs this application in restart mode."""
        v = ctypes.c_int()
        _check(_lib.mall_restarts(self._rt, ctypes.byref(v)))
        return v.value == 1

    def probe(self):
        """(action, workers after it): NONE, EXPAND, SHRINK or RECOVER."""
        action, size = ctypes.c_int(), ctypes.c_uint32()
        _check(_lib.mall_probe(self._rt, ctypes.byref(action), ctypes.byref(size)))
        return action.value, size.value

    def begin(self):
        """(new rank, new size, leaving)."""
        rank, size, leaving = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_int()
        _check(_lib.mall_begin(self._rt, ctypes.byref(rank), ctypes.byref(size), ctypes.byref(leaving)))
        return rank.value, size.value, leaving.value == 1

    def redistribute(self, data, item_size):
        """This worker's share of every worker's items (bytes)."""
        out, count = ctypes.c_void_p(), ctypes.c_size_t()
        _check(_lib.mall_redistribute(self._rt, data, ctypes.c_size_t(item_size),
                                      ctypes.c_size_t(len(data) // item_size),
                                      ctypes.byref(out), ctypes.byref(count)))
        try:
            return ctypes.string_at(out, count.value * item_size)
        finally:
            _lib.mall_free(out)

    def restart_iteration(self):
        """The handed-out checkpoint's iteration, or None."""
        it, restarted = ctypes.c_uint64(), ctypes.c_int()
        _check(_lib.mall_restart_iteration(self._rt, ctypes.byref(it), ctypes.byref(restarted)))
        return it.value if restarted.value else None

    def checkpoint(self, iteration, data, item_size):
        _check(_lib.mall_checkpoint(self._rt, ctypes.c_uint64(iteration), data, ctypes.c_size_t(item_size),
                                    ctypes.c_size_t(len(data) // item_size)))

    def commit(self):
        _check(_lib.mall_commit(self._rt))

    def report_measured(self, iterations):
        _check(_lib.mall_report_measured(self._rt, ctypes.c_uint32(iterations)))

    def finish(self):
        """This worker is done (it has finished, or it leaves)."""
        _check(_lib.mall_finish(self._rt))
