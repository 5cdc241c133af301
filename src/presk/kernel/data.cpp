// A buffer's elements: 64-byte-aligned blocks shared by reference count, the executor's free
// lists by length, copy before a write to shared elements, and the fill of fresh buffers.
#include "kernel/data.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>

#include "../../quant/fp16.h"
#include "kernel/quant.h"
#include "lang/source.h"

namespace presk::kernel {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kIndexedLines = 4096;  // a pool finds the free list of a block up to 256 KiB by index

#if !defined(NDEBUG) || defined(PRESK_FILL_BUFFERS)
constexpr bool kFillBuild = true;
#else
constexpr bool kFillBuild = false;
#endif

// The fill is on in a debug or sanitizer build, or where GK_NAN_FILL=1 (the tests' setting).
bool fill_on() {
    static const bool on = [] {
        const char* v = std::getenv("GK_NAN_FILL");
        return kFillBuild || (v && std::string(v) == "1");
    }();
    return on;
}

[[noreturn]] void fail(const std::string& msg) { throw Error({}, "buffer: " + msg); }

void* allocate(size_t bytes) { return ::operator new(bytes, std::align_val_t(kAlign)); }
void release(void* p) { ::operator delete(p, std::align_val_t(kAlign)); }

// The bytes of a block of `n` elements of `t`: a whole number of 64-byte lines, at least one.
size_t block_bytes(DType t, int64_t n) {
    if (n < 0) fail("a negative element count " + std::to_string(n));
    if (quantised(t) && n % kQuantBlock)
        fail(std::to_string(n) + " " + dtype_name(t) + " elements are not a whole number of blocks of " + std::to_string(kQuantBlock));
    const size_t e = quantised(t) ? (size_t)quant_block_bytes(t) : element_size(t);
    if ((uint64_t)n > (std::numeric_limits<size_t>::max() - kAlign) / e)
        fail(std::to_string(n) + " elements are too many");
    const size_t b = std::max<size_t>(bytes_of(t, n), 1);
    return (b + kAlign - 1) / kAlign * kAlign;
}

void fill(DType t, void* p, int64_t n) {
    switch (t) {
    case DType::F64: std::fill_n(static_cast<double*>(p), n, std::numeric_limits<double>::quiet_NaN()); break;
    case DType::F32: std::fill_n(static_cast<float*>(p), n, std::numeric_limits<float>::quiet_NaN()); break;
    case DType::BF16: std::fill_n(static_cast<uint16_t*>(p), n, uint16_t(0x7FC0)); break;
    case DType::I64: std::fill_n(static_cast<int64_t*>(p), n, std::numeric_limits<int64_t>::min()); break;
    case DType::I8:
    case DType::I4: std::memset(p, 0xFF, bytes_of(t, n)); break;  // every scale an f16 NaN
    }
}

} // namespace

double round_to(DType t, double x) {
    switch (t) {
    case DType::F64: return x;
    case DType::F32: return (double)(float)x;
    case DType::BF16: return (double)gk::bf16_to_fp32(gk::fp32_to_bf16((float)x));
    case DType::I64:
    case DType::I8:
    case DType::I4: break;
    }
    throw Error({}, std::string("round_to: ") + dtype_name(t) + " is not a real type of single elements");
}

size_t element_size(DType t) {
    if (quantised(t)) fail(std::string("an ") + dtype_name(t) + " buffer's elements are in blocks (no element size)");
    return t == DType::F32 ? 4 : t == DType::BF16 ? 2 : 8;
}

size_t bytes_of(DType t, int64_t n) { return quantised(t) ? (size_t)quant_bytes(t, n) : (size_t)n * element_size(t); }

bool fills_fresh_buffers() { return fill_on(); }

// ---- the pool ----

// A block: its header (the reference count, the length, the pool it goes back to) in the
// first 64 bytes, the elements after it.
struct Data::Block {
    std::atomic<int64_t> refs{1};
    size_t bytes = 0;                    // of the elements
    BufferPool::Lists* pool = nullptr;   // the pool it goes back to when released, or null
    std::vector<Block*>* list = nullptr;  // there, the free list of its length

