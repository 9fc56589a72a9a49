#!/usr/bin/env python3
"""bench/lib/own-time.py PERF_DATA LOOP_REGEX CALL_REGEX ITEMS HZ: where a tool's time per item
goes in the phase that makes one call, from `perf record --call-graph dwarf -F HZ` of one
process that works alone (one task).

A sample belongs to the item loop when a frame's symbol matches LOOP_REGEX. It was inside the
file system call when a kernel frame is on its stack and a frame matches CALL_REGEX; it was
the tool's own code around the call (names, buffers, clocks, bookkeeping) when no kernel frame
is. The phase is the time from the first to the last sample inside the call: own-code samples
outside it belong to other phases that share the loop and are left out. Prints one line:
  in the call N ns/item, own code M ns/item (R of the call)
where ns/item = samples / HZ / ITEMS (a sample stands for 1/HZ seconds of CPU time).
"""
import re
import subprocess
import sys

data, loop, call = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
items, hz = int(sys.argv[4]), float(sys.argv[5])
# Kernel addresses are the top half; an unwinding that ran out ends in a frame of all ones.
KERNEL, UNWOUND = 0xFFFF800000000000, 0xFFFFFFFFFFFFFFFF

script = subprocess.run(["perf", "script", "-i", data, "-F", "time,ip,sym"], capture_output=True, text=True, check=True)
calls, own = [], []
for sample in script.stdout.split("\n\n"):
    lines = sample.strip().splitlines()
    if not lines:
        continue
    when = float(lines[0].strip().rstrip(":"))
    frames = [line.split(None, 1) for line in lines[1:]]
    frames = [(int(f[0], 16), f[1] if len(f) > 1 else "") for f in frames if f and re.fullmatch("[0-9a-f]+", f[0])]
    if not any(loop.search(sym) for _, sym in frames):
        continue
    if not any(KERNEL <= ip < UNWOUND for ip, _ in frames):
        own.append(when)
    elif any(call.search(sym) for _, sym in frames):
        calls.append(when)

if not calls:
    sys.exit(f"own-time: no sample of {loop.pattern} inside {call.pattern} in {data}")
first, last = min(calls), max(calls)
own_in_phase = sum(first <= t <= last for t in own)
ns = 1e9 / hz / items
print(f"in the call {len(calls) * ns:5.0f} ns/item, own code {own_in_phase * ns:4.0f} ns/item "
      f"({own_in_phase / len(calls):.2f} of the call)")
