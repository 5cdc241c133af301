#include "lang/stack.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

namespace presk {
namespace detail {

thread_local uintptr_t stack_floor = 0;

/// The calling thread's stack: its lowest address and its size (nullptr and 0 when unknown).
static std::pair<void*, size_t> this_thread_stack() {
    void* addr = nullptr;
    size_t size = 0;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
    }
    return {addr, size};
}

uintptr_t find_stack_floor() {
    auto [addr, size] = this_thread_stack();
    if (!addr || size == 0) {  // unknown: assume 1 MiB below this frame
        size = size_t(1) << 20;
        addr = (char*)__builtin_frame_address(0) - size;
    }
    const size_t margin = std::min(size / 4, size_t(256) << 10);
    stack_floor = (uintptr_t)addr + margin;
    return stack_floor;
}

void stack_exhausted(Loc loc, const char* what) {
    const size_t size = this_thread_stack().second;
    throw Error(loc, std::string(what) + " nested too deeply: this thread's stack (" + std::to_string(size >> 10) +
                         " KiB) is exhausted");
}

} // namespace detail

namespace {

struct Job {
    const std::function<void()>* f;
    std::exception_ptr error;
};

void* trampoline(void* p) {
    Job* job = static_cast<Job*>(p);
    try {
        (*job->f)();
    } catch (...) {
        job->error = std::current_exception();
    }
    return nullptr;
}

} // namespace

void run_with_stack(size_t bytes, const std::function<void()>& f) {
    Job job{&f, nullptr};
    pthread_attr_t attr;
    pthread_t t;
    bool started = false;
    if (pthread_attr_init(&attr) == 0) {
        started = pthread_attr_setstacksize(&attr, bytes) == 0 && pthread_create(&t, &attr, trampoline, &job) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        f();
        return;
    }
    pthread_join(t, nullptr);
    if (job.error) std::rethrow_exception(job.error);
}

} // namespace presk
