// free_list.h - the offset allocator the graph allocator measures with: byte ranges of
// one buffer handed out and given back, no memory touched.
//
// The used region is [0, top). Ranges given back below top are kept as free blocks
// (sorted by offset, neighbours merged); a range given back at the top lowers top
// instead. A request takes the smallest free block that holds it (best fit; the lowest
// offset among equals) and otherwise extends top. high_water() - the largest top ever
// reached - is the buffer size the sequence of requests needs.
#pragma once

#include <cstddef>
#include <vector>

namespace gk::alloc {

class free_list {
public:
    /// Offset of `size` bytes (size a multiple of the alignment the caller uses).
    size_t take(size_t size);
    /// Give back [offset, offset + size), which must have come from take().
    void give_back(size_t offset, size_t size);

    size_t high_water() const { return high_water_; }
    size_t top() const { return top_; }
    /// Free blocks below top, for tests.
    size_t n_free_blocks() const { return blocks_.size(); }

private:
    struct block {
        size_t offset;
        size_t size;
    };
    std::vector<block> blocks_;  // sorted by offset, none adjacent to another or to top
    size_t             top_        = 0;
    size_t             high_water_ = 0;
};

} // namespace gk::alloc
