"""Reading a child process's output as it comes, for the checks that watch
`redis-cli MONITOR` or `SUBSCRIBE`: wait for what is expected instead of
sleeping a fixed time that a loaded machine can outlast."""
import os
import select
import time


def read_until(process, done, seconds=10):
    """What `process` printed on its stdout pipe from here until
    `done(text)` holds, it closed the pipe, or `seconds` passed. Reads the
    descriptor itself, so never mix it with `process.stdout.read`."""
    fd = process.stdout.fileno()
    text = ""
    deadline = time.monotonic() + seconds
    while not done(text) and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        text += chunk.decode(errors="replace")
    return text
