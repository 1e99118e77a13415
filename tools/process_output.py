"""Reading a child's output as it comes (a pipe, or a pseudo-terminal's
master side), for the checks that watch redis-cli: wait for what is
expected instead of sleeping a fixed time that a loaded machine can
outlast."""
import os
import select
import time


def read_until(fd, done, seconds=10, on_chunk=None):
    """What arrived on `fd` from here until `done(text)` holds (text: all
    of it so far, decoded), the writer closed it, or `seconds` passed.
    `on_chunk(bytes)`, if given, sees each chunk as it arrives (to answer a
    terminal's queries). Reads the descriptor itself, so never mix it with
    a buffered reader of the same pipe."""
    data = b""
    deadline = time.monotonic() + seconds
    while not done(data.decode(errors="replace")) and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # a pseudo-terminal whose child has exited
            break
        if not chunk:
            break
        data += chunk
        if on_chunk:
            on_chunk(chunk)
    return data.decode(errors="replace")
