/* compat_opt.c - ggml-opt.h on compat: freeing NULL contexts, results and datasets is a
 * no-op (llama.cpp frees its optimisation context, NULL, when a llama_context ends), and
 * the training entry points abort naming themselves (checked in a child process).
 * Exits 1 on the first failure. */
#include "ggml-opt.h"

#include "check.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    ggml_opt_free(NULL);
    ggml_opt_result_free(NULL);
    ggml_opt_dataset_free(NULL);
    CHECK(1, "freeing NULL optimisation objects returns");

    int   out[2];
    CHECK(pipe(out) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        dup2(out[1], 2);
        ggml_opt_result_init();
        _exit(0);
    }
    close(out[1]);
    char    message[512] = {0};
    ssize_t n            = read(out[0], message, sizeof message - 1);
    int     status       = 0;
    waitpid(child, &status, 0);
    CHECK(n > 0 && WIFSIGNALED(status), "ggml_opt_result_init aborts");
    CHECK(strstr(message, "ggml_opt_result_init") != NULL, "the abort message names ggml_opt_result_init");
    return 0;
}
