#include "core/core.h"

namespace presk::core {

TypeP Function::type_of(int id) const {
    if (id < 0) return nullptr;
    if (id < arity()) return param_types[id];
    const Let* l = let_of(id);
    return l ? l->type : nullptr;
}

const Let* Function::let_of(int id) const {
    int k = id - arity();
    if (k < 0 || k >= (int)body.size()) return nullptr;
    return &body[k];
}

int Function::emit(Let l) {
    l.id = next_id();
    body.push_back(std::move(l));
    return body.back().id;
}

const Function* Program::find(const std::string& name) const {
    for (const Function& f : functions)
        if (f.name == name) return &f;
    return nullptr;
}

Function* Program::find(const std::string& name) {
    for (Function& f : functions)
        if (f.name == name) return &f;
    return nullptr;
}

Function& Program::add(Function f) {
    if (find(f.name)) throw Error({}, "function '" + f.name + "' defined twice");
    functions.push_back(std::move(f));
    return functions.back();
}

} // namespace presk::core
