// test-gk-run-grammar: gk-run with --grammar / --grammar-file / -j / -jf on the bundled
// stories260K: sampled output (temperature 1, several seeds) is a sentence of the grammar
// and stops when the grammar allows nothing more; JSON Schema output parses and validates;
// bad grammars, schemas and option combinations are one-line errors.
#include "gk_run_exec.h"

#include "run/grammar.h"
#include "run/grammar_matcher.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gk_run_test::expect_one_line_error;
using gk_run_test::run_gk_run;
using gk_run_test::run_result;

namespace {

const fs::path k_stories = fs::path(GK_TEST_DATA) / "models" / "stories260K.gguf";

const fs::path & scratch() {
    static const fs::path d = gk_run_test::scratch_dir("test-gk-run-grammar");
    return d;
}

fs::path write_file(const std::string & name, const std::string & text) {
    const fs::path p = scratch() / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

/** The generated text: stdout without the final newline gk-run prints (the prompt is not shown). */
std::string generated(const run_result & r) {
    std::string s = r.out;
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

std::vector<std::string> sampling(int seed) {
    return {"-m", k_stories.string(), "-p", "Once", "--no-display-prompt", "--temp", "1", "-s", std::to_string(seed)};
}

TEST(GkRunGrammar, SampledOutputMatchesGrammar) {
    const std::string gbnf = R"(root ::= answer " " num "."
answer ::= " yes" | " no" | " maybe"
num ::= [0-9]{1,3}
)";
    auto              g    = gk::run::Grammar::parse(gbnf, nullptr);
    ASSERT_TRUE(g);
    const gk::run::GrammarMatcher m(*g);
    const std::regex              re(R"(^ (yes|no|maybe) [0-9]{1,3}\.$)");
    const fs::path                file = write_file("answer.gbnf", gbnf);
    std::vector<std::string>      outs;
    for (int seed = 1; seed <= 6; ++seed) {
        auto args = sampling(seed);
        args.insert(args.end(), {"--top-k", "0", "--top-p", "1", "--min-p", "0"});
        if (seed % 2) {
            args.insert(args.end(), {"--grammar", gbnf});
        } else {
            args.insert(args.end(), {"--grammar-file", file.string()});
        }
        const run_result r = run_gk_run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string text = generated(r);
        EXPECT_TRUE(m.matches(text)) << "seed " << seed << ": '" << text << "'";
        EXPECT_TRUE(std::regex_match(text, re)) << "seed " << seed << ": '" << text << "'";
        outs.push_back(text);
    }
    // Sampling at temperature 1 over the allowed tokens, not one forced string.
    std::sort(outs.begin(), outs.end());
    EXPECT_GT(std::unique(outs.begin(), outs.end()) - outs.begin(), 1);
}

TEST(GkRunGrammar, GreedyWithDefaultSamplersAndLimit) {
    // -n cuts the sentence short: the text so far is still a prefix the grammar allows.
    const run_result r = run_gk_run({"-m", k_stories.string(), "-p", "Once", "--no-display-prompt", "--temp", "0", "-n",
                                     "5", "--grammar", "root ::= [a-z ]+ \".\""});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = generated(r);
    EXPECT_TRUE(std::regex_match(text, std::regex("^[a-z ]+\\.?$"))) << text;
}

TEST(GkRunGrammar, OutputIsTheMatchedTextAfterAnEmptyPrompt) {
    // SentencePiece pieces start with a space, which gk-run drops at the start of a text;
    // under a grammar the output keeps it, being the text the grammar matched.
    for (int seed = 1; seed <= 3; ++seed) {
        auto args = sampling(seed);
        args[3]   = "";  // -p ""
        args.insert(args.end(), {"--grammar", R"(root ::= " yes" | " no" | "maybe")"});
        const run_result r = run_gk_run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(r.out == " yes\n" || r.out == " no\n" || r.out == "maybe\n") << "'" << r.out << "'";
    }
}

TEST(GkRunGrammar, EachChatReplyIsASentence) {
    // Three user messages on stdin: three replies, each a whole sentence of the grammar
    // (the grammar starts again for every reply).
    const fs::path   in = write_file("chat.txt", "hi\nhello there\nbye\n");
    const run_result r  = run_gk_run({"-m", k_stories.string(), "--chat", "--chat-template", "chatml", "--temp", "1",
                                      "-s", "3", "--grammar", R"(root ::= (" yes" | " no") "!")"},
                                     in.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Each reply follows the prompt marker "> " (printed before each message is read).
    std::vector<std::string> replies;
    std::istringstream       ss(r.out);
    for (std::string line; std::getline(ss, line);) {
        if (line.rfind("> ", 0) == 0) line.erase(0, 2);
        if (!line.empty()) replies.push_back(line);
    }
    ASSERT_EQ(replies.size(), 3u) << r.out;
    for (const auto & reply : replies) EXPECT_TRUE(reply == " yes!" || reply == " no!") << "'" << reply << "'";
}

/** The object the schema below describes, checked member by member. */
void expect_valid_person(const std::string & text) {
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(text)) << text;
    ASSERT_TRUE(j.is_object()) << text;
    ASSERT_TRUE(j.contains("name") && j["name"].is_string()) << text;
    EXPECT_LE(j["name"].get<std::string>().size(), 10u * 4) << text;  // 10 characters, up to 4 bytes each
    ASSERT_TRUE(j.contains("age") && j["age"].is_number_integer()) << text;
    EXPECT_GE(j["age"].get<int64_t>(), 0) << text;
    EXPECT_LE(j["age"].get<int64_t>(), 150) << text;
    if (j.contains("tags")) {
        ASSERT_TRUE(j["tags"].is_array()) << text;
        EXPECT_LE(j["tags"].size(), 2u) << text;
        for (const auto & t : j["tags"]) EXPECT_TRUE(t == "a" || t == "b" || t == nullptr) << text;
    }
    for (const auto & [key, unused] : j.items()) EXPECT_TRUE(key == "name" || key == "age" || key == "tags") << key;
}

TEST(GkRunGrammar, JsonSchemaOutputValidates) {
    const std::string schema = R"({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 10},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "tags": {"type": "array", "items": {"enum": ["a", "b", null]}, "maxItems": 2}
        },
        "required": ["name", "age"]
    })";
    const fs::path    file   = write_file("person.json", schema);
    for (int seed = 1; seed <= 4; ++seed) {
        auto args = sampling(seed);
        if (seed % 2) {
            args.insert(args.end(), {"-j", schema});
        } else {
            args.insert(args.end(), {"-jf", file.string()});
        }
        const run_result r = run_gk_run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        expect_valid_person(generated(r));
    }
}

