// Fusion groups: the partition of a function's lets into launches (docs/presk.md, "Fusion
// groups"). An elementwise let whose value is read by exactly one let, itself elementwise, and
// is not the function's result, is computed inside that consumer's loop nest; the chains (in
// general, trees) of such lets end at a root, whose site names the group. A contraction a plan
// gives a bias epilogue is computed with the add that reads it; its own site names that group.
#include <algorithm>
#include <map>

#include "kernel/layout.h"
#include "lang/source.h"
#include "realize/host.h"

namespace presk::realize::detail {

std::string site_of(const core::Function& f, const core::Let& l) { return f.name + "/%" + std::to_string(l.id); }

std::vector<bool> literal_args(const core::Function& f, const std::vector<int>& ids) {
    std::vector<bool> r;
    for (int id : ids) {
        const core::Let* l = f.let_of(id);
        r.push_back(l && l->op == core::Op::Lit);
    }
    return r;
}

kernel::Node node_of(const core::Function& f, const core::Let& l) {
    kernel::Node n;
    n.prim = l.name;
    n.ints = l.ints;
    n.text = l.text;
    for (int id : l.args) n.operands.push_back(f.type_of(id));
    n.result = l.type;
    return n;
}

std::optional<BiasAdd> bias_add_of(const core::Function& f, int pos) {
    const int n = (int)f.body.size(), id = pos + f.arity();
    if (pos < 0 || pos >= n || id == f.result) return std::nullopt;
    const core::Let& c = f.body[(size_t)pos];
    if (c.op != core::Op::Prim || !kernel::is_contraction(c.name)) return std::nullopt;
    std::optional<BiasAdd> found;
    for (int p = pos + 1; p < n; ++p) {
        const core::Let& l = f.body[(size_t)p];
        if (std::find(l.args.begin(), l.args.end(), id) == l.args.end()) continue;
        if (found || l.op != core::Op::Prim || l.name != "add" || l.args.size() != 2 || l.args[0] != id || l.args[1] == id)
            return std::nullopt;
        found = BiasAdd{p, l.args[1]};
    }
    return found;
}

Partition partition(const core::Function& f, const std::set<std::string>& epilogues) {
    const int n = (int)f.body.size(), arity = f.arity();
    auto launches = [&](int p) {
        const core::Let& l = f.body[(size_t)p];
        return l.op == core::Op::Prim && !kernel::is_host_prim(l.name);
    };
    auto elementwise = [&](int p) { return launches(p) && kernel::is_elementwise(f.body[(size_t)p].name); };
    // The distinct lets reading each value.
    std::vector<std::vector<int>> readers((size_t)f.next_id());
    for (int p = 0; p < n; ++p)
        for (int id : f.body[(size_t)p].args)
            if (id >= 0 && id < f.next_id() && (readers[(size_t)id].empty() || readers[(size_t)id].back() != p))
                readers[(size_t)id].push_back(p);

    // The planned epilogues: each bias add, by position, with its contraction's.
    std::map<int, int> folds;
    for (int p = 0; p < n && !epilogues.empty(); ++p)
        if (epilogues.count(site_of(f, f.body[(size_t)p])))
            if (const std::optional<BiasAdd> b = bias_add_of(f, p)) folds[b->add] = p;

    Partition part;
    part.group_of.assign((size_t)n, -1);
    std::vector<int> roots;  // by group number as first assigned (roots in reverse order)
    std::vector<int> size;   // members of each group so far
    std::vector<bool> epilogue;  // by group number as first assigned
    for (int p = n; p-- > 0;) {
        if (!launches(p)) continue;
        const int id = p + arity;
        const auto& r = readers[(size_t)id];
        if (r.size() == 1 && folds.count(r[0]) && folds.at(r[0]) == p) {  // a contraction into its epilogue
            part.group_of[(size_t)p] = part.group_of[(size_t)r[0]];
            epilogue[(size_t)part.group_of[(size_t)p]] = true;
        } else if (elementwise(p) && !folds.count(p) && id != f.result && r.size() == 1 && elementwise(r[0]) &&
                   !folds.count(r[0]) &&
                   size[(size_t)part.group_of[(size_t)r[0]]] < kMaxGroupMembers) {
            part.group_of[(size_t)p] = part.group_of[(size_t)r[0]];
            ++size[(size_t)part.group_of[(size_t)p]];
        } else {
            size.push_back(1);
            epilogue.push_back(false);
            part.group_of[(size_t)p] = (int)roots.size();
            roots.push_back(p);
        }
    }
    // Number the groups in the order of their roots.
    const int g = (int)roots.size();
    for (int& k : part.group_of)
        if (k >= 0) k = g - 1 - k;
    part.groups.resize((size_t)g);
    for (int k = 0; k < g; ++k) part.groups[(size_t)k].epilogue = epilogue[(size_t)(g - 1 - k)];
    for (int p = 0; p < n; ++p)
        if (part.group_of[(size_t)p] >= 0) part.groups[(size_t)part.group_of[(size_t)p]].lets.push_back(p);

    for (FusionGroup& fg : part.groups) {
        const core::Let& root = f.body[(size_t)fg.lets.back()];
        if (fg.lets.size() == 1 || fg.epilogue) {  // its kernel reads each operand as given
            const core::Let& head = f.body[(size_t)fg.named()];
            fg.node = node_of(f, head);
            fg.inputs = head.args;
            if (fg.epilogue) fg.inputs.push_back(root.args[1]);
            fg.literal = literal_args(f, fg.inputs);
            continue;
        }
        fg.elementwise = true;
        std::map<int, int> member;  // value id -> member index
        for (size_t m = 0; m < fg.lets.size(); ++m) member[fg.lets[m] + arity] = (int)m;
        for (int p : fg.lets) {
            const core::Let& l = f.body[(size_t)p];
            std::vector<int> from;
            for (int id : l.args) {
                if (auto it = member.find(id); it != member.end()) {
                    from.push_back(it->second);
                    continue;
                }
                auto at = std::find(fg.inputs.begin(), fg.inputs.end(), id);
                if (at == fg.inputs.end()) {
                    fg.inputs.push_back(id);
                    fg.group.inputs.push_back(f.type_of(id));
                    at = fg.inputs.end() - 1;
                }
                from.push_back(-1 - (int)(at - fg.inputs.begin()));
            }
            fg.group.members.push_back(node_of(f, l));
            fg.group.from.push_back(std::move(from));
        }
        fg.literal = literal_args(f, fg.inputs);
    }
    return part;
}

} // namespace presk::realize::detail
