// slots.h - the sessions requests run on: one Session (KV cache, graph, compute) per
// slot, -np of them. A request takes a free slot for its whole completion and waits for
// one when all are busy; slots run side by side on their own threads (no batching across
// slots). A slot keeps its cache, so a request that begins like the slot's last one
// evaluates only what differs (completion.h).
#pragma once

#include "run/model.h"
#include "run/model_session.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gk_server {

class SlotPool {
public:
    /** `n` sessions of `params` on `model`; nullptr and a message when one cannot be made. */
    static std::unique_ptr<SlotPool> create(const gk::run::Model & model, const gk::run::session_params & params, int n,
                                            std::string * error);

    /** A slot held until it goes out of scope; empty (no session) when the pool closed. */
    class lease {
    public:
        lease(SlotPool * pool, int index) : pool_(pool), index_(index) {}
        lease(const lease &) = delete;
        lease & operator=(const lease &) = delete;
        ~lease();
        gk::run::Session * session() const;

    private:
        SlotPool * pool_;
        int        index_;
    };

    /** Wait for a free slot (or for close()). */
    lease acquire();
    /** Wake every waiter with an empty lease; later acquire()s return at once, empty. */
    void  close();
    int   size() const { return static_cast<int>(sessions_.size()); }
    /** Slots in use now. */
    int   busy();

private:
    void release(int index);

    std::vector<std::unique_ptr<gk::run::Session>> sessions_;
    std::vector<bool>                              busy_;
    std::mutex                                     mutex_;
    std::condition_variable                        freed_;
    bool                                           closed_ = false;
};

} // namespace gk_server
