"""Source text for test applications that act below Python's audit hooks, through libc.

The child that imports a tree refuses writes, programs and sockets through an audit hook
(``exampleguard/_adapters/_guard.py``); calls made through ``ctypes`` straight into libc are
among what such a hook cannot see. Tests of what outlives an import (forked children, daemons,
helper programs) use these to stay meaningful: they show the child's process handling holds
even where the guard is bypassed.
"""

UNGUARDED = '''
import ctypes, os

_libc = ctypes.CDLL(None, use_errno=True)


def fork():
    """fork(2), unseen by audit hooks."""
    return _libc.fork()


def write_file(name, text):
    """Create ``name`` with ``text``, unseen by audit hooks."""
    data = text.encode()
    fd = _libc.open(name.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    _libc.write(fd, data, len(data))
    _libc.close(fd)


def spawn(*argv):
    """Start ``argv`` in a child process and return its pid, unseen by audit hooks."""
    pid = fork()
    if pid == 0:
        words = [word.encode() for word in argv]
        array = (ctypes.c_char_p * (len(words) + 1))(*words, None)
        _libc.execvp(words[0], array)
        os._exit(127)
    return pid
'''
