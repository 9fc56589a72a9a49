"""inputs.py KIND N FILE [DIR]: writes an input of size N for bench/input-scale, as the tools
write it (one job, target or study per unit of N, so that the input's size is linear in N).

  fio N FILE        fio --output-format=json: N jobs of one write each, 8 global options
  fio-plus N FILE   the same as json+: every job's write has 64 completion-latency bins
  campaign N FILE DIR
                    a campaign file of N targets (directories made under DIR) and one run
                    study of one client count on the null engine: N points
"""

import os
import sys


def fio(n, bins):
    head = ('{"fio version": "fio-3.33", "timestamp": 1764000000,\n'
            ' "global options": {"ioengine": "libaio", "direct": "1", "iodepth": "16", "size": "1g",\n'
            '   "runtime": "60", "time_based": "1", "group_reporting": "0", "directory": "/scratch"},\n'
            ' "jobs": [\n')
    jobs = []
    for j in range(n):
        latency = '"N": 64, "min": 1000, "max": 64000, "mean": 32500.0'
        if bins:
            latency += ', "bins": {' + ", ".join(f'"{1000 * (b + 1)}": 1' for b in range(64)) + "}"
        jobs.append(
            f'  {{"jobname": "job{j}", "hostname": "node{j % 16}",\n'
            f'   "job options": {{"name": "job{j}", "rw": "randwrite", "bs": "4k"}},\n'
            '   "read": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0},\n'
            '   "write": {"io_bytes": 262144, "bw_bytes": 4369066, "bw": 4266, "iops": 1066.6,\n'
            f'     "runtime": 60, "total_ios": 64, "clat_ns": {{{latency}}}}}}}'
        )
    return head + ",\n".join(jobs) + "\n]}\n"


def campaign(n, where):
    parts = ['[campaign]\nname = "input-scale"\nrepetitions = 1\n']
    for t in range(n):
        d = os.path.join(where, f"t{t}")
        os.makedirs(d, exist_ok=True)
        parts.append(f'\n[[target]]\nlabel = "t{t}"\ndir = "{d}"\n')
    parts.append('\n[[study]]\nname = "seq"\nkind = "run"\nengine = "null"\ntransfer = "64k"\nblock = "1m"\nclients = "1"\n')
    return "".join(parts)


def main():
    kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if kind == "fio":
        text = fio(n, False)
    elif kind == "fio-plus":
        text = fio(n, True)
    elif kind == "campaign":
        text = campaign(n, sys.argv[4])
    else:
        sys.exit(f"inputs.py: no input kind {kind}")
    with open(path, "w") as f:
        f.write(text)


main()