    static constexpr size_t kHeader = kAlign;
    void* elements() { return reinterpret_cast<char*>(this) + kHeader; }

    static Block* make(size_t bytes, BufferPool::Lists* pool) {
        static_assert(sizeof(Block) <= kHeader);
        Block* b = new (allocate(kHeader + bytes)) Block;
        b->bytes = bytes;
        b->pool = pool;
        return b;
    }
    static void destroy(Block* b) {
        b->~Block();
        release(b);
    }
};

struct BufferPool::Lists {
    bool open = true;     // the pool lives
    int64_t taken = 0;    // its blocks not given back
    int64_t fresh = 0;
    std::unordered_map<size_t, std::vector<Data::Block*>> free;  // by bytes (a block keeps its list's address)
    std::vector<std::vector<Data::Block*>*> by_lines;            // free's shorter lists, by 64-byte lines

    std::vector<Data::Block*>& list_of(size_t bytes) {
        const size_t lines = bytes / kAlign;
        if (lines < by_lines.size() && by_lines[lines]) return *by_lines[lines];
        std::vector<Data::Block*>& list = free[bytes];
        if (lines < kIndexedLines) {
            if (by_lines.size() <= lines) by_lines.resize(lines + 1);
            by_lines[lines] = &list;
        }
        return list;
    }

    Data::Block* take(size_t bytes) {
        std::vector<Data::Block*>& list = list_of(bytes);
        Data::Block* b = nullptr;
        if (list.empty()) {
            b = Data::Block::make(bytes, this);
            b->list = &list;
            ++fresh;
        } else {
            b = list.back();
            list.pop_back();
            b->refs.store(1, std::memory_order_relaxed);
        }
        ++taken;
        return b;
    }
    /// Takes `b` back (its count at 0); frees it, and the lists after the last block, once the
    /// pool is gone.
    void give(Data::Block* b) {
        --taken;
        if (open) {
            try {
                b->list->push_back(b);
                return;
            } catch (...) {  // no memory for the list: free the block instead
            }
        }
        Data::Block::destroy(b);
        if (!open && taken == 0) delete this;
    }
    void clear() {
        for (auto& [bytes, bs] : free)
            for (Data::Block* b : bs) Data::Block::destroy(b);
        free.clear();
        by_lines.clear();
    }
};

BufferPool::BufferPool() : lists_(new Lists) {}

BufferPool::~BufferPool() {
    lists_->open = false;
    lists_->clear();
    if (lists_->taken == 0) delete lists_;  // else the last block released deletes it
}

int64_t BufferPool::fresh_blocks() const { return lists_->fresh; }

int64_t BufferPool::free_buffers() const {
    int64_t n = 0;
    for (const auto& [bytes, bs] : lists_->free) n += (int64_t)bs.size();
    return n;
}

// ---- the buffer ----

Data::Data(DType t, int64_t n, BufferPool* pool) : dtype_(t), size_(n) {
    const size_t bytes = block_bytes(t, n);
    block_ = pool ? pool->lists_->take(bytes) : Block::make(bytes, nullptr);
    ptr_ = block_->elements();
    if (fill_on()) fill(t, ptr_, n);
}

Data::Data(const Data& o) : dtype_(o.dtype_), size_(o.size_), ptr_(o.ptr_), block_(o.block_) {
    if (block_) block_->refs.fetch_add(1, std::memory_order_relaxed);
}

Data& Data::operator=(const Data& o) {
    if (this != &o) *this = Data(o);
    return *this;
}

void Data::drop() {
    if (block_ && block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (block_->pool) block_->pool->give(block_);
        else Block::destroy(block_);
    }
    block_ = nullptr;
}

bool Data::shared() const { return block_ && block_->refs.load(std::memory_order_acquire) > 1; }

Data Data::from_reals(DType t, const std::vector<double>& x) {
    if (t == DType::I64) fail("from_reals to an i64 buffer");
    if (quantised(t)) {
        const std::vector<float> f(x.begin(), x.end());
        Data d(t, (int64_t)x.size());
        quantise(t, f.data(), d.ptr_, d.size_);
        return d;
    }
    Data d(t, (int64_t)x.size());
    for (size_t i = 0; i < x.size(); ++i) d.set_real((int64_t)i, x[i]);
    return d;
}

