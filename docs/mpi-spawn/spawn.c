/* spawn.c: parent ranks MPI_Comm_spawn N children (same binary) with info keys from argv.
 * usage: spawn N [key=value ...]     (child mode is detected with MPI_Comm_get_parent)
 * Parent: spawn, merge, allreduce over merged comm, disconnect, then keep running (proves survival).
 * Child: print host, merge, allreduce, disconnect, finalize, exit. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void now(char *buf, size_t n) { (void)n; double t = MPI_Wtime(); sprintf(buf, "%.3f", t); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter, merged;
    int rank, size, len; char host[MPI_MAX_PROCESSOR_NAME], ts[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        printf("CHILD rank %d/%d on %s pid %d\n", rank, size, host, (int)getpid()); fflush(stdout);
        MPI_Intercomm_merge(parent, 1, &merged);
        int one = 1, sum = 0, mr, ms;
        MPI_Comm_rank(merged, &mr); MPI_Comm_size(merged, &ms);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
        printf("CHILD merged rank %d/%d on %s allreduce=%d\n", mr, ms, host, sum); fflush(stdout);
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&parent);
        printf("CHILD %d on %s disconnected, finalizing\n", rank, host); fflush(stdout);
        MPI_Finalize();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 2;
    MPI_Info info; MPI_Info_create(&info);
    for (int i = 2; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) continue;
        *eq = 0; MPI_Info_set(info, argv[i], eq + 1);
        if (rank == 0) printf("PARENT info %s = %s\n", argv[i], eq + 1);
        *eq = '=';
    }
    printf("PARENT rank %d/%d on %s pid %d\n", rank, size, host, (int)getpid()); fflush(stdout);
    /* optional: wait (rank 0) until the file $SPAWN_WAIT_FILE exists, e.g. until the job was expanded */
    const char *wf = getenv("SPAWN_WAIT_FILE");
    if (wf && rank == 0) {
        printf("PARENT 0 waiting for %s\n", wf); fflush(stdout);
        while (access(wf, F_OK) != 0) sleep(1);
        printf("PARENT 0 found %s, spawning\n", wf); fflush(stdout);
        /* the file may carry more info keys, one key=value a line (e.g. add-host=c3:1) */
        FILE *f = fopen(wf, "r"); char line[512];
        while (f && fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = 0;
            char *eq = strchr(line, '=');
            if (!eq) continue;
            *eq = 0; MPI_Info_set(info, line, eq + 1);
            printf("PARENT info (from file) %s = %s\n", line, eq + 1); fflush(stdout);
        }
        if (f) fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int errs[64];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, n, info, 0, MPI_COMM_WORLD, &inter, errs);
    if (rc != MPI_SUCCESS) {
        char es[MPI_MAX_ERROR_STRING]; int el; MPI_Error_string(rc, es, &el);
        printf("PARENT %d: MPI_Comm_spawn FAILED: %s\n", rank, es); fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Intercomm_merge(inter, 0, &merged);
    int one = 1, sum = 0, mr, ms;
    MPI_Comm_rank(merged, &mr); MPI_Comm_size(merged, &ms);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    printf("PARENT merged rank %d/%d on %s allreduce=%d\n", mr, ms, host, sum); fflush(stdout);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    printf("PARENT %d disconnected from children\n", rank); fflush(stdout);
    /* keep running after the children are gone */
    int iters = getenv("SPAWN_ITERS") ? atoi(getenv("SPAWN_ITERS")) : 3;
    for (int it = 0; it < iters; it++) {
        sleep(1);
        int s2 = 0; MPI_Allreduce(&one, &s2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        now(ts, sizeof ts);
        if (rank == 0) printf("PARENT still running iter %d allreduce(world)=%d\n", it, s2);
        fflush(stdout);
    }
    MPI_Info_free(&info);
    MPI_Finalize();
    if (rank == 0) printf("PARENT done\n");
    return 0;
}
