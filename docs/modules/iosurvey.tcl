#%Module1.0
## environment-modules modulefile for iosurvey, e.g. /apps/modulefiles/iosurvey/0.1.0
## Install first (docs/install.md):
##   cargo install --path . --features mpi --root /apps/iosurvey/0.1.0
##   /apps/iosurvey/0.1.0/bin/iosurvey manpages /apps/iosurvey/0.1.0/share/man/man1
proc ModulesHelp { } {
    puts stderr "iosurvey: storage benchmark and characterization with a result store."
    puts stderr "iosurvey --version says the commit, the optional parts and the MPI library."
}
module-whatis "iosurvey 0.1.0: storage benchmark and characterization"

set root /apps/iosurvey/0.1.0

# The MPI build runs against the MPI library it was built with: load the same one.
prereq openmpi/4.1

prepend-path PATH    $root/bin
prepend-path MANPATH $root/share/man
