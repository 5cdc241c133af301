// free_list.cpp - best-fit offset allocation (see free_list.h).
#include "free_list.h"

#include <algorithm>

namespace gk::alloc {

size_t free_list::take(size_t size) {
    size_t best = blocks_.size();
    for (size_t i = 0; i < blocks_.size(); ++i) {
        if (blocks_[i].size >= size && (best == blocks_.size() || blocks_[i].size < blocks_[best].size)) {
            best = i;
        }
    }
    if (best < blocks_.size()) {
        const size_t offset = blocks_[best].offset;
        if (blocks_[best].size == size) {
            blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
        } else {
            blocks_[best].offset += size;
            blocks_[best].size -= size;
        }
        return offset;
    }
    const size_t offset = top_;
    top_ += size;
    high_water_ = std::max(high_water_, top_);
    return offset;
}

void free_list::give_back(size_t offset, size_t size) {
    if (size == 0) {
        return;
    }
    // First block after the range; merge with it and with the one before when adjacent.
    auto next = std::lower_bound(blocks_.begin(), blocks_.end(), offset,
                                 [](const block & b, size_t off) { return b.offset < off; });
    block merged{offset, size};
    if (next != blocks_.end() && merged.offset + merged.size == next->offset) {
        merged.size += next->size;
        next = blocks_.erase(next);
    }
    if (next != blocks_.begin() && std::prev(next)->offset + std::prev(next)->size == merged.offset) {
        --next;
        merged.offset = next->offset;
        merged.size += next->size;
        next = blocks_.erase(next);
    }
    if (merged.offset + merged.size == top_) {
        top_ = merged.offset;  // free space at the top is just room to grow
        return;
    }
    blocks_.insert(next, merged);
}

} // namespace gk::alloc
