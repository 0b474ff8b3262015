"""Progress output for training runs (TensorBoard scalars join here with the parallel runtime).

On a terminal the progress line is redrawn in place; otherwise one line is printed per interval,
so logs stay readable. Everything goes to stderr: stdout carries only the final ``done:`` line.
"""

import sys
import time
from contextlib import contextmanager


def format_bytes(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} TB"


def format_seconds(s):
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h:d}:{m:02d}:{sec:02d}" if h else f"{m:d}:{sec:02d}"


def first_rate(iterations, start_iterations, seconds):
    """Iterations per second of an invocation's first report: only the iterations it ran (a
    resumed run starts at ``start_iterations``, not 0)."""
    return (iterations - start_iterations) / seconds if seconds > 0 else 0.0


class Progress:
    """Prints iterations, it/s, decision-node visits per iteration, infosets, store size (what
    the caller passes: a run passes the bytes its infosets take, the same after a resume) and
    time left every ``interval`` seconds.

    ``start_iters``: the iteration count this invocation started from (a resumed run's). The
    visits per iteration are those since the previous line: iterations per second times
    visits per iteration is the work rate to compare over a run, since an iteration's work
    changes as the strategy does."""

    def __init__(self, interval=5.0, stream=None, total_iters=None, time_budget=None,
                 enabled=True, start_iters=0):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = float(interval)
        self.total_iters = total_iters
        self.time_budget = time_budget
        self.enabled = enabled
        self.start_iters = start_iters
        self.is_tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = time.monotonic()
        self._last_iters = None
        self._last_clock = 0.0
        self._last_visits = (start_iters, 0)     # (iterations, visits) at the previous line

    def _line(self, iterations, elapsed, rate, infosets, store_bytes, per_iteration=None):
        left = []
        if self.time_budget is not None:
            left.append(max(0.0, self.time_budget - elapsed))
        if self.total_iters is not None and rate > 0:
            left.append(max(0, self.total_iters - iterations) / rate)
        parts = []
        if self.total_iters:
            frac = min(1.0, iterations / self.total_iters)
            filled = int(frac * 20)
            parts.append("[" + "#" * filled + "." * (20 - filled) + f"] {100 * frac:5.1f}%")
        elif self.time_budget:
            frac = min(1.0, elapsed / self.time_budget)
            filled = int(frac * 20)
            parts.append("[" + "#" * filled + "." * (20 - filled) + f"] {100 * frac:5.1f}%")
        parts.append(f"iterations={iterations:,}")
        parts.append(f"it/s={rate:,.0f}")
        if per_iteration is not None:
            parts.append(f"visits/it={per_iteration:,.1f}")
        parts.append(f"infosets={infosets:,}")
        parts.append(f"store={format_bytes(store_bytes)}")
        if left:
            parts.append(f"left={format_seconds(min(left))}")
        return " ".join(parts)

    def update(self, iterations, elapsed, infosets, store_bytes, force=False, visits=None,
               clock=None):
        """Report if ``interval`` seconds passed since the last report (or ``force``).
        ``elapsed``: seconds against the time budget; ``clock``: seconds spent training, which
        it/s is measured over (default ``elapsed``); ``visits``: decision-node visits this
        invocation has merged (None: not counted)."""
        now = time.monotonic()
        if not self.enabled or (not force and now - self._last < self.interval):
            return
        if force and self._last_iters == iterations:
            return                  # this count was just reported (a second line would say 0 it/s)
        clock = elapsed if clock is None else clock
        if self._last_iters is None:
            rate = first_rate(iterations, self.start_iters, clock)
        else:
            rate = (iterations - self._last_iters) / max(1e-9, clock - self._last_clock)
        self._last, self._last_iters, self._last_clock = now, iterations, clock
        per_iteration = None
        if visits is not None and iterations > self._last_visits[0]:
            per_iteration = (visits - self._last_visits[1]) / (iterations - self._last_visits[0])
            self._last_visits = (iterations, visits)
        line = self._line(iterations, elapsed, rate, infosets, store_bytes, per_iteration)
        if self.is_tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self):
        if self.enabled and self.is_tty:
            self.stream.write("\n")
            self.stream.flush()


def log(message):
    """A one-line status message on stderr."""
    print(message, file=sys.stderr, flush=True)


@contextmanager
def compile_notice(seconds, enabled=True, stream=None):
    """Announce a first-use compilation: within the block, the first kernel numba has to
    compile (its cache is cold: the first run, or kernels changed) prints ``compiling kernels
    (first run, about N s)...`` on stderr (or ``stream``), once. Nothing is printed when every
    kernel loads from the cache, or with ``enabled`` False. ``seconds`` is the caller's estimate
    of the whole compilation. Yields an object whose ``announced`` says whether it printed.

    numba reports every compilation its cache could not serve as a ``numba:compile`` event
    (its documented event API); loading from the cache sends none."""
    from numba.core import event

    class FirstCompile(event.Listener):
        announced = False

        def on_start(self, _event):
            if not self.announced:
                self.announced = True
                print(f"compiling kernels (first run, about {seconds:.0f} s)...",
                      file=stream or sys.stderr, flush=True)

        def on_end(self, _event):
            pass

    listener = FirstCompile()
    if not enabled:
        yield listener
        return
    with event.install_listener("numba:compile", listener):
        yield listener


class TensorBoardWriter:
    """Scalars and text in TensorBoard event files under ``logdir`` (tensorboard package only).

    Steps are cumulative iterations, so a resumed run continues its curves.
    """

    def __init__(self, logdir):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._writer = EventFileWriter(str(logdir))

    def scalars(self, step, values):
        from tensorboard.compat.proto import event_pb2, summary_pb2

        summary = summary_pb2.Summary(value=[
            summary_pb2.Summary.Value(tag=tag, simple_value=float(v)) for tag, v in values.items()])
        self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=int(step),
                                               summary=summary))

    def text(self, tag, text, step=0):
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.compat.proto.tensor_pb2 import TensorProto
        from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

        tensor = TensorProto(dtype=7, string_val=[text.encode()],          # DT_STRING
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, metadata=metadata, tensor=tensor)])
        self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=int(step),
                                               summary=summary))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()


class WindowMean:
    """Mean of a per-iteration quantity over the last ``window`` iterations, fed per batch as
    (sum, count). Memory is bounded by ``window`` entries."""

    def __init__(self, window=10_000):
        from collections import deque

        self.window = int(window)
        self._parts = deque()
        self._sum = 0.0
        self._count = 0

    def add(self, total, count):
        if count <= 0:
            return
        self._parts.append((float(total), int(count)))
        self._sum += total
        self._count += count
        while self._parts and (self._count - self._parts[0][1] >= self.window
                               or len(self._parts) > self.window):
            t, c = self._parts.popleft()
            self._sum -= t
            self._count -= c

    def mean(self):
        return self._sum / self._count if self._count else float("nan")
