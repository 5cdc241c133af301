// --backend native: PSK-Kernel -> LLVM IR -> machine code through ORC LLJIT.
//
// The lowering is statement for statement. The function is
//   i32 presk_kN(ptr bufs, i64 lo, i64 hi, ptr err)
// (native.h's presk_kernel_fn): the buffer pointers are loaded once at entry, every variable
// of the kernel (s<k> and v<k> in the arithmetic type, n<k> and i<k> in i64) is a stack slot
// set to zero at entry, as the interpreter's registers start (mem2reg makes them SSA values),
// each loop is a header testing `i < hi` with one induction variable, an If is two blocks.
// Expressions are evaluated in the interpreter's order (operands left to right, a store's
// value before its index, a select's three operands all), so the first failure of a kernel
// that fails is the interpreter's; a failure writes err[] and returns its status from one
// block per status (index checks meet in one block whose phis carry the access, the axis
// and the index). Accesses are numbered as native.h's status_message numbers them.
//
// Checks are left out only where they cannot fail (kernel/bounds.h: the intervals of integer
// expressions from the loop bounds and the constants): an index whose interval lies within its
// axis, an integer operation whose interval does not overflow, a division by a divisor that
// excludes 0 (and -1 for a dividend that may be INT64_MIN). A loop that runs no iteration is
// not emitted (the interpreter runs none of its body). The split loop (native.h's split_loop)
// runs [max(lo, its lo), min(hi, its hi)).
#include "kernel/llvm_jit.h"

#include <algorithm>
#include <bit>
#include <map>
#include <mutex>

#include "kernel/bounds.h"
#include "kernel/eval.h"
#include "kernel/llvm_listing.h"
#include "kernel/pmath_ops.h"
#include "kernel/quant.h"
#include "lang/source.h"

#ifdef PRESK_HAVE_LLVM
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#endif

namespace presk::kernel {
namespace {

// The widest vector register of the host in bits (128 on any x86-64 or AArch64), from the
// features LLVM reads off the host CPU.
int host_vector_bits();

} // namespace

int register_lanes(DType t) {
    const int bits = host_vector_bits();
    switch (t) {
    case DType::F64: return std::max(1, bits / 64);
    case DType::F32: return std::max(1, bits / 32);
    default: return 1;
    }
}

int native_lanes(DType t) { return std::min(4, register_lanes(t)); }

void check_lanes(DType t, int lanes, const std::string& what) {
    const DType a = arith_type(t);
    const int most = std::max(1, native_lanes(a));
    if (lanes == 1 || (lanes >= 2 && lanes <= most && (lanes & (lanes - 1)) == 0)) return;
    std::string have = "1";
    for (int l = 2; l <= most; l *= 2) have += (l * 2 > most ? " or " : ", ") + std::to_string(l);
    throw Error({}, what + ": the host's vectors hold " + have + (most == 1 ? " lane of " : " lanes of ") +
                        dtype_name(a) + (t == DType::BF16 ? " (the arithmetic type of bf16)" : ""));
}

#ifndef PRESK_HAVE_LLVM

namespace {
int host_vector_bits() { return 0; }
} // namespace

bool have_llvm() { return false; }

std::string native_cpu() { return ""; }

NativeCode compile_llvm(const Kernel&, const NativeOptions&) {
    throw Error({}, "--backend native: presk was built without LLVM (install llvm-16-dev)");
}

MachineListing machine_code(const Kernel&, const NativeOptions&) {
    throw Error({}, "presk explain: presk was built without LLVM (install llvm-16-dev)");
}

#else

namespace {

using llvm::BasicBlock;
using llvm::Value;

[[noreturn]] void fail(const Kernel& k, const std::string& msg) { throw Error({}, "kernel " + k.name + ": " + msg); }

// The affine form c + sum coef[v] * i<v> of an index made of constants, loop variables and
// + - and * by a constant; nullopt for any other index or when a coefficient overflows.
struct Affine {
    int64_t c = 0;
    std::map<int, int64_t> coef;
};

std::optional<Affine> scaled(std::optional<Affine> a, int64_t s) {
    if (!a || __builtin_mul_overflow(a->c, s, &a->c)) return std::nullopt;
    for (auto& [v, c] : a->coef)
        if (__builtin_mul_overflow(c, s, &c)) return std::nullopt;
    return a;
}

std::optional<Affine> summed(std::optional<Affine> a, std::optional<Affine> b) {
    if (!a || !b || __builtin_add_overflow(a->c, b->c, &a->c)) return std::nullopt;
    for (auto [v, c] : b->coef)
        if (__builtin_add_overflow(a->coef[v], c, &a->coef[v])) return std::nullopt;
    return a;
}

std::optional<Affine> affine(const Expr& e) {
    switch (e.kind) {
    case Expr::Int: return Affine{e.ivalue, {}};
    case Expr::Loop: return Affine{0, {{(int)e.ivalue, 1}}};
    case Expr::Binary:
        if (e.op == "add") return summed(affine(*e.args[0]), affine(*e.args[1]));
        if (e.op == "sub") return summed(affine(*e.args[0]), scaled(affine(*e.args[1]), -1));
        if (e.op == "mul" && e.args[1]->kind == Expr::Int) return scaled(affine(*e.args[0]), e.args[1]->ivalue);
        if (e.op == "mul" && e.args[0]->kind == Expr::Int) return scaled(affine(*e.args[1]), e.args[0]->ivalue);
        return std::nullopt;
    default: return std::nullopt;
    }
}

// Structural equality of expressions.
bool same(const Expr& a, const Expr& b) {
    if (a.kind != b.kind || a.op != b.op || a.ivalue != b.ivalue || a.buf != b.buf || a.lanes != b.lanes ||
        a.integer != b.integer || a.args.size() != b.args.size() ||
        std::bit_cast<uint64_t>(a.value) != std::bit_cast<uint64_t>(b.value))
        return false;
    for (size_t i = 0; i < a.args.size(); ++i)
        if (!same(*a.args[i], *b.args[i])) return false;
    return true;
}

// The number of accesses (loads, and stores for statements) in text order (native.h).
int64_t accesses(const ExprP& e) {
    if (!e) return 0;
    int64_t n = e->kind == Expr::Load || e->kind == Expr::VLoad;
    for (const ExprP& a : e->args) n += accesses(a);
    return n;
}
int64_t accesses(const std::vector<Stmt>& body) {
    int64_t n = 0;
    for (const Stmt& s : body) {
        for (const ExprP& i : s.index) n += accesses(i);
        n += accesses(s.value) + (s.kind == Stmt::Store || s.kind == Stmt::VStore);
        n += accesses(s.body) + accesses(s.orelse);
    }
    return n;
}

// Whether `body` assigns the integer scalar n<var>.
bool assigns_int(const std::vector<Stmt>& body, int var) {
    for (const Stmt& s : body) {
        if (s.kind == Stmt::Assign && s.var == var && s.value->integer) return true;
        if (assigns_int(s.body, var) || assigns_int(s.orelse, var)) return true;
    }
    return false;
}

// Calls f(index, is_vector) for every access to buffer `buf` in `body`.
template <class F>
void each_access(const ExprP& e, int buf, const F& f) {
    if (!e) return;
    for (const ExprP& a : e->args) each_access(a, buf, f);
    if ((e->kind == Expr::Load || e->kind == Expr::VLoad) && e->buf == buf) f(e->args, e->kind == Expr::VLoad, false);
}
template <class F>
void each_access(const std::vector<Stmt>& body, int buf, const F& f) {
    for (const Stmt& s : body) {
        for (const ExprP& i : s.index) each_access(i, buf, f);
        each_access(s.value, buf, f);
        if ((s.kind == Stmt::Store || s.kind == Stmt::VStore) && s.buf == buf) f(s.index, s.kind == Stmt::VStore, true);
        each_access(s.body, buf, f);
        each_access(s.orelse, buf, f);
    }
}

// pmath.h's function for a real operation, by the arithmetic type.
struct PmathFn {
    const char* name;
    void* addr;
    int arity;
};

// The pmath function of `op` in the f64 or f32 arithmetic (pmath_ops.h's table).
std::optional<PmathFn> pmath_fn(const std::string& op, bool f64) {
    const PmathOp* p = pmath_op(op);
    if (!p) return std::nullopt;
    return f64 ? PmathFn{p->f64_name, p->f64, p->arity} : PmathFn{p->f32_name, p->f32, p->arity};
}

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

// The process-wide JIT: one LLJIT for the host CPU with pmath's functions (and memset and
// memcpy, which LLVM may call for a loop that fills or copies) as its symbols, the target
// machine the optimization pipeline asks about costs, and the lock every compile and release
// takes. It is created on first use and never destroyed, so that a kernel released at exit
// still finds it.
struct Jit {
    std::mutex mu;
    std::unique_ptr<llvm::orc::LLJIT> lljit;
    std::unique_ptr<llvm::TargetMachine> tm;
    std::string cpu, features;
    uint64_t next = 0;  // kernels compiled: each function's name presk_k<next>
    // The kernels compiled and still held somewhere, by their text and the options: an
    // executor made again (a benchmark's, a test's) finds its kernels compiled.
    std::map<std::string, std::pair<presk_kernel_fn, std::weak_ptr<void>>> memo;
    // machine_code: while `capture` is set, the object files the JIT compiles are kept here.
    bool capture = false;
    std::string captured;
};

llvm::orc::JITTargetMachineBuilder host_builder() {
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) throw Error({}, "--backend native: LLVM does not know the host: " + message(jtmb.takeError()));
    jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
    jtmb->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;  // never an FMA
    return std::move(*jtmb);
}

Jit& jit() {
    static Jit* j = [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        auto jtmb = host_builder();
        auto made = std::make_unique<Jit>();
        made->cpu = jtmb.getCPU();
        made->features = jtmb.getFeatures().getString();
        auto tm = jtmb.createTargetMachine();
        if (!tm) throw Error({}, "--backend native: no LLVM target machine for the host: " + message(tm.takeError()));
        made->tm = std::move(*tm);
        auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
        if (!lljit) throw Error({}, "--backend native: LLVM's JIT could not start: " + message(lljit.takeError()));
        made->lljit = std::move(*lljit);
        Jit* self = made.get();
        made->lljit->getObjTransformLayer().setTransform(
            [self](std::unique_ptr<llvm::MemoryBuffer> obj) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
                if (self->capture) self->captured = obj->getBuffer().str();
                return obj;
            });
        llvm::orc::JITDylib& jd = made->lljit->getMainJITDylib();
        llvm::orc::SymbolMap syms;
        for (const PmathOp& op : kPmathOps) {
            for (bool f64 : {false, true}) {
                const PmathFn f = *pmath_fn(op.op, f64);
                syms[made->lljit->mangleAndIntern(f.name)] =
                    llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(f.addr), llvm::JITSymbolFlags::Exported);
            }
        }
        if (auto e = jd.define(llvm::orc::absoluteSymbols(std::move(syms))))
            throw Error({}, "--backend native: " + message(std::move(e)));
        auto libc = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            made->lljit->getDataLayout().getGlobalPrefix(), [](const llvm::orc::SymbolStringPtr& s) {
                return *s == "memset" || *s == "memcpy" || *s == "memmove";
            });
        if (!libc) throw Error({}, "--backend native: " + message(libc.takeError()));
        jd.addGenerator(std::move(*libc));
        return made.release();
    }();
    return *j;
}