Data Data::from_ints(const std::vector<int64_t>& x) {
    Data d(DType::I64, (int64_t)x.size());
    if (!x.empty()) std::memcpy(d.ptr_, x.data(), x.size() * sizeof(int64_t));
    return d;
}

void* Data::raw() {
    if (shared()) {  // another Data reads these elements: write a copy of them
        Data c(dtype_, size_, nullptr);
        if (size_) std::memcpy(c.ptr_, ptr_, bytes_of(dtype_, size_));
        *this = std::move(c);
    }
    return ptr_;
}

void Data::check_type(DType t) const {
    if (t != dtype_) fail(std::string("a ") + dtype_name(dtype_) + " buffer read as " + dtype_name(t));
}

void Data::check_index(int64_t i, bool integer) const {
    if (integer != (dtype_ == DType::I64))
        fail(std::string(integer ? "an integer" : "a real") + " element of a " + dtype_name(dtype_) + " buffer");
    if (i < 0 || i >= size_) fail("element " + std::to_string(i) + " of " + std::to_string(size_));
}

double Data::real(int64_t i) const {
    check_index(i, false);
    switch (dtype_) {
    case DType::F64: return static_cast<const double*>(ptr_)[i];
    case DType::F32: return static_cast<const float*>(ptr_)[i];
    case DType::I8:
    case DType::I4: {  // its block through gk's decoder
        float block[kQuantBlock];
        dequantise(dtype_, static_cast<const char*>(ptr_) + quant_bytes(dtype_, i - i % kQuantBlock), block, kQuantBlock);
        return block[i % kQuantBlock];
    }
    default: return gk::bf16_to_fp32(static_cast<const uint16_t*>(ptr_)[i]);
    }
}

void Data::set_real(int64_t i, double x) {
    check_index(i, false);
    if (quantised(dtype_)) fail(std::string("element ") + std::to_string(i) + " of an " + dtype_name(dtype_) + " buffer set alone (its block is encoded whole: from_reals)");
    void* p = raw();
    switch (dtype_) {
    case DType::F64: static_cast<double*>(p)[i] = x; break;
    case DType::F32: static_cast<float*>(p)[i] = (float)x; break;
    default: static_cast<uint16_t*>(p)[i] = gk::fp32_to_bf16((float)x); break;
    }
}

int64_t Data::integer(int64_t i) const {
    check_index(i, true);
    return static_cast<const int64_t*>(ptr_)[i];
}

void Data::set_integer(int64_t i, int64_t v) {
    check_index(i, true);
    static_cast<int64_t*>(raw())[i] = v;
}

std::vector<double> Data::reals() const {
    if (quantised(dtype_)) {
        std::vector<float> f((size_t)size_);
        dequantise(dtype_, ptr_, f.data(), size_);
        return std::vector<double>(f.begin(), f.end());
    }
    std::vector<double> out((size_t)size_);
    for (int64_t i = 0; i < size_; ++i) out[(size_t)i] = real(i);
    return out;
}

std::vector<int64_t> Data::ints() const {
    std::vector<int64_t> out((size_t)size_);
    for (int64_t i = 0; i < size_; ++i) out[(size_t)i] = integer(i);
    return out;
}

Data Data::view(int64_t first, int64_t n) const {
    if (first < 0 || n < 0 || first > size_ || n > size_ - first)
        fail("elements [" + std::to_string(first) + ", " + std::to_string(first) + " + " + std::to_string(n) + ") of " +
             std::to_string(size_));
    if (quantised(dtype_) && (first % kQuantBlock || n % kQuantBlock))
        fail("elements [" + std::to_string(first) + ", " + std::to_string(first) + " + " + std::to_string(n) + ") of an " +
             dtype_name(dtype_) + " buffer: not whole blocks of " + std::to_string(kQuantBlock));
    Data v = *this;
    v.size_ = n;
    v.ptr_ = static_cast<char*>(ptr_) + bytes_of(dtype_, first);
    return v;
}

} // namespace presk::kernel
