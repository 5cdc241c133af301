// slots.cpp - see slots.h.
#include "slots.h"

#include <algorithm>
#include <cstdio>

namespace gk_server {

std::unique_ptr<SlotPool> SlotPool::create(const gk::run::Model & model, const gk::run::session_params & params, int n,
                                           std::string * error) {
    std::unique_ptr<SlotPool> pool(new SlotPool());
    pool->batcher_ = gk::run::Batcher::create(model, params, n, error);
    if (!pool->batcher_) return nullptr;
    for (int i = 0; i < n; ++i) {
        auto s = gk::run::Session::create(*pool->batcher_, error);
        if (!s) return nullptr;
        if (i == 0 && !s->cache_note().empty())
            std::fprintf(stderr, "gk-server: warning: %s\n", s->cache_note().c_str());
        pool->sessions_.push_back(std::move(s));
    }
    pool->busy_.assign(static_cast<size_t>(n), false);
    return pool;
}

SlotPool::lease::~lease() {
    if (index_ >= 0) pool_->release(index_);
}

gk::run::Session * SlotPool::lease::session() const {
    return index_ >= 0 ? pool_->sessions_[static_cast<size_t>(index_)].get() : nullptr;
}

SlotPool::lease SlotPool::acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (closed_) return lease(this, -1);
        const auto it = std::find(busy_.begin(), busy_.end(), false);
        if (it != busy_.end()) {
            *it = true;
            batcher_->join();
            return lease(this, static_cast<int>(it - busy_.begin()));
        }
        freed_.wait(lock);
    }
}

void SlotPool::release(int index) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        busy_[static_cast<size_t>(index)] = false;
    }
    batcher_->leave();
    freed_.notify_one();
}

void SlotPool::close() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    freed_.notify_all();
}

int SlotPool::busy() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(std::count(busy_.begin(), busy_.end(), true));
}

} // namespace gk_server