int host_vector_bits() {
    static const int bits = [] {
        llvm::StringMap<bool> f;
        if (!llvm::sys::getHostCPUFeatures(f)) return 128;  // every x86-64 and AArch64 has 128
        auto has = [&](const char* n) { return f.count(n) && f.lookup(n); };
        if (has("avx512f")) return 512;
        if (has("avx")) return 256;
        return 128;
    }();
    return bits;
}

// One kernel's function.
class Lowering {
public:
    /// `lines`: each statement's instructions carry its line of the kernel's text as a debug
    /// location (machine_code); a run's compile has none.
    Lowering(const Kernel& k, const NativeOptions& o, llvm::Module& m, const std::string& fname, const Jit& j,
             bool lines = false)
        : k_(k), o_(o), c_(m.getContext()), m_(m), b_(c_), md_(c_) {
        f64_ = arith_type(k.dtype) == DType::F64;
        r_ = f64_ ? b_.getDoubleTy() : b_.getFloatTy();
        i64_ = b_.getInt64Ty();
        auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), i64_, i64_, b_.getPtrTy()}, false);
        f_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fname, m);
        f_->addFnAttr("target-cpu", j.cpu);
        f_->addFnAttr("target-features", j.features);
        f_->setDoesNotThrow();
        f_->addParamAttr(0, llvm::Attribute::NoCapture);
        f_->addParamAttr(0, llvm::Attribute::ReadOnly);
        f_->addParamAttr(3, llvm::Attribute::NoCapture);
        f_->addParamAttr(3, llvm::Attribute::NoAlias);
        bufs_ = f_->getArg(0);
        lo_ = f_->getArg(1);
        hi_ = f_->getArg(2);
        err_ = f_->getArg(3);
        llvm::MDNode* domain = md_.createAnonymousAliasScopeDomain("presk buffers");
        in_scope_ = llvm::MDNode::get(c_, md_.createAnonymousAliasScope(domain, "inputs"));
        out_scope_ = llvm::MDNode::get(c_, md_.createAnonymousAliasScope(domain, "output"));
        split_ = split_loop(k);
        if (lines) {
            di_ = std::make_unique<llvm::DIBuilder>(m);
            llvm::DIFile* file = di_->createFile(k.name, ".");
            di_->createCompileUnit(llvm::dwarf::DW_LANG_C, file, "presk", true, "", 0);
            sp_ = di_->createFunction(file, fname, fname, file, 1, di_->createSubroutineType(di_->getOrCreateTypeArray({})), 1,
                                      llvm::DINode::FlagZero,
                                      llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
            f_->setSubprogram(sp_);
            m.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
            m.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
            int line = 2;  // the header is line 1 (print.cpp's layout: a line per statement, `}` lines)
            number_lines(k.body, line);
        }
    }

    void emit() {
        entry_ = BasicBlock::Create(c_, "entry", f_);
        b_.SetInsertPoint(entry_);
        for (int buf = 0; buf <= k_.out_buf(); ++buf) {
            const BufferType& t = buffer(buf);
            std::vector<int64_t> st(t.axes.size());
            int64_t s = 1, n = 1;
            for (size_t j = t.axes.size(); j-- > 0;) {
                st[j] = s;
                s *= t.axes[j].size;  // cannot overflow: kernel::Compiled checked the element counts
            }
            for (const Axis& a : t.axes) n *= a.size;
            strides_.push_back(std::move(st));
            llvm::LoadInst* p = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), bufs_, buf));
            if (o_.invariant_loads && n > 0) {
                const bool q = quantised(t.dtype);  // blocks of bytes, their f16 scales 2-aligned
                const uint64_t bytes = q ? (uint64_t)quant_bytes(t.dtype, n) : (uint64_t)n * (uint64_t)esize(t.dtype);
                p->setMetadata(llvm::LLVMContext::MD_dereferenceable,
                               llvm::MDNode::get(c_, {md_.createConstant(b_.getInt64(bytes))}));
                p->setMetadata(llvm::LLVMContext::MD_align,
                               llvm::MDNode::get(c_, {md_.createConstant(b_.getInt64(q ? 2 : esize(t.dtype)))}));
                p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(c_, {}));
            }
            base_.push_back(p);
        }
        BasicBlock* start = block("start");
        b_.SetInsertPoint(start);
        oob_ = block("index_out_of_range");
        overflow_ = block("integer_overflow");
        div0_ = block("division_by_zero");
        mod0_ = block("remainder_by_zero");
        {
            llvm::IRBuilder<> fb(oob_);
            for (auto*& p : oob_phi_) p = fb.CreatePHI(i64_, 4);
            for (int j = 0; j < 3; ++j) fb.CreateStore(oob_phi_[j], fb.CreateConstGEP1_64(i64_, err_, j));
            fb.CreateRet(fb.getInt32(PRESK_INDEX_OUT_OF_RANGE));
            fb.SetInsertPoint(overflow_);
            fb.CreateRet(fb.getInt32(PRESK_INT_OVERFLOW));
            for (auto [bb, which] : {std::pair{div0_, 0}, std::pair{mod0_, 1}}) {
                fb.SetInsertPoint(bb);
                fb.CreateStore(fb.getInt64(which), err_);
                fb.CreateRet(fb.getInt32(PRESK_DIV_BY_ZERO));
            }
        }
        block_stmts(k_.body);
        b_.CreateRet(b_.getInt32(PRESK_OK));
        b_.SetInsertPoint(entry_);
        b_.CreateBr(start);
        for (BasicBlock* bb : {oob_, overflow_, div0_, mod0_})
            if (llvm::pred_empty(bb)) bb->eraseFromParent();
        if (di_) di_->finalize();
    }

