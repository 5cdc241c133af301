// presk explain's three formats (realize/explain.h).
#include "realize/explain.h"

#include <cstdio>

#include "lang/source.h"
#include "ref/print.h"

namespace presk::realize {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

std::string hex(const std::vector<uint8_t>& b, const char* sep) {
    std::string s;
    char buf[4];
    for (size_t i = 0; i < b.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%02x", b[i]);
        s += (i ? sep : "") + std::string(buf);
    }
    return s;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

std::string line_text(const std::vector<std::string>& lines, int line) {
    if (line < 1 || line > (int)lines.size()) return "(no statement)";
    const std::string& l = lines[(size_t)line - 1];
    const size_t first = l.find_first_not_of(' ');
    return first == std::string::npos ? l : l.substr(first);
}

} // namespace

std::string explain(const std::vector<const kernel::Kernel*>& kernels, const std::string& format, const kernel::NativeOptions& o) {
    if (format != "text" && format != "json" && format != "html")
        throw Error({}, "--format " + format + ": the formats are text, json and html");
    std::string out, cpu;
    if (format == "html")
        out += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>presk explain</title>\n<style>body{font-family:"
               "monospace} td{padding:0 1em} .n{color:#888}</style></head><body>\n";
    std::string items;
    for (size_t i = 0; i < kernels.size(); ++i) {
        const kernel::Kernel& k = *kernels[i];
        const std::string text = kernel::to_string(k);
        const std::vector<std::string> lines = lines_of(text);
        const kernel::MachineListing m = kernel::machine_code(k, o);
        cpu = m.cpu;
        const std::string n = std::to_string(i + 1);
        if (format == "text") {
            out += "== kernel " + n + " of " + std::to_string(kernels.size()) + ": " + k.name + ", " +
                   std::to_string(m.bytes.size()) + " bytes of " + m.cpu + " code\n";
            for (size_t l = 0; l < lines.size(); ++l) {
                char num[32];
                std::snprintf(num, sizeof num, "%4zu  ", l + 1);
                out += num + lines[l] + "\n";
            }
            out += "-- machine code (offset, bytes, instruction; kernel line)\n";
            for (const kernel::MachineInstr& mi : m.instrs) {
                char head[32];
                std::snprintf(head, sizeof head, "  %6llx  ", (unsigned long long)mi.offset);
                std::string b = hex(mi.bytes, " ");
                b.resize(std::max<size_t>(b.size(), 30), ' ');
                std::string t = mi.text;
                t.resize(std::max<size_t>(t.size(), 40), ' ');
                out += head + b + "  " + t + "  ; " + std::to_string(mi.line) + ": " + line_text(lines, mi.line) + "\n";
            }
        } else if (format == "json") {
            items += std::string(i ? ",\n" : "") + "  {\"name\": \"" + ref::json_escape(k.name) + "\", \"text\": \"" +
                     ref::json_escape(text) + "\", \"bytes\": \"" + hex(m.bytes, "") + "\", \"instructions\": [";
            for (size_t j = 0; j < m.instrs.size(); ++j) {
                const kernel::MachineInstr& mi = m.instrs[j];
                items += std::string(j ? ", " : "") + "{\"offset\": " + std::to_string(mi.offset) + ", \"bytes\": \"" +
                         hex(mi.bytes, "") + "\", \"asm\": \"" + ref::json_escape(mi.text) +
                         "\", \"line\": " + std::to_string(mi.line) + "}";
            }
            items += "]}";
        } else {
            out += "<h2>kernel " + n + ": " + html_escape(k.name) + " (" + std::to_string(m.bytes.size()) + " bytes of " +
                   html_escape(m.cpu) + " code)</h2>\n<pre>";
            for (size_t l = 0; l < lines.size(); ++l)
                out += "<span id=\"k" + n + "l" + std::to_string(l + 1) + "\"><span class=\"n\">" + std::to_string(l + 1) +
                       "</span>  " + html_escape(lines[l]) + "</span>\n";
            out += "</pre>\n<table>\n<tr><th>offset</th><th>bytes</th><th>instruction</th><th>line</th></tr>\n";
            for (const kernel::MachineInstr& mi : m.instrs) {
                char off[24];
                std::snprintf(off, sizeof off, "%llx", (unsigned long long)mi.offset);
                const std::string l = std::to_string(mi.line);
                out += std::string("<tr><td>") + off + "</td><td>" + hex(mi.bytes, " ") + "</td><td>" + html_escape(mi.text) +
                       "</td><td><a href=\"#k" + n + "l" + l + "\">" + l + "</a> " + html_escape(line_text(lines, mi.line)) +
                       "</td></tr>\n";
            }
            out += "</table>\n";
        }
    }
    if (format == "json") return "{\"cpu\": \"" + ref::json_escape(cpu) + "\", \"kernels\": [\n" + items + "\n]}\n";
    if (format == "html") out += "</body></html>\n";
    return out;
}

} // namespace presk::realize
