# Holds files' pages mapped into this process (read-only, shared, populated) until its standard
# input closes: mapped page cache is what a proactive-reclaim scheme that takes only unmapped
# pages (this machines' DAMON `pageout`, bench/lib/io.ts) leaves alone, while the kernel may still
# reclaim it under memory pressure. Reads one path per line up to an empty line, maps each whole
# file (a file that is empty or gone is skipped), prints "held <bytes> <files>", then waits.
# Used by bench/lib/hold-pages.ts; Python because Node.js has no mmap.
import mmap
import os
import sys

maps = []
held = 0
for line in sys.stdin:
    path = line.rstrip('\n')
    if not path:
        break
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        continue
    try:
        size = os.fstat(fd).st_size
        if size:
            maps.append(mmap.mmap(fd, size, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ))
            held += size
    finally:
        os.close(fd)
print(f'held {held} {len(maps)}', flush=True)
sys.stdin.read()
