#!/usr/bin/env python3
"""INFO's used_memory is kvd's heap, counted as it is allocated and freed.

kvd's executable interposes malloc and its kin (Sources/CHeapAccounting),
so INFO no longer walks glibc's free lists (tens of milliseconds of the
core loop on a fragmented heap). This checks the figure against what was
stored and freed:
(a) the binary exports its own malloc, free, realloc and calloc, and the
    counter (the counting is linked in, for glibc's own calls too);
(b) 16 values of 1 MiB raise used_memory by 16 to 20 MiB;
(c) deleting them (freed on the reclaiming thread: lazyfree_pending_objects
    falls to 0) brings it back within 1 MiB of where it was, a block freed
    on another thread than the one that allocated it counted too;
(d) 200,000 small keys raise it by their bytes at least, and their deletion
    takes four fifths of that back once the key table has shrunk.
Usage: used-memory-check.py path/to/kvd
"""
import os, subprocess, sys, tempfile, time
from persistence_data import launch, stop

KVD = sys.argv[1]
MIB = 1 << 20


def figures(client):
    info = client.info("memory")
    return info["used_memory"], info["lazyfree_pending_objects"]


def settled(client):
    """used_memory once the reclaiming thread has freed what it was given (10 s at most)."""
    deadline = time.monotonic() + 10
    while True:
        _, pending = figures(client)
        if pending == 0:
            # INFO reads used_memory before the pending count: read again, so
            # that a value freed between the two reads is not missed.
            return figures(client)[0]
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL: {pending} objects still waiting to be freed after 10 s")
        time.sleep(0.05)


def main():
    symbols = subprocess.run(["nm", "-D", "--defined-only", KVD], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if line.split()[-2:-1] == ["T"]}
    missing = {"malloc", "free", "realloc", "calloc"} - exported
    static = subprocess.run(["nm", "--defined-only", KVD], capture_output=True, text=True, check=True).stdout
    if not any(line.split()[-1:] == ["kvd_heap_allocated_bytes"] for line in static.splitlines()):
        missing.add("kvd_heap_allocated_bytes")
    if missing:
        raise SystemExit(f"FAIL: kvd does not define {sorted(missing)} (malloc and its kin exported, for glibc's "
                         "own calls): its heap is not counted (CHeapAccounting)")
    work = tempfile.mkdtemp(prefix="used-memory-")
    processes = []
    try:
        server, client, _ = launch(work, processes, "kvd", [KVD, "--save", "", "--io-threads", "0"])
        before = settled(client)
        for index in range(16):
            client.set(f"big{index}", os.urandom(MIB))
        grown = settled(client) - before
        if not 16 * MIB <= grown <= 20 * MIB:
            raise SystemExit(f"FAIL: 16 MiB stored, used_memory grew by {grown / MIB:.2f} MiB")
        client.delete(*[f"big{index}" for index in range(16)])
        left = settled(client) - before
        if abs(left) > MIB:
            raise SystemExit(f"FAIL: 16 MiB stored and deleted, used_memory {left / MIB:+.2f} MiB from before")
        pipe = client.pipeline(transaction=False)
        for index in range(200_000):
            pipe.set(f"key:{index}", "v" * 40)
            if index % 10_000 == 9_999:
                pipe.execute()
        small = settled(client) - before
        if small < 200_000 * 40:
            raise SystemExit(f"FAIL: 200,000 keys of 40 bytes, used_memory grew by {small} bytes")
        for start in range(0, 200_000, 10_000):
            client.delete(*[f"key:{index}" for index in range(start, start + 10_000)])
        # The keys' and values' blocks go at once; the key table's room for
        # them goes when the server's next tick finds it sparse and shrinks
        # it (a tenth of a second). What stays is the connection's buffers.
        deadline = time.monotonic() + 10
        while (after := settled(client) - before) > small // 5:
            if time.monotonic() > deadline:
                raise SystemExit(f"FAIL: 200,000 keys deleted, used_memory still {after} bytes above before "
                                 f"after 10 s (they had raised it by {small})")
            time.sleep(0.05)
        stop(server)
        print(f"ok: used_memory counts the heap: +{grown / MIB:.2f} MiB for 16 MiB stored, "
              f"{left / MIB:+.2f} MiB once deleted; +{small / MIB:.1f} MiB for 200,000 small keys, "
              f"{after / MIB:+.2f} MiB once deleted")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()


if __name__ == "__main__":
    main()