private:
    const Kernel& k_;
    const NativeOptions& o_;
    llvm::LLVMContext& c_;
    llvm::Module& m_;
    llvm::IRBuilder<> b_;
    llvm::MDBuilder md_;
    llvm::Function* f_ = nullptr;
    llvm::Type *r_ = nullptr, *i64_ = nullptr;
    bool f64_ = false;
    Value *bufs_ = nullptr, *lo_ = nullptr, *hi_ = nullptr, *err_ = nullptr;
    llvm::MDNode *in_scope_ = nullptr, *out_scope_ = nullptr;
    std::optional<Split> split_;
    BasicBlock *entry_ = nullptr, *oob_ = nullptr, *overflow_ = nullptr, *div0_ = nullptr, *mod0_ = nullptr;
    llvm::PHINode* oob_phi_[3] = {};
    std::vector<Value*> base_;                    // buffer pointers
    std::vector<std::vector<int64_t>> strides_;   // per buffer and axis, in elements
    std::map<int, llvm::AllocaInst*> loops_, ints_, reals_, vecs_;
    LoopIntervals open_;                          // the loops around the statement
    std::vector<int> depth_;                      // their variables, outermost first
    int64_t acc_ = 0;                             // the number of the next access (native.h)
    // Rule 1 (NativeOptions::register_output): the output element a loop holds in a slot.
    const std::vector<ExprP>* held_index_ = nullptr;
    llvm::AllocaInst* held_ = nullptr;
    // machine_code's lines: the kernel text's line of each statement, and the function's debug info.
    std::unique_ptr<llvm::DIBuilder> di_;
    llvm::DISubprogram* sp_ = nullptr;
    std::map<const Stmt*, int> lines_;

    void number_lines(const std::vector<Stmt>& body, int& line) {
        for (const Stmt& s : body) {
            lines_[&s] = line++;
            if (s.kind != Stmt::For && s.kind != Stmt::If) continue;
            number_lines(s.body, line);
            if (s.kind == Stmt::If && !s.orelse.empty()) {
                ++line;  // `} else {`
                number_lines(s.orelse, line);
            }
            ++line;  // `}`
        }
    }

    BasicBlock* block(const char* name) { return BasicBlock::Create(c_, name, f_); }
    const BufferType& buffer(int b) const { return b == k_.out_buf() ? k_.output : k_.inputs[(size_t)b]; }
    static int esize(DType t) { return t == DType::BF16 ? 2 : t == DType::F32 ? 4 : 8; }
    llvm::Type* storage(DType t) const {
        switch (t) {
        case DType::F64: return llvm::Type::getDoubleTy(c_);
        case DType::F32: return llvm::Type::getFloatTy(c_);
        case DType::BF16: return llvm::Type::getInt16Ty(c_);
        case DType::I64: return llvm::Type::getInt64Ty(c_);
        case DType::I8:
        case DType::I4: return llvm::Type::getInt8Ty(c_);  // blocks (quant_load)
        }
        return nullptr;
    }
    llvm::Type* real_type(int lanes) const { return lanes > 1 ? llvm::FixedVectorType::get(r_, lanes) : r_; }

    // A stack slot in the entry block, zeroed there when `zero`.
    llvm::AllocaInst* entry_slot(llvm::Type* t, bool zero) {
        llvm::IRBuilder<> eb(entry_);
        llvm::AllocaInst* a = eb.CreateAlloca(t);
        if (zero) eb.CreateStore(llvm::Constant::getNullValue(t), a);
        return a;
    }
    // A variable's slot, made and zeroed on first use.
    llvm::AllocaInst* slot(std::map<int, llvm::AllocaInst*>& m, int id, llvm::Type* t) {
        auto it = m.find(id);
        if (it != m.end()) return it->second;
        return m.emplace(id, entry_slot(t, true)).first->second;
    }
    llvm::AllocaInst* int_var(int id) { return slot(ints_, id, i64_); }
    llvm::AllocaInst* real_var(int id) { return slot(reals_, id, r_); }
    llvm::AllocaInst* vec_var(int id, int lanes) { return slot(vecs_, id, real_type(lanes)); }
    llvm::AllocaInst* loop_var(int id) { return slot(loops_, id, i64_); }

    // Branches to `bad` when `cond`, rarely taken; continues in a new block.
    void fail_if(Value* cond, BasicBlock* bad) {
        BasicBlock* ok = block("ok");
        b_.CreateCondBr(cond, bad, ok, md_.createBranchWeights(1, 1u << 20));
        b_.SetInsertPoint(ok);
    }

    // ---- integer expressions: the value and its interval ----
    struct Int {
        Value* v;
        Interval r;
    };

    // a `op` b with the checks its operands' intervals leave.
    Int int_op(const std::string& op, Int a, Int b) {
        const std::optional<IntStep> s = int_binary(op, a.r, b.r);
        if (!s) fail(k_, "no integer operation `" + op + "`");
        if (op == "add" || op == "sub" || op == "mul") {
            if (!s->overflow) {
                Value* v = op == "add"   ? b_.CreateNSWAdd(a.v, b.v)
                           : op == "sub" ? b_.CreateNSWSub(a.v, b.v)
                                         : b_.CreateNSWMul(a.v, b.v);
                return {v, s->value};
            }
            const llvm::Intrinsic::ID id = op == "add"   ? llvm::Intrinsic::sadd_with_overflow
                                           : op == "sub" ? llvm::Intrinsic::ssub_with_overflow
                                                         : llvm::Intrinsic::smul_with_overflow;
            Value* res = b_.CreateBinaryIntrinsic(id, a.v, b.v);
            fail_if(b_.CreateExtractValue(res, 1), overflow_);
            return {b_.CreateExtractValue(res, 0), s->value};
        }
        if (op == "div" || op == "mod") {
            if (s->zero_divisor) fail_if(b_.CreateICmpEQ(b.v, b_.getInt64(0)), op == "div" ? div0_ : mod0_);
            if (s->overflow)
                fail_if(b_.CreateAnd(b_.CreateICmpEQ(a.v, b_.getInt64((uint64_t)INT64_MIN)),
                                     b_.CreateICmpEQ(b.v, b_.getInt64((uint64_t)-1))),
                        overflow_);
            return {op == "div" ? b_.CreateSDiv(a.v, b.v) : b_.CreateSRem(a.v, b.v), s->value};
        }
        const llvm::Intrinsic::ID id = op == "min" ? llvm::Intrinsic::smin : llvm::Intrinsic::smax;
        return {b_.CreateBinaryIntrinsic(id, a.v, b.v), s->value};
    }

    Value* compare(const std::string& op, Value* a, Value* b, bool integer) {
        using P = llvm::CmpInst::Predicate;
        static const std::map<std::string, std::pair<P, P>> preds = {
            {"lt", {P::ICMP_SLT, P::FCMP_OLT}}, {"le", {P::ICMP_SLE, P::FCMP_OLE}}, {"gt", {P::ICMP_SGT, P::FCMP_OGT}},
            {"ge", {P::ICMP_SGE, P::FCMP_OGE}}, {"eq", {P::ICMP_EQ, P::FCMP_OEQ}}, {"ne", {P::ICMP_NE, P::FCMP_UNE}}};
        auto it = preds.find(op);
        if (it == preds.end()) fail(k_, "no comparison `" + op + "`");
        Value* c = integer ? b_.CreateICmp(it->second.first, a, b) : b_.CreateFCmp(it->second.second, a, b);
        return b_.CreateZExt(c, i64_);
    }

    void arity(const Expr& e, size_t n) {
        if (e.args.size() != n) fail(k_, "a malformed expression (" + std::to_string(e.args.size()) + " operands)");
    }

    Int int_expr(const Expr& e) {
        if (!e.integer || e.lanes != 1) fail(k_, "a malformed integer expression");
        switch (e.kind) {
        case Expr::Int: return {b_.getInt64((uint64_t)e.ivalue), Interval::point(e.ivalue)};
        case Expr::Loop:
            return {b_.CreateLoad(i64_, loop_var((int)e.ivalue)), open_.of((int)e.ivalue).value_or(Interval{})};
        case Expr::Scalar: return {b_.CreateLoad(i64_, int_var((int)e.ivalue)), Interval{}};
        case Expr::Load: return {load(e, 1), Interval{}};
        case Expr::Unary: {  // neg a as 0 - a (int_unary's interval and overflow)
            arity(e, 1);
            if (e.op != "neg") fail(k_, "no integer operation `" + e.op + "`");
            const Int a = int_expr(*e.args[0]);
            return int_op("sub", {b_.getInt64(0), Interval::point(0)}, a);
        }
        case Expr::Binary: {
            arity(e, 2);
            const Int a = int_expr(*e.args[0]);
            const Int b = int_expr(*e.args[1]);
            return int_op(e.op, a, b);
        }
        case Expr::Compare: {
            arity(e, 2);
            if (e.args[0]->integer) {
                const Int a = int_expr(*e.args[0]);
                const Int b = int_expr(*e.args[1]);
                return {compare(e.op, a.v, b.v, true), kTruth};
            }
            Value* a = real_expr(*e.args[0]);
            Value* b = real_expr(*e.args[1]);
            return {compare(e.op, a, b, false), kTruth};
        }
        case Expr::Select: {
            arity(e, 3);
            const Int c = int_expr(*e.args[0]);
            const Int a = int_expr(*e.args[1]);
            const Int b = int_expr(*e.args[2]);
            return {b_.CreateSelect(b_.CreateICmpNE(c.v, b_.getInt64(0)), a.v, b.v), hull(a.r, b.r)};
        }
        default: fail(k_, "a malformed integer expression");
        }
    }

    // ---- real expressions ----
    Value* call_pmath(const std::string& op, const std::vector<Value*>& args) {
        const PmathFn p = *pmath_fn(op, f64_);
        llvm::Function* fn = m_.getFunction(p.name);
        if (!fn) {
            auto* t = llvm::FunctionType::get(r_, std::vector<llvm::Type*>((size_t)p.arity, r_), false);
            fn = llvm::Function::Create(t, llvm::Function::ExternalLinkage, p.name, m_);
            fn->setDoesNotThrow();
            fn->setDoesNotAccessMemory();  // pmath reads no state and sets no errno
            fn->addFnAttr(llvm::Attribute::WillReturn);
            fn->addFnAttr(llvm::Attribute::NoSync);
        }
        auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(args[0]->getType());
        if (!vt) return b_.CreateCall(fn, args);
        const int lanes = (int)vt->getNumElements();
        Value* out = llvm::PoisonValue::get(args[0]->getType());
        for (int j = 0; j < lanes; ++j) {
            std::vector<Value*> lane;
            for (Value* a : args) lane.push_back(b_.CreateExtractElement(a, (uint64_t)j));
            out = b_.CreateInsertElement(out, b_.CreateCall(fn, lane), (uint64_t)j);
        }
        return out;
    }

    // -a as the interpreter's negation: the sign bit flipped, in the integer domain. An fneg
    // would let LLVM move the negation into a product or quotient, -(a * b) -> (-a) * b, which
    // is exact on numbers but not on a NaN's sign (x86 passes an operand's NaN through).
    Value* negate(Value* a) {
        llvm::Type* bits = a->getType()->getWithNewType(f64_ ? b_.getInt64Ty() : b_.getInt32Ty());
        Value* sign = llvm::ConstantInt::get(bits, f64_ ? 1ull << 63 : 1ull << 31);
        return b_.CreateBitCast(b_.CreateXor(b_.CreateBitCast(a, bits), sign), a->getType());
    }

    Value* real_expr(const Expr& e) {
        if (e.integer) fail(k_, "a malformed real expression");
        switch (e.kind) {
        case Expr::Real: return llvm::ConstantFP::get(r_, f64_ ? e.value : (double)(float)e.value);
        case Expr::Scalar: return b_.CreateLoad(r_, real_var((int)e.ivalue));
        case Expr::Vector: return b_.CreateLoad(real_type(e.lanes), vec_var((int)e.ivalue, e.lanes));
        case Expr::Load:
        case Expr::VLoad: return load(e, e.lanes);
        case Expr::Splat: arity(e, 1); return b_.CreateVectorSplat((unsigned)e.lanes, real_expr(*e.args[0]));
        case Expr::Unary: {
            arity(e, 1);
            Value* a = real_expr(*e.args[0]);
            if (e.op == "neg") return negate(a);
            if (e.op == "sqrt") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
            if (!pmath_fn(e.op, f64_) || e.op == "pow") fail(k_, "no operation `" + e.op + "`");
            return call_pmath(e.op, {a});
        }
        case Expr::Binary: {
            arity(e, 2);
            Value* a = real_expr(*e.args[0]);
            Value* b = real_expr(*e.args[1]);
            if (e.op == "add") return b_.CreateFAdd(a, b);
            if (e.op == "sub") return b_.CreateFSub(a, b);
            if (e.op == "mul") return b_.CreateFMul(a, b);
            if (e.op == "div") return b_.CreateFDiv(a, b);
            if (e.op == "pow") return call_pmath("pow", {a, b});
            if (e.op == "max") return b_.CreateSelect(b_.CreateFCmpOGT(b, a), b, a);  // the interpreter's order
            if (e.op == "min") return b_.CreateSelect(b_.CreateFCmpOLT(b, a), b, a);
            fail(k_, "no operation `" + e.op + "`");
        }
        case Expr::Select: {
            arity(e, 3);
            const Int c = int_expr(*e.args[0]);
            Value* a = real_expr(*e.args[1]);
            Value* b = real_expr(*e.args[2]);
            return b_.CreateSelect(b_.CreateICmpNE(c.v, b_.getInt64(0)), a, b);
        }
        case Expr::ToReal: arity(e, 1); return b_.CreateSIToFP(int_expr(*e.args[0]).v, r_);
        default: fail(k_, "a malformed real expression");
        }
    }

    // ---- memory ----
    // The checked element address of an access of `lanes` elements to `buf` at `index`
    // (already evaluated to `iv`), access number `number`; for a quantised buffer, whose
    // elements are in blocks, the element's number (an i64) instead.
    Value* address(int buf, const std::vector<ExprP>& index, const std::vector<Int>& iv, int lanes, int64_t number) {
        const BufferType& t = buffer(buf);
        for (size_t j = 0; j < iv.size(); ++j) {
            const int64_t last = t.axes[j].size - (j + 1 == iv.size() ? lanes : 1);
            if (iv[j].r.within(0, last)) continue;
            BasicBlock* from = b_.GetInsertBlock();
            if (last < 0) {  // an empty axis (or one narrower than the lanes): the access always fails
                b_.CreateBr(oob_);
                b_.SetInsertPoint(block("unreachable"));
            } else {
                fail_if(b_.CreateICmpUGT(iv[j].v, b_.getInt64((uint64_t)last)), oob_);
            }
            oob_phi_[0]->addIncoming(b_.getInt64((uint64_t)number), from);
            oob_phi_[1]->addIncoming(b_.getInt64(j), from);
            oob_phi_[2]->addIncoming(iv[j].v, from);
        }
        const std::vector<int64_t>& st = strides_[(size_t)buf];
        if (quantised(t.dtype)) {
            Value* e = b_.getInt64(0);
            for (size_t j = 0; j < iv.size(); ++j) e = b_.CreateAdd(e, b_.CreateMul(iv[j].v, b_.getInt64((uint64_t)st[j])));
            return e;
        }
        const int64_t es = esize(t.dtype);
        if (o_.loop_addresses) {
            // Byte offsets: the terms that are not affine in the loops first, then the
            // constant, then one term per loop, the outermost first and the innermost last.
            Value* off = nullptr;
            int64_t cst = 0;
            std::map<int, int64_t> coef;
            bool ok = true;
            auto plus = [&](Value* v) { off = off ? b_.CreateAdd(off, v) : v; };
            for (size_t j = 0; j < iv.size() && ok; ++j) {
                const std::optional<Affine> a = scaled(affine(*index[j]), st[j] * es);
                if (!a) {
                    plus(b_.CreateMul(iv[j].v, b_.getInt64((uint64_t)(st[j] * es))));
                    continue;
                }
                ok = !__builtin_add_overflow(cst, a->c, &cst);
                for (auto [v, c] : a->coef) ok = ok && !__builtin_add_overflow(coef[v], c, &coef[v]);
            }
            if (ok) {
                if (cst != 0 || !off) plus(b_.getInt64((uint64_t)cst));
                for (int v : depth_) {
                    auto it = coef.find(v);
                    if (it == coef.end() || it->second == 0) continue;
                    plus(b_.CreateMul(b_.CreateLoad(i64_, loop_var(v)), b_.getInt64((uint64_t)it->second)));
                }
                return b_.CreateInBoundsGEP(b_.getInt8Ty(), base_[(size_t)buf], off);
            }
        }
        Value* off = b_.getInt64(0);
        for (size_t j = 0; j < iv.size(); ++j)
            off = b_.CreateAdd(off, b_.CreateMul(iv[j].v, b_.getInt64((uint64_t)st[j])));
        return b_.CreateInBoundsGEP(storage(t.dtype), base_[(size_t)buf], off);
    }

    void mark(llvm::Instruction* i, int buf, bool load) {
        if (!o_.invariant_loads) return;
        const bool input = buf != k_.out_buf();
        i->setMetadata(llvm::LLVMContext::MD_alias_scope, input ? in_scope_ : out_scope_);
        i->setMetadata(llvm::LLVMContext::MD_noalias, input ? out_scope_ : in_scope_);
        if (input && load) i->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(c_, {}));
    }

    bool held(int buf, const std::vector<ExprP>& index, int lanes) const {
        if (!held_ || buf != k_.out_buf() || lanes != 1) return false;
        for (size_t j = 0; j < index.size(); ++j)
            if (!same(*index[j], *(*held_index_)[j])) return false;
        return true;
    }

    // A load (Load or VLoad) in the arithmetic type (i64 for an integer load).
    Value* load(const Expr& e, int lanes) {
        std::vector<Int> iv;
        for (const ExprP& i : e.args) iv.push_back(int_expr(*i));
        const int64_t number = acc_++;
        const DType dt = buffer(e.buf).dtype;
        if (quantised(dt)) return quant_load(e.buf, address(e.buf, e.args, iv, lanes, number), dt, lanes);
        llvm::Type* st = storage(dt);
        if (held(e.buf, e.args, lanes)) return widen(b_.CreateLoad(st, held_), dt);
        llvm::Type* lt = lanes > 1 ? llvm::FixedVectorType::get(st, lanes) : st;
        Value* p = address(e.buf, e.args, iv, lanes, number);
        llvm::LoadInst* ld = b_.CreateAlignedLoad(lt, p, llvm::Align(esize(dt)));
        mark(ld, e.buf, true);
        return widen(ld, dt);
    }

    // Element `k` (an i64) of the quantised buffer `buf` and the `lanes` - 1 after it, each
    // f32(q) * s in the arithmetic type (kernel/quant.h's blocks; exact in f32 and f64).
    Value* quant_load(int buf, Value* k, DType dt, int lanes) {
        auto i64 = [&](int64_t v) { return b_.getInt64((uint64_t)v); };
        auto i32 = [&](uint32_t v) { return b_.getInt32(v); };
        Value* out = lanes > 1 ? llvm::PoisonValue::get(llvm::FixedVectorType::get(r_, (unsigned)lanes)) : nullptr;
        for (int l = 0; l < lanes; ++l) {
            Value* e = l ? b_.CreateAdd(k, i64(l)) : k;
            Value* block = b_.CreateInBoundsGEP(b_.getInt8Ty(), base_[(size_t)buf],
                                                b_.CreateMul(b_.CreateUDiv(e, i64(kQuantBlock)), i64(quant_block_bytes(dt))));
            Value* j = b_.CreateURem(e, i64(kQuantBlock));
            // The f16 scale: its bits moved into an f32's ((h & 0x7FFF) << 13, times 2^112 for the
            // exponent's bias: exact for normal and subnormal halves), infinities and NaNs set
            // apart, the sign put back.
            llvm::LoadInst* hl = b_.CreateAlignedLoad(b_.getInt16Ty(), block, llvm::Align(2));
            mark(hl, buf, true);
            Value* h = b_.CreateZExt(hl, b_.getInt32Ty());
            Value* mag = b_.CreateShl(b_.CreateAnd(h, i32(0x7FFF)), 13);
            Value* fin = b_.CreateBitCast(
                b_.CreateFMul(b_.CreateBitCast(mag, b_.getFloatTy()), llvm::ConstantFP::get(b_.getFloatTy(), 0x1p112)),
                b_.getInt32Ty());
            Value* special = b_.CreateICmpEQ(b_.CreateAnd(h, i32(0x7C00)), i32(0x7C00));
            Value* bits = b_.CreateSelect(special, b_.CreateOr(mag, i32(0x7F800000)), fin);
            bits = b_.CreateOr(bits, b_.CreateShl(b_.CreateAnd(h, i32(0x8000)), 16));
            Value* s = b_.CreateBitCast(bits, b_.getFloatTy());
            Value* q = nullptr;
            Value* qs = b_.CreateInBoundsGEP(b_.getInt8Ty(), block, i64(2));
            if (dt == DType::I8) {
                llvm::LoadInst* ql = b_.CreateLoad(b_.getInt8Ty(), b_.CreateInBoundsGEP(b_.getInt8Ty(), qs, j));
                mark(ql, buf, true);
                q = b_.CreateSExt(ql, b_.getInt32Ty());
            } else {
                const int64_t half = kQuantBlock / 2;
                llvm::LoadInst* ql =
                    b_.CreateLoad(b_.getInt8Ty(), b_.CreateInBoundsGEP(b_.getInt8Ty(), qs, b_.CreateURem(j, i64(half))));
                mark(ql, buf, true);
                Value* shift = b_.CreateTrunc(b_.CreateMul(b_.CreateUDiv(j, i64(half)), i64(4)), b_.getInt32Ty());
                Value* nib = b_.CreateAnd(b_.CreateLShr(b_.CreateZExt(ql, b_.getInt32Ty()), shift), i32(15));
                q = b_.CreateSub(nib, i32(8));
            }
            Value* v = b_.CreateFMul(b_.CreateSIToFP(q, b_.getFloatTy()), s);  // exact: at most 8 + 11 bits
            if (f64_) v = b_.CreateFPExt(v, r_);
            out = lanes > 1 ? b_.CreateInsertElement(out, v, (uint64_t)l) : v;
        }
        return out;
    }

    // Storage -> arithmetic type: exact widening (bf16 is the top half of an f32), or the one
    // rounding of an f64 element read by an f32 kernel.
    Value* widen(Value* v, DType dt) {
        llvm::Type* to = v->getType()->getWithNewType(r_);
        switch (dt) {
        case DType::I64:
        case DType::I8:
        case DType::I4: return v;  // quantised: quant_load's value already
        case DType::BF16: {
            llvm::Type* i32 = to->getWithNewType(b_.getInt32Ty());
            Value* f = b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, i32), 16), to->getWithNewType(b_.getFloatTy()));
            return f64_ ? b_.CreateFPExt(f, to) : f;
        }
        case DType::F32: return f64_ ? b_.CreateFPExt(v, to) : v;
        case DType::F64: return f64_ ? v : b_.CreateFPTrunc(v, to);
        }
        return v;
    }

    // Arithmetic -> storage type, as the interpreter's round_real: f32 one rounding, bf16
    // through f32 to nearest even (src/quant/fp16.h's fp32_to_bf16: a NaN keeps its upper
    // bits with the quiet bit set).
    Value* narrow(Value* v, DType dt) {
        llvm::Type* t = v->getType();
        switch (dt) {
        case DType::I64:
        case DType::I8:
        case DType::I4: return v;  // never stored: a kernel's output is not quantised
        case DType::F64: return f64_ ? v : b_.CreateFPExt(v, t->getWithNewType(b_.getDoubleTy()));
        case DType::F32: return f64_ ? b_.CreateFPTrunc(v, t->getWithNewType(b_.getFloatTy())) : v;
        case DType::BF16: {
            Value* f = f64_ ? b_.CreateFPTrunc(v, t->getWithNewType(b_.getFloatTy())) : v;
            llvm::Type* i32 = t->getWithNewType(b_.getInt32Ty());
            Value* u = b_.CreateBitCast(f, i32);
            auto k32 = [&](uint32_t c) { return llvm::ConstantInt::get(i32, c); };
            Value* hi = b_.CreateLShr(u, k32(16));
            Value* nan = b_.CreateICmpUGT(b_.CreateAnd(u, k32(0x7FFFFFFFu)), k32(0x7F800000u));
            Value* sum = b_.CreateAdd(b_.CreateAdd(u, k32(0x7FFFu)), b_.CreateAnd(hi, k32(1)));
            Value* rounded = b_.CreateLShr(sum, k32(16));
            Value* r = b_.CreateSelect(nan, b_.CreateOr(hi, k32(0x40u)), rounded);
            return b_.CreateTrunc(r, t->getWithNewType(b_.getInt16Ty()));
        }
        }
        return v;
    }

    void store(const Stmt& s) {
        const Expr& e = *s.value;
        int64_t n_index = 0;
        for (const ExprP& i : s.index) n_index += accesses(i);
        const int64_t first = acc_;
        acc_ = first + n_index;  // the value's loads are numbered after the index's
        Value* v = e.integer ? int_expr(e).v : real_expr(e);
        const int64_t after = acc_;
        acc_ = first;
        std::vector<Int> iv;
        for (const ExprP& i : s.index) iv.push_back(int_expr(*i));
        const int64_t number = after;
        acc_ = after + 1;
        const DType dt = buffer(s.buf).dtype;
        Value* x = narrow(v, dt);
        if (held(s.buf, s.index, e.lanes)) {
            b_.CreateStore(x, held_);
            return;
        }
        Value* p = address(s.buf, s.index, iv, e.lanes, number);
        mark(b_.CreateAlignedStore(x, p, llvm::Align(esize(dt))), s.buf, false);
    }

    // ---- statements ----
    void block_stmts(const std::vector<Stmt>& body) {
        for (const Stmt& s : body) stmt(s, split_ && &s == split_->loop);
    }

    // Rule 1: whether loop `s` (run at least once) may hold its output element in a slot:
    // every access to the output in its body a scalar one at one index, made of constants and
    // the loops around it, proven in range; an output whose store does not round (not bf16).
    const std::vector<ExprP>* holdable(const Stmt& s) const {
        const DType dt = k_.output.dtype;
        if (!o_.register_output || held_ || (dt != DType::I64 && dt != arith_type(k_.dtype))) return nullptr;
        const std::vector<ExprP>* first = nullptr;
        bool ok = true, stored = false;
        each_access(s.body, k_.out_buf(), [&](const std::vector<ExprP>& index, bool vector, bool is_store) {
            stored = stored || is_store;
            if (vector) ok = false;
            if (!ok) return;
            if (!first) {
                first = &index;
                return;
            }
            for (size_t j = 0; j < index.size() && ok; ++j) ok = same(*index[j], *(*first)[j]);
        });
        if (!ok || !stored || !first) return nullptr;
        for (size_t j = 0; j < first->size(); ++j) {
            const std::optional<Interval> r = pure_interval(*(*first)[j], open_);
            const int64_t last = k_.output.axes[j].size - 1;
            if (!r || !r->within(0, last)) return nullptr;
        }
        return first;
    }

    void for_stmt(const Stmt& s, bool split) {
        if (!split && s.lo >= s.hi) {  // no iteration: nothing of the body runs
            acc_ += accesses(s.body);
            return;
        }
        const std::vector<ExprP>* hold = split ? nullptr : holdable(s);
        Value* out_p = nullptr;
        if (hold) {
            std::vector<Int> iv;
            for (const ExprP& i : *hold) iv.push_back(int_expr(*i));  // pure and in range: no check, no access
            out_p = address(k_.out_buf(), *hold, iv, 1, -1);
            llvm::Type* st = storage(k_.output.dtype);
            held_ = entry_slot(st, false);
            llvm::LoadInst* ld = b_.CreateAlignedLoad(st, out_p, llvm::Align(esize(k_.output.dtype)));
            mark(ld, k_.out_buf(), true);
            b_.CreateStore(ld, held_);
            held_index_ = hold;
        }
        llvm::AllocaInst* iv = loop_var(s.var);
        Value* lo = b_.getInt64((uint64_t)s.lo);
        Value* hi = b_.getInt64((uint64_t)s.hi);
        if (split) {
            lo = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, lo_, lo);
            hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, hi_, hi);
        }
        b_.CreateStore(lo, iv);
        BasicBlock* head = block("loop");
        BasicBlock* body = block("body");
        BasicBlock* exit = block("done");
        b_.CreateBr(head);
        b_.SetInsertPoint(head);
        b_.CreateCondBr(b_.CreateICmpSLT(b_.CreateLoad(i64_, iv), hi), body, exit);
        b_.SetInsertPoint(body);
        open_.enter(s);
        depth_.push_back(s.var);
        block_stmts(s.body);
        depth_.pop_back();
        open_.leave(s);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, iv), b_.getInt64(1), "", true, true), iv);
        b_.CreateBr(head);
        b_.SetInsertPoint(exit);
        if (hold) {
            mark(b_.CreateAlignedStore(b_.CreateLoad(storage(k_.output.dtype), held_), out_p,
                                       llvm::Align(esize(k_.output.dtype))),
                 k_.out_buf(), false);
            held_ = nullptr;
            held_index_ = nullptr;
        }
    }

    // A statement, its instructions at its kernel line when machine_code asks for lines (the
    // location of the statement around it restored after: a loop's increment is the loop's).
    void stmt(const Stmt& s, bool split) {
        if (!sp_) return stmt_code(s, split);
        const llvm::DebugLoc around = b_.getCurrentDebugLocation();
        b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, (unsigned)lines_.at(&s), 0, sp_));
        stmt_code(s, split);
        b_.SetCurrentDebugLocation(around);
    }

    void stmt_code(const Stmt& s, bool split) {
        switch (s.kind) {
        case Stmt::For: for_stmt(s, split); return;
        case Stmt::Assign: {
            const Expr& e = *s.value;
            if (e.integer) b_.CreateStore(int_expr(e).v, int_var(s.var));
            else if (e.lanes > 1) b_.CreateStore(real_expr(e), vec_var(s.var, e.lanes));
            else b_.CreateStore(real_expr(e), real_var(s.var));
            return;
        }
        case Stmt::Store:
        case Stmt::VStore: store(s); return;
        case Stmt::If: {
            const Int c = int_expr(*s.value);
            BasicBlock* then = block("then");
            BasicBlock* orelse = block("else");
            BasicBlock* join = block("endif");
            b_.CreateCondBr(b_.CreateICmpNE(c.v, b_.getInt64(0)), then, orelse);
            b_.SetInsertPoint(then);
            block_stmts(s.body);
            b_.CreateBr(join);
            b_.SetInsertPoint(orelse);
            block_stmts(s.orelse);
            b_.CreateBr(join);
            b_.SetInsertPoint(join);
            return;
        }
        }
    }
};

