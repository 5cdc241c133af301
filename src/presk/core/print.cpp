// The text form of PSK-Core (presk dump --stage core).
#include "core/core.h"

namespace presk::core {

std::string to_string(const Scalar& s) {
    switch (s.kind) {
    case Scalar::Num: return s.text;
    case Scalar::Neg: return "-" + to_string(*s.args[0]);
    case Scalar::Bin: return "(" + to_string(*s.args[0]) + " " + s.text + " " + to_string(*s.args[1]) + ")";
    case Scalar::Call: return s.text + "(" + to_string(*s.args[0]) + ")";
    }
    return "?";
}

namespace {

std::string arg_list(const std::vector<int>& args) {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", %" : "%") + std::to_string(args[i]);
    return s;
}

std::string attrs(const Let& l) {
    std::string s;
    for (size_t i = 0; i < l.ints.size(); ++i) s += (i ? ", " : "") + std::to_string(l.ints[i]);
    if (!l.text.empty()) s += (s.empty() ? "\"" : ", \"") + l.text + "\"";
    return s.empty() ? s : "[" + s + "]";
}

std::string rhs(const Let& l) {
    switch (l.op) {
    case Op::Prim: return l.name + attrs(l) + "(" + arg_list(l.args) + ")";
    case Op::Lit: return l.text;
    case Op::Call: return "call " + l.name + "(" + arg_list(l.args) + ")";
    case Op::Loop: {
        return l.text + "[" + std::to_string(l.ints[0]) + "] " + l.name + "(" + arg_list(l.args) + ")";
    }
    case Op::Tuple: return "(" + arg_list(l.args) + ")";
    case Op::Record: {
        std::string s = "{";
        for (size_t i = 0; i < l.args.size(); ++i) s += (i ? ", " : "") + l.names[i] + ": %" + std::to_string(l.args[i]);
        return s + "}";
    }
    case Op::Get: return "%" + std::to_string(l.args[0]) + "." + (l.name.empty() ? std::to_string(l.ints[0]) : l.name);
    }
    return "?";
}

} // namespace

std::string to_string(const Function& f) {
    std::string s = "fn " + f.name + "(";
    for (int i = 0; i < f.arity(); ++i)
        s += (i ? ", %" : "%") + std::to_string(i) + " " + f.param_names[i] + " : " + to_string(*f.param_types[i]);
    s += ") -> " + (f.type_of(f.result) ? to_string(*f.type_of(f.result)) : std::string("?")) + " {\n";
    for (const Let& l : f.body) s += "  %" + std::to_string(l.id) + " = " + rhs(l) + " : " + to_string(*l.type) + "\n";
    return s + "  return %" + std::to_string(f.result) + "\n}\n";
}

std::string to_string(const Program& p) {
    std::string s;
    for (const ParamSpec& ps : p.params) {
        s += "param " + ps.path + " : " + to_string(*ps.type) + " = " + ps.init;
        if (!ps.args.empty()) {
            s += "(";
            for (size_t i = 0; i < ps.args.size(); ++i) s += (i ? ", " : "") + to_string(*ps.args[i]);
            s += ")";
        }
        s += "\n";
    }
    if (!p.params.empty()) s += "\n";
    for (const Function& f : p.functions) s += to_string(f) + "\n";
    s += "entry " + p.entry + "\n";
    return s;
}

} // namespace presk::core
