/* mpi-hello: the launcher's and MPI's own floor for bench/scale. Every rank initialises MPI
 * as iosurvey does (MPI_THREAD_MULTIPLE), meets the others at one barrier, and finalises;
 * nothing else. Launched like iosurvey, its wall time is what any MPI program of that many
 * ranks pays on this machine before doing anything, and its peak memory per rank what the
 * MPI library itself holds.
 *
 *   mpicc -O2 -o mpi-hello bench/lib/mpi-hello.c
 *   mpirun -np N mpi-hello */
#include <mpi.h>

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return provided == MPI_THREAD_MULTIPLE ? 0 : 1;
}