TEST(GkRunGrammar, JsonSchemaPatternAndFormat) {
    const std::string schema = R"({"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
        "when": {"type": "string", "format": "date"}}, "required": ["code", "when"]})";
    for (int seed = 1; seed <= 3; ++seed) {
        auto args = sampling(seed);
        args.insert(args.end(), {"-j", schema});
        const run_result r = run_gk_run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        nlohmann::json j;
        ASSERT_NO_THROW(j = nlohmann::json::parse(generated(r))) << r.out;
        ASSERT_TRUE(j.is_object() && j.size() == 2 && j["code"].is_string() && j["when"].is_string()) << r.out;
        EXPECT_TRUE(std::regex_match(j["code"].get<std::string>(), std::regex("[A-Z]{2}-[0-9]{3}"))) << r.out;
        EXPECT_TRUE(std::regex_match(j["when"].get<std::string>(),
                                     std::regex("[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])")))
            << r.out;
    }
}

TEST(GkRunGrammar, BadGrammarsAreOneLineErrors) {
    const std::string m = k_stories.string();
    expect_one_line_error(run_gk_run({"-m", m, "--grammar", "root ::= \"a\" | foo"}),
                          "--grammar: 1:16: undefined rule 'foo'");
    expect_one_line_error(run_gk_run({"-m", m, "--grammar", "root ::= root \"a\""}), "left recursion");
    expect_one_line_error(run_gk_run({"-m", m, "--grammar-file", (scratch() / "missing.gbnf").string()}),
                          "cannot read --grammar-file");
    expect_one_line_error(run_gk_run({"-m", m, "--grammar-file", scratch().string()}),
                          "cannot read --grammar-file '" + scratch().string() + "': it is a directory");
    expect_one_line_error(
        run_gk_run({"-m", m, "-j", R"({"type": "string", "pattern": "a+"})"}),
        "--json-schema: at /: pattern: only patterns that match the whole string (^...$) are supported");
    expect_one_line_error(run_gk_run({"-m", m, "-j", "{"}), "--json-schema: the schema is not JSON");
    const fs::path bad = write_file("bad.json", R"({"type": "object", "properties": {"x": {"minProperties": 1}}})");
    expect_one_line_error(
        run_gk_run({"-m", m, "-jf", bad.string()}),
        "--json-schema-file " + bad.string() + ": at /properties/x: unsupported JSON Schema keyword 'minProperties'");
    expect_one_line_error(run_gk_run({"-m", m, "--grammar", "root ::= \"a\"", "-j", "{}"}), "give only one of");
    std::string wide = "root ::= \"x\"";
    for (int i = 0; i < 5000; ++i) wide += " | \"a\" \"b\"";
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "--grammar", wide}),
                          "gk-run: error: the grammar is too ambiguous to follow (more than 4096 parse stacks at once)");
}