// LLVM's pipeline at `o`'s level with its switches: the loop unroller (and the interleaving of
// vectorized loops) for `unroll`, the loop and SLP vectorizers for `vectorize`.
void optimize(llvm::Module& m, const NativeOptions& o, llvm::TargetMachine* tm) {
    llvm::PipelineTuningOptions pto;
    pto.LoopUnrolling = o.unroll;
    pto.LoopInterleaving = o.unroll;
    pto.LoopVectorization = o.vectorize;
    pto.SLPVectorization = o.vectorize;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm, pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel levels[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                              llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    const llvm::OptimizationLevel level = levels[std::clamp(o.opt_level, 0, 3)];
    llvm::ModulePassManager mpm =
        o.opt_level <= 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
    mpm.run(m, mam);
}

/// `k` lowered into a fresh module of its own context as function `fname`, verified and
/// optimized (with the statements' lines for machine_code).
llvm::orc::ThreadSafeModule build_module(const Kernel& k, const NativeOptions& o, Jit& j, const std::string& fname,
                                         bool lines) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = std::make_unique<llvm::Module>(fname, *ctx);
    m->setDataLayout(j.lljit->getDataLayout());
    m->setTargetTriple(j.lljit->getTargetTriple().str());
    Lowering(k, o, *m, fname, j, lines).emit();
    std::string why;
    llvm::raw_string_ostream os(why);
    if (llvm::verifyModule(*m, &os)) fail(k, "LLVM refuses the generated code: " + os.str());
    optimize(*m, o, j.tm.get());
    return llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx));
}

