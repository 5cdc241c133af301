// A buffer's elements on the host: row-major in the storage type (f64 `double`, f32 `float`,
// bf16 `uint16_t` bits, i64 `int64_t`, int8 and int4 the blocks of kernel/quant.h, the layout
// kernel/native.h's kernels read), in 64-byte
// aligned memory shared by reference count between every value that reads it (the seed's
// "Host values without copies"). Copying a Data shares its elements; a write to elements another
// Data sees copies them first, so nothing writes what another value reads. A view (a stacked
// layer's slice) is a Data over part of another's elements.
//
// A fresh buffer (new, or taken from a pool's free list) is not initialised: every kernel
// writes its output before it reads it. Where fills_fresh_buffers() (a build without NDEBUG, a
// sanitizer build, which defines PRESK_FILL_BUFFERS, or a run with GK_NAN_FILL=1 in the
// environment, as ctest runs the test programs) it is filled with NaN (i64: INT64_MIN), so that a
// kernel or host rule that reads an element it did not write shows in the tests.
#pragma once
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernel/ir.h"

namespace presk::kernel {

/// `x` rounded to storage type `t`: f64 unchanged, f32 one rounding to nearest even, bf16
/// through f32 then to bf16 (two roundings, the language's rule for an f64 value reaching
/// bf16). Throws presk::Error for I64.
double round_to(DType t, double x);

/// The element size of storage type `t` in bytes (8, 4, 2, 8). Throws presk::Error for a
/// quantised type, whose elements are in blocks.
size_t element_size(DType t);
/// The bytes of `n` elements of `t` (a quantised type's whole blocks: kernel/quant.h).
size_t bytes_of(DType t, int64_t n);

/// The storage type whose elements are C++ type T (double, float, uint16_t, int64_t).
template <class T>
constexpr DType dtype_of() {
    if constexpr (std::is_same_v<T, double>) return DType::F64;
    else if constexpr (std::is_same_v<T, float>) return DType::F32;
    else if constexpr (std::is_same_v<T, uint16_t>) return DType::BF16;
    else {
        static_assert(std::is_same_v<T, int64_t>, "a storage type is double, float, uint16_t or int64_t");
        return DType::I64;
    }
}

/// Whether fresh buffers are filled with NaN / INT64_MIN (see the header).
bool fills_fresh_buffers();

/// Free lists of released buffers' blocks (their elements and reference count in one
/// allocation), by length in bytes: one executor's launches take their outputs from it, so that
/// after a first call a launch allocates nothing and no page is touched for the first time. Not
/// thread-safe: a buffer of the pool is released on the thread that uses the pool. A buffer
/// outliving its pool is freed when released.
class BufferPool {
public:
    BufferPool();
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    /// The buffers on the free lists now.
    int64_t free_buffers() const;
    /// The blocks allocated new so far (not taken from the free lists).
    int64_t fresh_blocks() const;

private:
    friend class Data;
    struct Lists;
    Lists* lists_;  // freed by the pool, or by the last of its blocks released after it
};

/// The elements of one buffer (see the header). An empty Data is an f32 buffer of no elements.
class Data {
public:
    Data() = default;
    Data(const Data& o);
    Data(Data&& o) noexcept : dtype_(o.dtype_), size_(o.size_), ptr_(o.ptr_), block_(o.block_) { o.forget(); }
    Data& operator=(const Data& o);
    Data& operator=(Data&& o) noexcept {
        if (this != &o) {
            if (block_) drop();
            dtype_ = o.dtype_;
            size_ = o.size_;
            ptr_ = o.ptr_;
            block_ = o.block_;
            o.forget();
        }
        return *this;
    }
    ~Data() {
        if (block_) drop();
    }
    /// `n` elements of type `t`, not initialised (filled where fills_fresh_buffers()), from
    /// `pool`'s free lists when given. Throws presk::Error when n < 0 or the bytes overflow.
    Data(DType t, int64_t n, BufferPool* pool = nullptr);
    /// A buffer of type `t` holding `x`, each element rounded to `t` (round_to); `t` not I64. A
    /// quantised `t` takes the values rounded to f32 and encodes them with gk's encoder
    /// (kernel/quant.h; a whole number of blocks).
    static Data from_reals(DType t, const std::vector<double>& x);
    /// An i64 buffer holding `x`.
    static Data from_ints(const std::vector<int64_t>& x);

    DType dtype() const { return dtype_; }
    int64_t size() const { return size_; }

    /// The elements as storage type T (double f64, float f32, uint16_t bf16 bits, int64_t
    /// i64). Throws presk::Error when T is not the buffer's type. The mutable form first copies
    /// elements another Data shares.
    template <class T>
    const T* data() const {
        check_type(dtype_of<T>());
        return static_cast<const T*>(ptr_);
    }
    template <class T>
    T* data() {
        check_type(dtype_of<T>());
        return static_cast<T*>(raw());
    }
    /// The first element's address, whatever the type (for kernel/native.h's buffer array);
    /// the mutable form first copies elements another Data shares.
    const void* raw() const { return ptr_; }
    void* raw();

    /// Element `i` of a real buffer, widened exactly to double. Throws presk::Error for an i64
    /// buffer or an index outside [0, size).
    double real(int64_t i) const;
    /// Stores round_to(dtype, x) at `i` (copying shared elements first). Throws as real(), and
    /// for a quantised buffer (read-only: its blocks are encoded whole).
    void set_real(int64_t i, double x);
    /// Element `i` of an i64 buffer. Throws presk::Error for a real buffer or an index outside.
    int64_t integer(int64_t i) const;
    void set_integer(int64_t i, int64_t v);
    /// Every element as real() / integer() gives it.
    std::vector<double> reals() const;
    std::vector<int64_t> ints() const;

    /// Elements [first, first + n) sharing this buffer's memory (aligned to the element, not to
    /// 64 bytes, unless `first` is a multiple of 64 bytes' worth). Throws presk::Error when the
    /// range is not inside [0, size), or is not whole blocks of a quantised buffer.
    Data view(int64_t first, int64_t n) const;
    /// Whether another Data reads these elements (a write copies them first).
    bool shared() const;

private:
    struct Block;
    DType dtype_ = DType::F32;
    int64_t size_ = 0;
    void* ptr_ = nullptr;     // the first element
    Block* block_ = nullptr;  // the memory and its reference count, null for an empty Data

    friend class BufferPool;
    void drop();  // releases the block (back to its pool, or freed, with its last reader)
    void forget() {  // the state of a Data moved from: no elements
        block_ = nullptr;
        ptr_ = nullptr;
        size_ = 0;
    }
    void check_type(DType t) const;
    void check_index(int64_t i, bool integer) const;
};

} // namespace presk::kernel