TEST(GkRunGrammar, EmptyGrammarOrSchemaIsAnError) {
    // Given but empty is an error, not an unconstrained run.
    const std::string m     = k_stories.string();
    const fs::path    empty = write_file("empty.txt", "");
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "--grammar", ""}),
                          "--grammar: 1:1: the grammar is empty (it has no 'root' rule)", true);
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "--grammar-file", empty.string()}),
                          "--grammar-file " + empty.string() + ": 1:1: the grammar is empty", true);
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "-j", ""}),
                          "--json-schema: the schema is empty (an empty text is not JSON)", true);
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "-jf", empty.string()}),
                          "--json-schema-file " + empty.string() + ": the schema is empty", true);
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "--grammar", "", "-j", "{}"}), "give only one of");
}

TEST(GkRunGrammar, SchemasThatAcceptNothingAreErrors) {
    const std::string m = k_stories.string();
    for (const char * schema :
         {R"({"type": "string", "enum": [1, 2]})", R"({"type": "integer", "enum": ["a", "b"]})",
          R"({"type": "string", "const": 5})", R"({"type": "integer", "minimum": 3, "const": 1})"}) {
        expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "-j", schema}),
                              "satisfies the rest of the schema: it accepts nothing", true);
    }
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "-j",
                                      R"({"type": "object", "properties": {"a": {"type": "integer"}},
                                          "additionalProperties": false, "const": {"b": 1}})"}),
                          "--json-schema: at /: 'const' together with 'properties' is not supported", true);
    expect_one_line_error(run_gk_run({"-m", m, "-p", "Once", "--grammar", R"(root ::= "\uD800")"}),
                          "--grammar: 1:11: escape of a UTF-16 surrogate", true);
    // A string enum under its type still runs, and prints one of the values.
    const run_result r = run_gk_run({"-m", m, "-p", "Once", "--no-display-prompt", "-s", "2", "-j",
                                     R"({"type": "string", "enum": ["yes", "no"]})"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string text = generated(r);
    text.erase(text.find_last_not_of(" \t\n") + 1);  // the whitespace the schema allows after a value
    EXPECT_TRUE(text == R"("yes")" || text == R"("no")") << r.out;
}

} // namespace
