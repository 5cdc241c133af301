// Deep input without a crash: the front end's limits, the stack's backstop for every deep
// recursion, and a thread with a large stack to run presk's work on (docs/presk.md, "Limits").
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "lang/source.h"

namespace presk {

constexpr int kMaxNesting = 20000;                  // an expression's depth (a chain of operators counts each)
constexpr int kMaxCallDepth = 1000;                 // calls in progress (checker, interpreter, host program)
constexpr size_t kLargeStack = size_t(512) << 20;   // the CLI's stack: reserved, committed as it is used

namespace detail {
extern thread_local uintptr_t stack_floor;  // the lowest frame address allowed on this thread; 0: not yet known
uintptr_t find_stack_floor();
[[noreturn]] void stack_exhausted(Loc loc, const char* what);
} // namespace detail

/// Throws Error(loc, "<what> nested too deeply ...") when less than a margin (256 KiB, or a
/// quarter of a smaller stack) of the calling thread's stack is left. Deep recursions call it
/// once per level, so that a thread smaller than the CLI's gets an error rather than a crash.
inline void check_stack(Loc loc, const char* what) {
    uintptr_t floor = detail::stack_floor ? detail::stack_floor : detail::find_stack_floor();
    if ((uintptr_t)__builtin_frame_address(0) < floor) detail::stack_exhausted(loc, what);
}

/// Runs f on a new thread whose stack holds `bytes` (reserved; the system commits what is used)
/// and waits for it; an exception f throws is rethrown here. Where no such thread can be made,
/// f runs on the calling thread.
void run_with_stack(size_t bytes, const std::function<void()>& f);

} // namespace presk
