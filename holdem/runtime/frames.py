"""Length-prefixed frames from workers to the main process, read into reusable buffers.

``multiprocessing.Connection.recv_bytes`` reads a message in chunks, copies them into a
``BytesIO`` and then into a new ``bytes``: receiving a 6.6 MB delta cost the main process 8-15
ms of CPU on the 2-core machine, more than merging it. :class:`Receiver` reads a frame straight
into a buffer it keeps (one copy, from the kernel; about 1 ms for the same delta), and hands out
a ``memoryview`` of it that stays valid until the buffer is used again. Workers write frames with
:func:`send`: an 8-byte little-endian length, then the payload. Requests from the main process to
workers are small and still use ``Connection.send_bytes``.
"""

import io
import os
import select
import struct

_HEADER = struct.Struct("<Q")
MAX_FRAME = 1 << 36              # a length beyond this is a corrupt stream, not a delta


class FrameStalled(OSError):
    """The writer sent no byte for the reader's ``stall`` seconds in the middle of a frame (a
    hung or stopped worker): the stream cannot be resumed, so its writer must be replaced.
    Without a limit the reader would wait as long as the writer stays stopped."""


def send(fd, payload):
    """Write ``payload`` (bytes-like) to ``fd`` as one frame (blocking until all is written).
    Length and payload go in one system call where they fit: written apart, a worker that lost
    its core between the two left the main process waiting for the rest of the frame, which
    made most of a 19-byte note's flush-to-merge delay on the 2-core machine (hunl_default, 2
    workers: about 5 ms of 5.5)."""
    view = memoryview(payload).cast("B")
    header = _HEADER.pack(len(view))
    sent = os.writev(fd, [header, view])
    if sent < len(header):
        _write_all(fd, memoryview(header)[sent:])
        sent = len(header)
    _write_all(fd, view[sent - len(header):])


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Receiver:
    """Reads frames from file descriptors into a few reusable buffers."""

    def __init__(self):
        self._buffers = []
        self._header = bytearray(_HEADER.size)

    def read(self, fd, slot=0, stall=None):
        """Block until the next frame of ``fd`` is read into buffer ``slot``; return a
        memoryview of it, valid until ``slot`` is read into again. Raises ``EOFError`` when the
        other end closed (before or within the frame), ``OSError`` on a corrupt length and
        :class:`FrameStalled` when no byte came for ``stall`` seconds (None: no limit)."""
        while len(self._buffers) <= slot:
            self._buffers.append(bytearray(1 << 16))
        stream = io.FileIO(fd, closefd=False)
        _read_exactly(stream, memoryview(self._header), stall)
        n = frame_length(self._header)
        buf = self._buffers[slot]
        if len(buf) < n:
            buf = self._buffers[slot] = bytearray(max(n, len(buf) * 5 // 4))
        view = memoryview(buf)[:n]
        _read_exactly(stream, view, stall)
        return view


HEADER_SIZE = _HEADER.size


def frame_length(header):
    """The length a frame's 8-byte header gives; raises ``OSError`` for a corrupt one."""
    (n,) = _HEADER.unpack(header)
    if n > MAX_FRAME:
        raise OSError(f"frame of {n} bytes: corrupt stream")
    return n


def read_length(fd, stall=None):
    """Block until the next frame of ``fd`` begins; its length in bytes (its body follows:
    :func:`read_body`). Raises as :meth:`Receiver.read`."""
    header = bytearray(_HEADER.size)
    _read_exactly(io.FileIO(fd, closefd=False), memoryview(header), stall)
    return frame_length(header)


def read_body(fd, view, stall=None):
    """Read the body of the frame :func:`read_length` began into ``view`` (a writable
    memoryview of its length). Raises as :meth:`Receiver.read`."""
    _read_exactly(io.FileIO(fd, closefd=False), view, stall)


def read_into(fd, reserve, stall=None):
    """Block until the next frame of ``fd`` is read into ``reserve(n)`` (a writable memoryview
    of n bytes, e.g. :meth:`holdem.delta.records.RecordArena.reserve`); returns it. Raises as
    :meth:`Receiver.read`."""
    view = reserve(read_length(fd, stall))
    read_body(fd, view, stall)
    return view


def _read_exactly(stream, view, stall=None):
    """Fill ``view`` from ``stream``; with ``stall`` (seconds), wait at most that long for each
    next byte (the caller knows the frame has begun: waiting without a limit would let a
    stopped writer stop the reader too)."""
    got = 0
    poller = None
    if stall is not None:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLIN)
    while got < len(view):
        if poller is not None and not poller.poll(max(0, int(stall * 1000))):
            raise FrameStalled(f"no byte for {stall:g} s in the middle of a frame ({got:,} of "
                               f"{len(view):,} bytes read)")
        n = stream.readinto(view[got:])
        if not n:
            raise EOFError("the other end closed the stream")
        got += n
