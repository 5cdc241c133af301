/* compat_threadpool.c - thread pool parameters as ggml defines them: the defaults, init
 * equal to default, match comparing threads, priority, polling, strictness and the CPU mask
 * but not the paused state; pools made by ggml_threadpool_new and through the CPU registry's
 * extension functions (as llama-bench finds them). Exits 1 on the first failure. */
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "check.h"

int main(void) {
    struct ggml_threadpool_params d = ggml_threadpool_params_default(3);
    CHECK(d.n_threads == 3 && d.prio == GGML_SCHED_PRIO_NORMAL && d.poll == 50 && !d.strict_cpu && !d.paused,
          "defaults: 3 threads, normal priority, poll 50, not strict, not paused");
    int no_mask = 1;
    for (int i = 0; i < GGML_MAX_N_THREADS; ++i) no_mask = no_mask && !d.cpumask[i];
    CHECK(no_mask, "defaults: empty CPU mask");

    struct ggml_threadpool_params p;
    ggml_threadpool_params_init(&p, 3);
    CHECK(ggml_threadpool_params_match(&p, &d), "init matches default");
    p.paused = true;
    CHECK(ggml_threadpool_params_match(&p, &d), "paused is not compared");
    p.cpumask[5] = true;
    CHECK(!ggml_threadpool_params_match(&p, &d), "a CPU mask bit differs");
    p = d;
    p.n_threads = 4;
    CHECK(!ggml_threadpool_params_match(&p, &d), "the thread count differs");

    struct ggml_threadpool * pool = ggml_threadpool_new(&d);
    CHECK(pool && ggml_threadpool_get_n_threads(pool) == 3, "a pool of 3 threads");
    ggml_threadpool_free(pool);

    ggml_backend_reg_t reg = ggml_backend_reg_by_name("CPU");
    typedef struct ggml_threadpool * (*new_fn)(struct ggml_threadpool_params *);
    typedef void (*free_fn)(struct ggml_threadpool *);
    new_fn make = (new_fn) ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_new");
    free_fn release = (free_fn) ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_free");
    CHECK(make && release && ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_set_threadpool") &&
              ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts"),
          "the CPU registry exports the thread pool and buffer type functions");
    CHECK(ggml_backend_reg_get_proc_address(reg, "no_such_function") == NULL, "unknown names give NULL");
    pool = make(&d);
    CHECK(pool && ggml_threadpool_get_n_threads(pool) == 3, "a pool through the registry");
    release(pool);
    return 0;
}
