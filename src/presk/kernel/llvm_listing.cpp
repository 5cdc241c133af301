// A function's machine code in an object file, disassembled, with the DWARF line of each
// instruction (kernel/llvm_listing.h).
#include "kernel/llvm_listing.h"

#include "lang/source.h"

#ifdef PRESK_HAVE_LLVM
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/TargetSelect.h>
#endif

namespace presk::kernel {

#ifndef PRESK_HAVE_LLVM

std::vector<uint8_t> function_bytes(const std::string&, const std::string&) {
    throw Error({}, "presk explain: presk was built without LLVM (install llvm-16-dev)");
}

MachineListing list_object(const std::string&, const std::string&, const std::string&, const std::string&,
                           const std::string&) {
    throw Error({}, "presk explain: presk was built without LLVM (install llvm-16-dev)");
}

#else

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error({}, "machine code: " + msg); }

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

/// The function's place in the object: its section, offset in it, and bytes.
struct Found {
    llvm::object::SectionRef section;
    uint64_t offset = 0;
    std::vector<uint8_t> bytes;
};

Found find(const llvm::object::ObjectFile& obj, const std::string& fname) {
    for (const llvm::object::SymbolRef& sym : obj.symbols()) {
        auto name = sym.getName();
        if (!name) {
            llvm::consumeError(name.takeError());
            continue;
        }
        if (*name != fname) continue;
        auto type = sym.getType();
        if (!type) {
            llvm::consumeError(type.takeError());
            continue;
        }
        if (*type != llvm::object::SymbolRef::ST_Function) continue;  // not the definition
        auto sec = sym.getSection();
        auto value = sym.getValue();
        if (!sec || !value || *sec == obj.section_end()) fail("the symbol " + fname + " has no section");
        const uint64_t size = llvm::object::ELFSymbolRef(sym).getSize();
        auto contents = (*sec)->getContents();
        if (!contents) fail(message(contents.takeError()));
        if (*value + size > contents->size()) fail("the symbol " + fname + " runs past its section");
        Found f;
        f.section = **sec;
        f.offset = *value;
        f.bytes.assign(contents->bytes_begin() + *value, contents->bytes_begin() + *value + size);
        return f;
    }
    fail("the object file has no function " + fname);
}

std::unique_ptr<llvm::object::ObjectFile> open(const std::string& object) {
    auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "kernel.o"));
    if (!obj) fail(message(obj.takeError()));
    if (!(*obj)->isELF()) fail("the object file is not ELF");
    return std::move(*obj);
}

} // namespace

std::vector<uint8_t> function_bytes(const std::string& object, const std::string& fname) {
    return find(*open(object), fname).bytes;
}

MachineListing list_object(const std::string& object, const std::string& fname, const std::string& triple,
                           const std::string& cpu, const std::string& features) {
    static const bool ready = [] {
        llvm::InitializeNativeTargetDisassembler();
        return true;
    }();
    (void)ready;
    const std::unique_ptr<llvm::object::ObjectFile> obj = open(object);
    const Found f = find(*obj, fname);
    MachineListing out;
    out.bytes = f.bytes;
    std::string err;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
    if (!target) fail(err);
    std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple));
    llvm::MCTargetOptions mco;
    std::unique_ptr<llvm::MCAsmInfo> mai(mri ? target->createMCAsmInfo(*mri, triple, mco) : nullptr);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, cpu, features));
    std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
    if (!mri || !mai || !sti || !mii) fail("LLVM has no machine description of " + triple);
    llvm::MCContext ctx(llvm::Triple(triple), mai.get(), mri.get(), sti.get());
    std::unique_ptr<llvm::MCDisassembler> dis(target->createMCDisassembler(*sti, ctx));
    std::unique_ptr<llvm::MCInstPrinter> printer(
        target->createMCInstPrinter(llvm::Triple(triple), mai->getAssemblerDialect(), *mai, *mii, *mri));
    if (!dis || !printer) fail("LLVM has no disassembler for " + triple);
    const std::unique_ptr<llvm::DWARFContext> dwarf = llvm::DWARFContext::create(*obj);
    const llvm::ArrayRef<uint8_t> code(f.bytes);
    for (uint64_t at = 0; at < code.size();) {
        llvm::MCInst inst;
        uint64_t size = 0;
        MachineInstr mi;
        mi.offset = at;
        const auto status = dis->getInstruction(inst, size, code.slice(at), at, llvm::nulls());
        if (status != llvm::MCDisassembler::Success || size == 0) {
            size = 1;
            mi.text = "(not an instruction)";
        } else {
            llvm::raw_string_ostream os(mi.text);
            printer->printInst(&inst, at, "", *sti, os);
            os.flush();
            const size_t first = mi.text.find_first_not_of(" \t");
            mi.text = first == std::string::npos ? "" : mi.text.substr(first);
            for (char& c : mi.text)
                if (c == '\t') c = ' ';
        }
        mi.bytes.assign(code.begin() + at, code.begin() + std::min<uint64_t>(at + size, code.size()));
        const llvm::DILineInfo line = dwarf->getLineInfoForAddress(
            {f.offset + at, f.section.getIndex()},
            llvm::DILineInfoSpecifier(llvm::DILineInfoSpecifier::FileLineInfoKind::RawValue,
                                      llvm::DILineInfoSpecifier::FunctionNameKind::None));
        mi.line = (int)line.Line;
        out.instrs.push_back(std::move(mi));
        at += size;
    }
    return out;
}

#endif

} // namespace presk::kernel
