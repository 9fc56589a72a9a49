"""usage.py ERRFILE CMD...: runs CMD (stdout discarded, stderr to ERRFILE) and prints what it
cost, as "CPU_SECONDS CONTEXT_SWITCHES EXIT_STATUS": user+sys CPU of it and every process it
waited for (an MPI launcher's ranks included), and their voluntary plus involuntary context
switches. Shared by the bench/vs-* scripts.

The difference of RUSAGE_CHILDREN around the run, not its value: `python3` may be a wrapper
(pyenv's shim is a bash script) whose own children's time the interpreter inherits across
exec -- 0.05 s on one machine."""

import resource
import subprocess
import sys


def cost(r):
    return r.ru_utime + r.ru_stime, r.ru_nvcsw + r.ru_nivcsw


before = cost(resource.getrusage(resource.RUSAGE_CHILDREN))
with open(sys.argv[1], "w") as err:
    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err).returncode
after = cost(resource.getrusage(resource.RUSAGE_CHILDREN))
print(f"{after[0] - before[0]:.6f} {after[1] - before[1]} {rc}")
