// slots.h - the sessions requests run on: -np slots, each a Session (its own KV cache),
// all on one Batcher (model_session.h): the slots' steps are evaluated together, one
// forward graph per step (continuous batching, as llama-server's -np). A request takes a
// free slot for its whole completion and waits for one when all are busy; while it holds
// the slot it is a participant of the batcher, so each step waits briefly for the other
// busy slots' tokens. A slot keeps its cache, so a request that begins like the slot's
// last one evaluates only what differs (completion.h).
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
    /** The batcher the slots' sessions step through. */
    gk::run::Batcher & batcher() { return *batcher_; }

private:
    void release(int index);

    std::unique_ptr<gk::run::Batcher>              batcher_;
    std::vector<std::unique_ptr<gk::run::Session>> sessions_;
    std::vector<bool>                              busy_;
    std::mutex                                     mutex_;
    std::condition_variable                        freed_;
    bool                                           closed_ = false;
};

} // namespace gk_server