/// `k` compiled by the JIT as function `fname` under a resource tracker of its own (j.mu held).
std::pair<llvm::orc::ResourceTrackerSP, llvm::orc::ExecutorAddr> jit_compile(const Kernel& k, const NativeOptions& o, Jit& j,
                                                                            const std::string& fname) {
    llvm::orc::ResourceTrackerSP rt = j.lljit->getMainJITDylib().createResourceTracker();
    if (auto e = j.lljit->addIRModule(rt, build_module(k, o, j, fname, false)))
        fail(k, "LLVM's JIT refuses the module: " + message(std::move(e)));
    auto addr = j.lljit->lookup(fname);
    if (!addr) {
        llvm::consumeError(rt->remove());
        fail(k, "LLVM's JIT could not compile the kernel: " + message(addr.takeError()));
    }
    return {rt, *addr};
}

} // namespace

bool have_llvm() { return true; }

std::string native_cpu() { return llvm::sys::getHostCPUName().str(); }

NativeCode compile_llvm(const Kernel& k, const NativeOptions& o) {
    { Compiled checked(k); }  // the interpreter's checks of a malformed kernel, and its messages
    Jit& j = jit();
    std::string key = std::to_string(o.opt_level);
    for (bool b : {o.register_output, o.loop_addresses, o.unroll, o.vectorize, o.invariant_loads}) key += b ? '1' : '0';
    key += "split at " + std::to_string(k.split_depth) + "\n" + to_string(k);  // the split is not in the text
    std::lock_guard<std::mutex> lock(j.mu);
    if (auto it = j.memo.find(key); it != j.memo.end()) {
        if (std::shared_ptr<void> held = it->second.second.lock()) return NativeCode{it->second.first, std::move(held), ""};
    }
    const std::string fname = "presk_k" + std::to_string(j.next++);
    auto [rt, addr] = jit_compile(k, o, j, fname);
    NativeCode code;
    code.fn = addr.toPtr<presk_kernel_fn>();
    code.keep = std::shared_ptr<void>(new llvm::orc::ResourceTrackerSP(rt), [](void* p) {
        auto* held = static_cast<llvm::orc::ResourceTrackerSP*>(p);
        {
            std::lock_guard<std::mutex> release(jit().mu);
            llvm::consumeError((*held)->remove());
        }
        delete held;
    });
    j.memo[key] = {code.fn, code.keep};
    return code;
}

