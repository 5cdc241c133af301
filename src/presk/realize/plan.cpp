// Realization plans: the JSON object of the seed's pack.json, every malformed one refused with
// E7002 naming the file, the key and the value.
#include "realize/plan.h"

#include <algorithm>

#include "lang/source.h"
#include "realize/json_strict.h"

namespace presk::realize {
namespace {

using nlohmann::json;
using detail::shown;

[[noreturn]] void fail(const std::string& origin, const std::string& msg) {
    throw Error({}, "E7002: plan " + origin + ": " + msg);
}

int integer_of(const json& v, const std::string& origin, const std::string& where, const char* what) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1024)
        fail(origin, where + ": " + shown(v) + " is not " + what);
    return (int)v.get<int64_t>();
}

void split_of(const json& v, kernel::Layout& l, const std::string& origin, const std::string& where) {
    if (v == "none") {
        l.split_workers = 1;
        return;
    }
    if (!v.is_object() || !v.contains("depth") || !v.contains("workers"))
        fail(origin, where + ": " + shown(v) + " is not {\"depth\": d, \"workers\": p} or \"none\"");
    for (const auto& [key, val] : v.items()) {
        if (key == "depth") l.split_depth = integer_of(val, origin, where + ".\"depth\"", "a loop depth (0 the outermost)");
        else if (key == "workers") l.split_workers = integer_of(val, origin, where + ".\"workers\"", "a worker count");
        else fail(origin, where + ".\"" + key + "\": unknown key (" + shown(val) + "); a split has depth and workers");
    }
    if (l.split_workers < 1) fail(origin, where + ".\"workers\": 0 workers");
}

kernel::Layout point_of(const json& v, const std::string& origin, const std::string& where) {
    if (!v.is_object()) fail(origin, where + ": " + shown(v) + " is not an object of layout choices");
    kernel::Layout l;
    l.lanes = 0;
    bool tile = false, form = false;
    for (const auto& [key, val] : v.items()) {
        const std::string at = where + ".\"" + key + "\"";
        if (key == "form") {
            if (val == "tiled") l.form = kernel::Layout::Form::Tiled;
            else if (val == "row-wise") l.form = kernel::Layout::Form::RowWise;
            else fail(origin, at + ": " + shown(val) + " is not \"tiled\" or \"row-wise\"");
            form = true;
        } else if (key == "tile") {
            if (!val.is_array() || val.size() != 2 || !val[0].is_number_integer() || !val[1].is_number_integer())
                fail(origin, at + ": " + shown(val) + " is not [m_i, n_j]");
            const int64_t m = val[0].get<int64_t>(), n = val[1].get<int64_t>();
            const bool unit = m == 1 && n == 1;
            if (!unit && (!kernel::in_space(kernel::kTileRows, m) || !kernel::in_space(kernel::kTileCols, n)))
                fail(origin, at + ": " + shown(val) + " is not a tile of the space ([1, 1], or m_i " +
                                 kernel::listed(kernel::kTileRows) + " and n_j " + kernel::listed(kernel::kTileCols) + ")");
            l.tile_m = (int)m;
            l.tile_n = (int)n;
            tile = true;
        } else if (key == "k_block") {
            if (val == "none") l.kblock = 0;
            else if (val == 32 || val == 128) l.kblock = val.get<int>();
            else fail(origin, at + ": " + shown(val) + " is not a k-block of the space (\"none\", 32 or 128)");
        } else if (key == "order") {
            if (!val.is_string()) fail(origin, at + ": " + shown(val) + " is not an order (\"IJ\", \"JI\", or a permutation of \"IJK\")");
            l.order = val.get<std::string>();
        } else if (key == "lanes") {
            if (!val.is_number_integer() || !kernel::in_space(kernel::kLanes, val.get<int64_t>()))
                fail(origin, at + ": " + shown(val) + " is not " + kernel::listed(kernel::kLanes) + " lanes");
            l.lanes = val.get<int>();
        } else if (key == "pack") {
            if (!val.is_boolean()) fail(origin, at + ": " + shown(val) + " is not true or false");
            l.pack = val.get<bool>();
        } else if (key == "passes") {
            if (val != 2 && val != 3) fail(origin, at + ": " + shown(val) + " is not a softmax's 2 or 3 passes");
            l.passes = val.get<int>();
        } else if (key == "epilogue") {
            if (val != "bias" && val != "none") fail(origin, at + ": " + shown(val) + " is not \"bias\" or \"none\"");
            l.bias = val == "bias";
        } else if (key == "split") {
            split_of(val, l, origin, at);
        } else {
            fail(origin, at + ": unknown key (" + shown(val) +
                             "); a layout has form, tile, k_block, order, lanes, pack, epilogue, passes and split");
        }
    }
    if (l.form == kernel::Layout::Form::RowWise && (tile || l.kblock || !l.order.empty() || l.pack))
        fail(origin, where + ": the row-wise form has no tile, k-block, order or pack");
    if ((tile || l.kblock || !l.order.empty()) && !form) l.form = kernel::Layout::Form::Tiled;
    std::string sorted = l.order;
    std::sort(sorted.begin(), sorted.end());
    if (!l.order.empty() && sorted != (l.kblock ? "IJK" : "IJ"))
        fail(origin, where + ".\"order\": \"" + l.order + "\" is not " +
                         (l.kblock ? "a permutation of IJK (with a k-block)" : "IJ or JI (without a k-block)"));
    return l;
}

} // namespace

Plan parse_plan_json(const std::string& text, const std::string& origin) {
    json v;
    try {
        v = detail::parse_strict(text, origin);
    } catch (const Error& e) {
        throw Error({}, std::string("E7002: plan ") + e.what());
    }
    if (!v.is_object()) fail(origin, "a plan is a JSON object, found " + shown(v));
    Plan p;
    p.spelling = origin;
    for (const auto& [key, val] : v.items()) {
        if (key == "realization") {
            if (!val.is_string() || val.get<std::string>().empty())
                fail(origin, "\"realization\": " + shown(val) + " is not a realization (f64, f32, bf16 or @FILE)");
            p.realization = val.get<std::string>();
        } else if (key == "layout") {
            if (!val.is_object()) fail(origin, "\"layout\": " + shown(val) + " is not an object of sites");
            for (const auto& [site, point] : val.items()) {
                const std::string where = "\"layout\".\"" + site + "\"";
                if (!detail::is_site(site))
                    fail(origin, where + ": \"" + site + "\" is not a site (\"<function>/%<let>\", as dump --stage core numbers the lets)");
                p.layout[site] = point_of(point, origin, where);
            }
        } else {
            fail(origin, "unknown key \"" + key + "\" (" + shown(val) + "); a plan has realization and layout");
        }
    }
    return p;
}

Plan parse_plan(const std::string& arg) {
    if (arg.size() < 2 || arg[0] != '@') fail(arg, "a plan is @FILE.json");
    std::string text;
    try {
        text = detail::read_text(arg.substr(1), "the plan file");
    } catch (const Error& e) {
        throw Error({}, std::string("E7002: plan ") + e.what());
    }
    Plan p = parse_plan_json(text, arg);
    p.spelling = arg;
    return p;
}

} // namespace presk::realize
