-- Lmod modulefile for iosurvey, e.g. /apps/modulefiles/iosurvey/0.1.0.lua
-- Install first (docs/install.md):
--   cargo install --path . --features mpi --root /apps/iosurvey/0.1.0
--   /apps/iosurvey/0.1.0/bin/iosurvey manpages /apps/iosurvey/0.1.0/share/man/man1
--   /apps/iosurvey/0.1.0/bin/iosurvey completions bash > /etc/bash_completion.d/iosurvey
help([[
iosurvey: storage benchmark and characterization (IOR, mdtest, IOzone and fio class),
with a result store, comparisons and reports. `iosurvey --version` says the commit,
the optional parts and the MPI library it runs against.
]])
whatis("Name: iosurvey")
whatis("Version: 0.1.0")
whatis("Category: benchmark, storage")

local root = "/apps/iosurvey/0.1.0"

-- The MPI build runs against the MPI library it was built with: load the same one.
depends_on("openmpi/4.1")

prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("MANPATH", pathJoin(root, "share/man"))