MachineListing machine_code(const Kernel& k, const NativeOptions& o) {
    { Compiled checked(k); }
    Jit& j = jit();
    std::lock_guard<std::mutex> lock(j.mu);
    const std::string fname = "presk_explain" + std::to_string(j.next++);
    // As a run compiles it: through the JIT, its object file kept on the way to the linker.
    j.capture = true;
    j.captured.clear();
    std::string run_object;
    try {
        auto [rt, addr] = jit_compile(k, o, j, fname);
        run_object = std::move(j.captured);
        llvm::consumeError(rt->remove());
    } catch (...) {
        j.capture = false;
        throw;
    }
    j.capture = false;
    // With the lines: the same module with debug locations, emitted by the JIT's target machine.
    llvm::orc::ThreadSafeModule tsm = build_module(k, o, j, fname, true);
    llvm::SmallVector<char, 0> object;
    {
        llvm::raw_svector_ostream os(object);
        llvm::legacy::PassManager pm;
        if (j.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
            fail(k, "LLVM's target machine cannot emit an object file");
        tsm.withModuleDo([&](llvm::Module& m) { pm.run(m); });
    }
    const std::string triple = j.lljit->getTargetTriple().str();
    MachineListing out = list_object(std::string(object.data(), object.size()), fname, triple, j.cpu, j.features);
    out.run_bytes = function_bytes(run_object, fname);
    out.cpu = native_cpu();
    return out;
}

#endif

} // namespace presk::kernel
