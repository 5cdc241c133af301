// test-grammar: GBNF parsing (errors with their positions), matching strings with the
// grammars of llama.cpp's grammars/README.md and json.gbnf (written here from their
// documented form), UTF-8 handling, hostile grammars, the token-level constraint on a
// bundled model's vocabulary, and JSON Schemas (llama.cpp's documentation examples)
// converted to grammars that accept the valid instances and reject the invalid ones.
#include "run/grammar.h"
#include "run/grammar_constraint.h"
#include "run/grammar_matcher.h"
#include "run/json_schema.h"
#include "run/tokenizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace {

using namespace gk::run;
using namespace std::string_literals;

std::unique_ptr<Grammar> parse_ok(const std::string & text) {
    std::string err;
    auto        g = Grammar::parse(text, &err);
    EXPECT_TRUE(g) << err << "\n" << text;
    return g;
}

/** The error for `text`, which must be refused. */
std::string parse_error(const std::string & text) {
    std::string err;
    auto        g = Grammar::parse(text, &err);
    EXPECT_FALSE(g) << text;
    return err;
}

void expect_matches(const Grammar & g, const std::vector<std::string> & yes, const std::vector<std::string> & no) {
    const GrammarMatcher m(g);
    for (const auto & s : yes) EXPECT_TRUE(m.matches(s)) << "should match: " << s;
    for (const auto & s : no) EXPECT_FALSE(m.matches(s)) << "should not match: " << s;
}

// llama.cpp grammars/json.gbnf, as documented there.
const char * k_json_gbnf = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)";

TEST(Grammar, JsonGbnf) {
    auto g = parse_ok(k_json_gbnf);
    ASSERT_TRUE(g);
    expect_matches(
        *g,
        {"{}", R"({"a": 1})", R"({"a": [1, 2.5, -3e12, true, null], "b": {"c": "d\n\u00e9"}})",
         "{\n  \"k\": \"caf\xc3\xa9\"\n}", R"({"x":"\"q\""})"},
        {"", "[]", "{", R"({"a": })", R"({"a": 01})", R"({"a" 1})", "{\"a\": \"\x01\"}", R"({"a": tru})", R"({} x)"});
}

TEST(Grammar, ArithmeticReadme) {
    auto g = parse_ok(R"g(root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
)g");
    ASSERT_TRUE(g);
    expect_matches(*g, {"a=1\n", "x+y*(z-2)=3\n(a)=b\n", "foo_1/2 = bar\n"},
                   {"", "a=1", "=1\n", "a+=1\n", "(a=1\n", "A=1\n"});
}

TEST(Grammar, ChessReadme) {
    // The README's chess example: comments and newlines inside the parentheses.
    auto g = parse_ok(R"(root ::= (
    # it must start with the characters "1. " followed by a sequence
    # of characters that match the `move` rule, followed by a space, followed
    # by another move, and then a newline
    "1. " move " " move "\n"

    # it's followed by one or more subsequent moves, numbered with one or two digits
    ([1-9] [0-9]? ". " move " " move "\n")+
)
move ::= (pawn | nonpawn | castle) [+#]?
pawn ::= [a-h] [1-8]
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]
castle ::= "O-O" "-O"?
)");
    ASSERT_TRUE(g);
    expect_matches(*g, {"1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 e6\n10. O-O O-O-O+\n"},
                   {"1. e4 e5\n", "1. e9 e5\n2. a1 a2\n", "1. e4 e5\n2. Zf3 Nc6\n"});
}

TEST(Grammar, ListGrammar) {
    // A list of items, as the README's list example: "- " then text up to the end of the line.
    auto g = parse_ok(R"(root ::= item+
# Excludes various line break characters
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
)");
    ASSERT_TRUE(g);
    expect_matches(*g, {"- a\n", "- milk\n- eggs \xe2\x82\xac\n"}, {"", "- \n", "- a", "* a\n", "- a\xc2\x85\n"});
}

TEST(Grammar, RepetitionCounts) {
    auto g = parse_ok("root ::= \"a\"{2} \"b\"{1,3} \"c\"{2,} \"d\"{0,1} [0-9]{0}\n");
    ASSERT_TRUE(g);
    expect_matches(*g, {"aabcc", "aabbbccccd", "aabbcccd"}, {"abcc", "aabbbbcc", "aabc", "aabccdd", "aab"});
    auto lit = parse_ok("root ::= \"ab\"* \"x\" (\"c\" | \"d\")+ .?\n");
    ASSERT_TRUE(lit);
    expect_matches(*lit, {"xc", "ababxdcd", "xc\xe2\x82\xac"}, {"axc", "x", "abxcdee"});
}

TEST(Grammar, LiteralsAndEscapes) {
    auto g = parse_ok(R"(root ::= "\x41\u00e9\U0001F600\t\\\"" [\x00-\x08] [^a-z\]] "\n"
)");
    ASSERT_TRUE(g);
    expect_matches(*g,
                   {"A\xc3\xa9\xf0\x9f\x98\x80\t\\\"\x05"
                    "A\n",
                    "A\xc3\xa9\xf0\x9f\x98\x80\t\\\"\x00"
                    "\xe2\x82\xac\n"s},
                   {"A\xc3\xa9\xf0\x9f\x98\x80\t\\\"\x05"
                    "a\n",
                    "A\xc3\xa9\xf0\x9f\x98\x80\t\\\"\x05"
                    "]\n"});
    // A non-ASCII literal written as UTF-8.
    auto u = parse_ok("root ::= \"caf\xc3\xa9\" [\xc3\xa0-\xc3\xbf]\n");
    ASSERT_TRUE(u);
    expect_matches(*u, {"caf\xc3\xa9\xc3\xa8"}, {"cafe\xc3\xa8", "caf\xc3\xa9z"});
}

TEST(Grammar, ErrorsNameLineAndColumn) {
    EXPECT_EQ(parse_error("root ::= \"abc\n"), "1:10: unterminated literal");
    EXPECT_EQ(parse_error("root ::= [abc\n"), "1:10: unterminated character class");
    EXPECT_EQ(parse_error("root ::= foo\n"), "1:10: undefined rule 'foo'");
    EXPECT_EQ(parse_error("a ::= \"x\"\n"), "1:1: the grammar has no 'root' rule");
    EXPECT_EQ(parse_error("root ::= \"a\"\nroot ::= \"b\"\n"), "2:1: rule 'root' is defined twice");
    EXPECT_EQ(parse_error("root \"a\"\n"), "1:6: expected '::=' after rule name 'root', found '\"'");
    EXPECT_EQ(parse_error("root ::= (\"a\"\n"),
              "2:1: expected ')' to close the '(' at 1:10, found the end of the grammar");
    EXPECT_EQ(parse_error("root ::= \"a\" )\n"), "1:14: expected the end of the line, found ')'");
    EXPECT_EQ(parse_error("root ::= * \"a\"\n"), "1:10: '*' repeats nothing");
    EXPECT_EQ(parse_error("root ::= \"a\"{3,1}\n"), "1:13: repetition {m,n} with n < m");
    EXPECT_EQ(parse_error("root ::= \"a\"{x}\n"), "1:14: expected a number in {...}, found 'x'");
    EXPECT_EQ(parse_error("root ::= \"\\q\"\n"), "1:11: unknown escape '\\q'");
    EXPECT_EQ(parse_error("root ::= \"\\\n\"\n"), "1:11: a backslash before the byte 0x0A");  // stays one line
    EXPECT_EQ(parse_error("root ::= \"\\x4\"\n"), "1:11: escape '\\x' needs 2 hexadecimal digits");
    EXPECT_EQ(parse_error("root ::= [z-a]\n"), "1:13: character range ends before it starts");
    EXPECT_EQ(parse_error("root ::= []\n"), "1:10: empty character class");
    EXPECT_EQ(parse_error("root ::= <[42]>\n"), "1:10: token-level elements (<...>) are not supported");
    EXPECT_EQ(parse_error("\n\n  ::= \"a\"\n"), "3:3: expected a rule name, found ':'");
    EXPECT_EQ(parse_error("root ::= \"\xff\"\n"), "1:11: invalid UTF-8");
    EXPECT_EQ(parse_error("root ::= \"a\"{100000}\n"), "1:14: repetition count above 10000");
}

TEST(Grammar, SurrogateEscapesRefused) {
    // U+D800..U+DFFF are not characters: refused where they are written, as \U00110000 is.
    const std::string surrogate = "escape of a UTF-16 surrogate (U+D800 to U+DFFF is not a character)";
    EXPECT_EQ(parse_error("root ::= \"\\U00110000\"\n"), "1:11: escape beyond U+10FFFF");
    EXPECT_EQ(parse_error("root ::= \"\\uD800\"\n"), "1:11: " + surrogate);
    EXPECT_EQ(parse_error("root ::= \"a\" \"\\udfff\"\n"), "1:15: " + surrogate);
    EXPECT_EQ(parse_error("root ::= [\\U0000DC00]\n"), "1:11: " + surrogate);
    EXPECT_EQ(parse_error("root ::= [a-\\uDBFF]\n"), "1:13: " + surrogate);
    // Either side of the surrogates is fine, and so is a range across them.
    auto g = parse_ok("root ::= \"\\uD7FF\\uE000\" [\\uD000-\\uE000]\n");
    ASSERT_TRUE(g);
    expect_matches(*g, {"\xed\x9f\xbf\xee\x80\x80\xee\x80\x80", "\xed\x9f\xbf\xee\x80\x80\xed\x80\x80"},
                   {"\xed\x9f\xbf\xee\x80\x80"});
}

TEST(Grammar, EmptyGrammarRefused) {
    EXPECT_EQ(parse_error(""), "1:1: the grammar is empty (it has no 'root' rule)");
    EXPECT_EQ(parse_error("\n  # nothing\n"), "1:1: the grammar is empty (it has no 'root' rule)");
}

TEST(Grammar, RuleNamedLikeAGroup) {
    // The group in `root` is made a rule root-1 before the grammar defines its own root-1.
    auto g = parse_ok("root ::= (\"a\" | \"b\") root-1\nroot-1 ::= \"c\"\n");
    ASSERT_TRUE(g);
    expect_matches(*g, {"ac", "bc"}, {"a", "aa", "c"});
}

TEST(Grammar, LeftRecursionRefused) {
    EXPECT_EQ(parse_error("root ::= root \"a\" | \"b\"\n"),
              "1:1: left recursion: root -> root can expand forever without matching a character");
    EXPECT_EQ(parse_error("root ::= a\na ::= b \"x\"\nb ::= \"\" | a\n"),
              "2:1: left recursion: a -> b -> a can expand forever without matching a character");
    // A repeated group that can be empty loops the same way.
    EXPECT_NE(parse_error("root ::= (\"x\"?)*\n").find("left recursion"), std::string::npos);
    // Right recursion and recursion after a character are fine.
    auto g = parse_ok("root ::= \"(\" root \")\" | \"x\"\n");
    ASSERT_TRUE(g);
    expect_matches(*g, {"x", "((x))"}, {"(x", "()", "((x)))"});
}

TEST(Grammar, HostileInputBounded) {
    // Deep nesting is refused, not a stack overflow.
    const std::string deep = "root ::= " + std::string(100000, '(') + "\"a\"" + std::string(100000, ')') + "\n";
    EXPECT_NE(parse_error(deep).find("nested deeper than"), std::string::npos);
    // Nested repetition multiplies: refused once it passes the element bound.
    const std::string big = "root ::= ((((\"ab\"{1000}){1000}){1000}){1000})\n";
    auto              g   = parse_ok(big);  // each level repeats a reference: 4 x 1000 elements
    ASSERT_TRUE(g);
    EXPECT_LT(g->elements().size(), 20000u);
    EXPECT_EQ(parse_error("root ::= [a-z]{0,10000}{0,10000}\n"), "1:24: '{' repeats nothing");
    // A long literal repeated many times passes the element bound.
    // Many rules of long optional chains pass the element bound together.
    std::string many = "root ::= r0\n";
    for (int i = 0; i < 120; ++i) many += "r" + std::to_string(i) + " ::= [a-z]{0,10000}\n";
    EXPECT_NE(parse_error(many).find("expands to more than"), std::string::npos);
    // Ambiguity: many equal alternatives collapse to one stack; matching stays linear.
    auto amb = parse_ok("root ::= (\"a\" | \"a\" | [a-z] | .)*\n");
    ASSERT_TRUE(amb);
    EXPECT_TRUE(GrammarMatcher(*amb).matches(std::string(20000, 'a')));
}

TEST(Grammar, TooAmbiguousIsReported) {
    // 5000 distinct alternatives of the root: more stacks at the start than the bound.
    std::string wide = "root ::= \"x\"";
    for (int i = 0; i < 5000; ++i) wide += " | \"a\" \"b\"";
    auto g = parse_ok(wide + "\n");
    ASSERT_TRUE(g);
    grammar_state s;
    EXPECT_EQ(GrammarMatcher(*g).initial(s), grammar_step::overflow);
    // Ambiguity that grows with the text: after n a's, n + 1 stacks of depths up to 1.5 n, so
    // the positions together pass k_grammar_max_stack_elements near n = 420.
    auto deep = parse_ok("root ::= \"a\" root \"b\" | \"a\" root | \"\"\n");
    ASSERT_TRUE(deep);
    const GrammarMatcher m(*deep);
    ASSERT_EQ(m.initial(s), grammar_step::ok);
    EXPECT_TRUE(m.matches("aaabb"));
    grammar_step r = grammar_step::ok;
    int          n = 0;
    for (; n < 2000 && r == grammar_step::ok; ++n) r = m.advance(s, "a");
    EXPECT_EQ(r, grammar_step::overflow);
    EXPECT_GT(n, 300);
}

TEST(Grammar, MutatedGrammarsParseOrFailCleanly) {
    // Deterministic mutations of json.gbnf (bytes replaced, inserted, deleted, duplicated
    // spans): each either parses, and then matches text without crashing, or is refused
    // with "LINE:COLUMN: message". Under the sanitizers this checks memory safety too.
    const std::string base       = k_json_gbnf;
    const char        alphabet[] = "()[]{}*+?|\"\\^-.:=# \n\tax0129,";
    std::mt19937      rng(12);
    const std::regex  position("^[0-9]+:[0-9]+: .+");
    int               n_parsed = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::string g = base;
        for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n && !g.empty(); ++k) {
            const size_t at = rng() % g.size();
            const char c = (rng() % 8 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % (sizeof alphabet - 1)];
            switch (rng() % 4) {
            case 0: g[at] = c; break;
            case 1: g.insert(g.begin() + static_cast<std::ptrdiff_t>(at), c); break;
            case 2: g.erase(at, 1 + rng() % 3); break;
            default: g.insert(at, g.substr(at, rng() % 40)); break;
            }
        }
        std::string err;
        auto        parsed = Grammar::parse(g, &err);
        if (!parsed) {
            EXPECT_TRUE(std::regex_match(err, position)) << err;
            continue;
        }
        ++n_parsed;
        const GrammarMatcher m(*parsed);
        grammar_state        st;
        if (m.initial(st) != grammar_step::ok) continue;
        for (const char * text : {R"({"a": [1, {"b": null}], "c": "d\u00e9"})", "{}", "[1,2]", "\xc3\xa9\xe2\x82"}) {
            grammar_state t = st;
            (void)m.advance(t, text);
        }
    }
    EXPECT_GT(n_parsed, 100);  // the mutations are not all refused
}

TEST(Grammar, PartialUtf8) {
    auto g = parse_ok("root ::= [\xc3\xa0-\xc3\xbf]+ | \"\xe2\x82\xac\"\n");
    ASSERT_TRUE(g);
    const GrammarMatcher m(*g);
    grammar_state        s;
    ASSERT_EQ(m.initial(s), grammar_step::ok);
    grammar_state t = s;
    EXPECT_EQ(m.advance(t, "\xc3"), grammar_step::ok);  // may start U+00E0..U+00FF
    EXPECT_FALSE(GrammarMatcher::is_complete(t));
    EXPECT_EQ(m.advance(t, "\xa9"), grammar_step::ok);
    EXPECT_TRUE(GrammarMatcher::is_complete(t));
    t = s;
    EXPECT_EQ(m.advance(t, "\xc2"), grammar_step::rejected);  // U+0080..U+00BF: none allowed
    t = s;
    EXPECT_EQ(m.advance(t, "\xe2\x82"), grammar_step::ok);
    EXPECT_EQ(m.advance(t, "\xac"), grammar_step::ok);
    EXPECT_TRUE(GrammarMatcher::is_complete(t));
    EXPECT_FALSE(GrammarMatcher::can_continue(t));
    t = s;
    EXPECT_EQ(m.advance(t, "\xe2\x83"), grammar_step::rejected);
    t = s;
    EXPECT_EQ(m.advance(t, "\x80"), grammar_step::rejected);  // a continuation byte first
    // Bytes no continuation can make valid are refused at once: an overlong form, a
    // surrogate, past U+10FFFF; the grammar allows any character.
    auto any = parse_ok("root ::= [^\"]*\n");
    ASSERT_TRUE(any);
    const GrammarMatcher ma(*any);
    ASSERT_EQ(ma.initial(s), grammar_step::ok);
    for (const char * bad : {"\xe0\x80", "\xe0\x9f", "\xed\xa0", "\xf0\x80", "\xf0\x8f", "\xf4\x90", "\xc0", "\xf5"}) {
        t = s;
        EXPECT_EQ(ma.advance(t, bad), grammar_step::rejected) << "bytes of " << bad;
    }
    for (const char * good : {"\xe0\xa0", "\xed\x9f", "\xf0\x90", "\xf4\x8f", "\xee"}) {
        t = s;
        EXPECT_EQ(ma.advance(t, good), grammar_step::ok);
    }
    // Negated classes: a partial sequence is refused only when every completion is excluded.
    auto n = parse_ok("root ::= [^\xc3\x80-\xc3\xbf]\n");
    ASSERT_TRUE(n);
    const GrammarMatcher mn(*n);
    ASSERT_EQ(mn.initial(s), grammar_step::ok);
    t = s;
    EXPECT_EQ(mn.advance(t, "\xc3"), grammar_step::rejected);
    t = s;
    EXPECT_EQ(mn.advance(t, "\xc4"), grammar_step::ok);
}

// ---- token-level constraint on a real vocabulary --------------------------------------

std::unique_ptr<Tokenizer> stories_tokenizer() {
    const auto    path = std::filesystem::path(GK_TEST_DATA) / "models" / "stories260K.gguf";
    gk_gguf_error err{};
    gk_gguf *     g = gk_gguf_open(path.c_str(), &err);
    if (!g) return nullptr;
    std::string msg;
    auto        tok = Tokenizer::load(g, &msg);
    gk_gguf_free(g);
    return tok;
}

/** Tokens the constraint allows, checked one by one against the matcher. */
TEST(GrammarConstraint, MaskEqualsPerTokenCheck) {
    auto tok = stories_tokenizer();
    if (!tok) GTEST_SKIP() << "GK-SKIP: stories260K.gguf not readable";
    auto g = parse_ok("root ::= \"Once\" \" upon\"? [ a-z]{0,12} \".\"\n");
    ASSERT_TRUE(g);
    GrammarConstraint    c(*g, *tok);
    const GrammarMatcher m(*g);
    grammar_state        s;
    ASSERT_EQ(m.initial(s), grammar_step::ok);
    std::string text;
    for (int step = 0; step < 40; ++step) {
        std::vector<float> logits(static_cast<size_t>(tok->n_tokens()) + 3, 0.0f);  // 3 past the vocabulary
        std::string        err;
        ASSERT_TRUE(c.apply(logits, &err)) << err;
        token_id pick = k_no_token;
        for (token_id id = 0; id < static_cast<token_id>(logits.size()); ++id) {
            bool expect = false;
            if (id < tok->n_tokens()) {
                if (tok->is_eog(id)) {
                    expect = GrammarMatcher::is_complete(s);
                } else {
                    const std::string & piece = tok->token_to_piece(id, false);
                    grammar_state       t     = s;
                    expect                    = !piece.empty() && m.advance(t, piece) == grammar_step::ok;
                }
            }
            EXPECT_EQ(std::isfinite(logits[static_cast<size_t>(id)]), expect) << "token " << id << " at step " << step;
            // Walk the longest allowed non-EOG piece, to exercise several states.
            if (expect && !tok->is_eog(id) &&
                (pick == k_no_token ||
                 tok->token_to_piece(id, false).size() > tok->token_to_piece(pick, false).size())) {
                pick = id;
            }
        }
        if (pick == k_no_token) break;
        ASSERT_TRUE(c.accept(pick, &err)) << err;
        ASSERT_EQ(m.advance(s, tok->token_to_piece(pick, false)), grammar_step::ok);
        text += tok->token_to_piece(pick, false);
        if (c.finished()) break;
    }
    EXPECT_TRUE(m.matches(text)) << text;
    EXPECT_TRUE(c.finished());
    // A rejected token is refused by accept().
    ASSERT_TRUE(c.reset(nullptr));
    std::string err;
    const auto  ids = tok->encode("zzz", false, false);
    ASSERT_FALSE(ids.empty());
    EXPECT_FALSE(c.accept(ids[0], &err));
    EXPECT_FALSE(err.empty());
}

TEST(GrammarConstraint, OnlyEndAfterSentence) {
    auto tok = stories_tokenizer();
    if (!tok) GTEST_SKIP() << "GK-SKIP: stories260K.gguf not readable";
    auto g = parse_ok("root ::= \"a\"\n");
    ASSERT_TRUE(g);
    GrammarConstraint     c2(*g, *tok);
    std::vector<float>    logits(static_cast<size_t>(tok->n_tokens()), 0.0f);
    std::string           err;
    std::vector<token_id> a;  // the token whose piece is "a"
    for (token_id id = 0; id < tok->n_tokens() && a.empty(); ++id) {
        if (tok->token_to_piece(id, false) == "a") a.push_back(id);
    }
    ASSERT_EQ(a.size(), 1u);
    ASSERT_TRUE(c2.apply(logits, &err)) << err;
    ASSERT_NE(tok->special().eos, k_no_token);
    EXPECT_FALSE(std::isfinite(logits[static_cast<size_t>(tok->special().eos)]));  // not complete yet
    // After the full sentence, only end-of-generation is allowed; stories260K has EOS.
    for (token_id id : a) ASSERT_TRUE(c2.accept(id, &err)) << err;
    std::vector<float> l2(static_cast<size_t>(tok->n_tokens()), 0.0f);
    ASSERT_TRUE(c2.apply(l2, &err)) << err;
    ASSERT_NE(tok->special().eos, k_no_token);
    EXPECT_TRUE(std::isfinite(l2[static_cast<size_t>(tok->special().eos)]));
    size_t n_finite = 0;
    for (float v : l2) n_finite += std::isfinite(v) ? 1 : 0;
    EXPECT_EQ(n_finite, 1u);
    EXPECT_TRUE(c2.finished());
}

TEST(GrammarConstraintSharedData, NoTokenFitsIsAnError) {
    // A WordPiece vocabulary has no byte tokens: nothing spells a control character.
    const auto    path = std::filesystem::path(GK_SHARED_DATA) / "gguf" / "vocab" / "ggml-vocab-bert-bge.gguf";
    gk_gguf_error gerr{};
    gk_gguf *     gg = gk_gguf_open(path.c_str(), &gerr);
    if (!gg) GTEST_SKIP() << "GK-SKIP: " << path << " not readable";
    std::string msg;
    auto        tok = Tokenizer::load(gg, &msg);
    gk_gguf_free(gg);
    ASSERT_TRUE(tok) << msg;
    auto g = parse_ok("root ::= \"a\" \"\\x01\"\n");
    ASSERT_TRUE(g);
    GrammarConstraint  c(*g, *tok);
    std::vector<float> logits(static_cast<size_t>(tok->n_tokens()), 0.0f);
    ASSERT_TRUE(c.apply(logits, &msg)) << msg;
    token_id a = k_no_token;
    for (token_id id = 0; id < tok->n_tokens() && a == k_no_token; ++id) {
        if (tok->token_to_piece(id, false) == "a") a = id;
    }
    ASSERT_NE(a, k_no_token);
    ASSERT_TRUE(c.accept(a, &msg)) << msg;
    std::vector<float> after(static_cast<size_t>(tok->n_tokens()), 0.0f);
    EXPECT_FALSE(c.apply(after, &msg));
    EXPECT_EQ(msg, "no token of the vocabulary can continue the grammar");
}

// ---- JSON Schema -------------------------------------------------------------------------

std::unique_ptr<Grammar> schema_grammar(const std::string & schema) {
    std::string err;
    const auto  text = json_schema_to_grammar(schema, &err);
    EXPECT_TRUE(text) << err << "\n" << schema;
    if (!text) return nullptr;
    auto g = Grammar::parse(*text, &err);
    EXPECT_TRUE(g) << err << "\n" << *text;
    if (!g) return nullptr;
    // Every rule the converter wrote is used: reachable from root.
    std::vector<bool>     seen(g->n_rules(), false);
    std::vector<uint32_t> todo{g->root()};
    seen[g->root()] = true;
    while (!todo.empty()) {
        const uint32_t r = todo.back();
        todo.pop_back();
        for (uint32_t p = g->rule_start(r);; ++p) {
            const grammar_element & e = g->elements()[p];
            if (e.op == grammar_op::end) break;
            if (e.op == grammar_op::rule_ref && !seen[e.value]) {
                seen[e.value] = true;
                todo.push_back(e.value);
            }
        }
    }
    for (uint32_t r = 0; r < g->n_rules(); ++r)
        EXPECT_TRUE(seen[r]) << "unused rule " << g->rule_name(r) << "\n" << *text;
    return g;
}

std::string schema_error(const std::string & schema) {
    std::string err;
    EXPECT_FALSE(json_schema_to_grammar(schema, &err)) << schema;
    return err;
}

TEST(JsonSchema, ReadmeArrayOfPeople) {
    // llama.cpp grammars/README.md: an array of 10 to 100 objects with a name and an age.
    auto g = schema_grammar(R"({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 100},
                "age": {"type": "integer", "minimum": 0, "maximum": 150}
            },
            "required": ["name", "age"],
            "additionalProperties": false
        },
        "minItems": 10,
        "maxItems": 100
    })");
    ASSERT_TRUE(g);
    std::string ten = "[", eleven = "[";
    for (int i = 0; i < 10; ++i) {
        ten += std::string(i ? ", " : "") + R"({"name": "Ann", "age": )" + std::to_string(i * 15) + "}";
    }
    eleven = ten + R"(, {"name":"B","age":150}])";
    ten += "]";
    expect_matches(
        *g, {ten, eleven},
        {"[]", R"([{"name": "Ann", "age": 3}])", std::string(ten).replace(ten.find("135"), 3, "151"),
         std::string(ten).replace(ten.find("\"Ann\""), 5, "\"\""), std::string(ten).replace(ten.find("0}"), 2, "-1}"),
         std::string(ten).replace(ten.find("\"age\""), 5, "\"agE\"")});
}

TEST(JsonSchema, OptionalPropertiesAndTypes) {
    auto g = schema_grammar(R"({
        "type": "object",
        "properties": {
            "a": {"type": "boolean"},
            "b": {"type": ["number", "null"]},
            "c": {"enum": ["red", 2, null]},
            "d": {"const": {"k": [1]}}
        },
        "required": ["b"]
    })");
    ASSERT_TRUE(g);
    expect_matches(*g,
                   {R"({"b": null})", R"({"a": true, "b": 1.5e3})", R"({"b": -2, "c": "red", "d": {"k":[1]}})",
                    R"({"a":false,"b":0,"c":2})", R"({"b":1,"d":{"k":[1]}})"},
                   {"{}", R"({"a": true})", R"({"b": 1, "a": true})", R"({"b": "x"})", R"({"b": 1, "c": "blue"})",
                    R"({"b": 1,})", R"({"b": 1, "e": 1})", R"({"b": 01})"});
}

TEST(JsonSchema, RefsDefsAndRecursion) {
    auto g = schema_grammar(R"({
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "required": ["v"]
            }
        },
        "$ref": "#/$defs/node"
    })");
    ASSERT_TRUE(g);
    expect_matches(*g, {R"({"v": 1})", R"({"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": []}]})"},
                   {R"({"kids": []})", R"({"v": 1, "kids": [{"w": 2}]})"});
    auto d = schema_grammar(R"({"definitions": {"s": {"type": "string", "maxLength": 2}},
                                "anyOf": [{"$ref": "#/definitions/s"}, {"type": "array", "maxItems": 1}]})");
    ASSERT_TRUE(d);
    expect_matches(*d, {R"("ab")", "[]", R"(["x"])", R"([{"a": [1, {}]}])"}, {R"("abc")", "[1, 2]", "1"});
}

TEST(JsonSchema, AnyValueAndFreeObjects) {
    auto g = schema_grammar(R"({"type": "object", "additionalProperties": {"type": "integer"}})");
    ASSERT_TRUE(g);
    expect_matches(*g, {"{}", R"({"x": 1, "y": -2})"}, {R"({"x": "1"})", "[]"});
    auto any = schema_grammar("{}");
    ASSERT_TRUE(any);
    expect_matches(*any, {"1", R"({"a": [true, null, "s"]})", R"("x")"}, {"", "{", "tru"});
    auto integer = schema_grammar(R"({"type": "integer", "exclusiveMinimum": -10, "maximum": 1234})");
    ASSERT_TRUE(integer);
    std::vector<std::string> yes, no;
    for (int v = -20; v <= 1300; ++v) (v > -10 && v <= 1234 ? yes : no).push_back(std::to_string(v));
    no.push_back("-0");
    no.push_back("007");
    expect_matches(*integer, yes, no);
}

TEST(JsonSchema, AdditionalPropertiesBesidesDeclared) {
    auto g = schema_grammar(R"({
        "type": "object",
        "properties": {"name": {"type": "string"}, "nick": {"type": "string"}, "\u00e9t\u00e9": {"type": "null"}},
        "required": ["name"],
        "additionalProperties": {"type": "integer"}
    })");
    ASSERT_TRUE(g);
    expect_matches(
        *g,
        {R"({"name": "x"})", R"({"name": "x", "age": 3})", R"({"name":"x","nick":"y","n":1,"nickname":2,"nic":3})",
         R"({"name": "x", "": 1, "\u006e": 2})", "{\"name\": \"x\", \"\xc3\xa9t\xc3\xa9\": null, \"\xc3\xa9\": 1}"},
        {R"({"name": "x", "nick": 4})", R"({"name": "x", "name": 1})", R"({"age": 3})", R"({"name": "x", "age": "3"})",
         "{\"name\": \"x\", \"\xc3\xa9t\xc3\xa9\": 1}"});
    auto any = schema_grammar(R"({"properties": {"a": {"type": "boolean"}}, "additionalProperties": true})");
    ASSERT_TRUE(any);
    expect_matches(*any, {"{}", R"({"b": 1})", R"({"a": true, "b": [1], "c": {}})", R"({"ab": 1})"},
                   {R"({"a": 1})", R"({"a": true, "a": false})"});
}

TEST(JsonSchema, PatternAndFormat) {
    // llama.cpp's documentation: a phone number pattern.
    auto phone = schema_grammar(R"({"type": "string", "pattern": "^\\(?[0-9]{3}\\)?[ -]?[0-9]{3}-[0-9]{4}$"})");
    ASSERT_TRUE(phone);
    expect_matches(*phone, {R"("(555) 123-4567")", R"("555-123-4567")", R"("555123-4567")"},
                   {R"("55-123-4567")", R"("(555) 123-456")", R"("phone")"});
    auto mixed = schema_grammar(R"({"pattern": "^(?:ab|c\\.)+[^x\\d]?\\w*?\\s\"\\\\.$"})");
    ASSERT_TRUE(mixed);
    expect_matches(*mixed, {R"("abc.y_9 \"\\z")", R"("c.\t\"\\\t")", R"("abab\\z_ \"\\q")"},
                   {R"("ab")", R"("a \"\\z")", R"("ab\"\\z")", R"("ab \"\\")", R"("ab \"z")", R"("ab \"\\\n")"});
    auto date = schema_grammar(R"({"type": "object", "properties": {
        "d": {"type": "string", "format": "date"}, "t": {"format": "date-time"}, "u": {"format": "uuid"}},
        "required": ["d", "t", "u"]})");
    ASSERT_TRUE(date);
    expect_matches(
        *date,
        {R"({"d": "2024-02-29", "t": "2024-12-01T07:05:00Z", "u": "123e4567-e89b-12d3-a456-426614174000"})",
         R"({"d":"1999-10-31","t":"2000-01-01t23:59:60.5+05:30","u":"00000000-0000-0000-0000-000000000000"})"},
        {R"({"d": "2024-13-01", "t": "2024-12-01T07:05:00Z", "u": "123e4567-e89b-12d3-a456-426614174000"})",
         R"({"d": "2024-02-29", "t": "2024-12-01 07:05:00Z", "u": "123e4567-e89b-12d3-a456-426614174000"})",
         R"({"d": "2024-02-29", "t": "2024-12-01T07:05:00Z", "u": "123e4567e89b12d3a456426614174000"})"});
    EXPECT_EQ(schema_error(R"({"type": "string", "pattern": "a+"})"),
              "at /: pattern: only patterns that match the whole string (^...$) are supported");
    EXPECT_EQ(schema_error(R"({"type": "string", "pattern": "^(?=a)b$"})"),
              "at /: pattern: look-arounds and named groups are not supported (at character 1 after the ^)");
    EXPECT_EQ(schema_error(R"({"type": "string", "pattern": "^(a)\\1$"})"),
              "at /: pattern: back-references are not supported (at character 4 after the ^)");
    EXPECT_EQ(schema_error(R"({"type": "string", "pattern": "^a**$"})"),
              "at /: pattern: a quantifier after a quantifier (at character 3 after the ^)");
    EXPECT_EQ(schema_error(R"({"type": "string", "format": "email"})"),
              "at /: unsupported format \"email\" (supported: date, time, date-time, uuid)");
    EXPECT_EQ(schema_error(R"({"type": "integer", "pattern": "^1$"})"), "at /: 'pattern' applies to strings only");
}

TEST(JsonSchema, ReadmePydanticSummary) {
    // llama.cpp grammars/README.md, "A word about additionalProperties": a Pydantic schema
    // with $defs, additional properties, a pattern and nested arrays.
    auto g = schema_grammar(R"({
      "$defs": {
        "QAPair": {
          "additionalProperties": true,
          "properties": {
            "question": {"title": "Question", "type": "string"},
            "concise_answer": {"title": "Concise Answer", "type": "string"},
            "justification": {"title": "Justification", "type": "string"}
          },
          "required": ["question", "concise_answer", "justification"],
          "title": "QAPair",
          "type": "object"
        }
      },
      "additionalProperties": true,
      "properties": {
        "key_facts": {"items": {"pattern": "^- .{5,}$", "type": "string"}, "title": "Key Facts", "type": "array"},
        "question_answers": {
          "items": {"items": {"$ref": "#/$defs/QAPair"}, "minItems": 5, "type": "array"},
          "title": "Question Answers",
          "type": "array"
        }
      },
      "required": ["key_facts", "question_answers"],
      "title": "Summary",
      "type": "object"
    })");
    ASSERT_TRUE(g);
    const std::string qa       = R"({"question": "q?", "concise_answer": "a", "justification": "j"})";
    const std::string qa_extra = R"({"question": "q?", "concise_answer": "a", "justification": "j", "score": 3})";
    const std::string five     = "[" + qa + ", " + qa + ", " + qa_extra + ", " + qa + ", " + qa + "]";
    const std::string four     = "[" + qa + ", " + qa + ", " + qa + ", " + qa + "]";
    expect_matches(*g,
                   {R"({"key_facts": ["- fact one"], "question_answers": [)" + five + "]}",
                    R"({"key_facts": [], "question_answers": [], "source": "web"})"},
                   {R"({"key_facts": ["- abc"], "question_answers": []})",
                    R"({"key_facts": ["fact one"], "question_answers": []})",
                    R"({"key_facts": [], "question_answers": [)" + four + "]}",
                    R"({"key_facts": [], "question_answers": [], "key_facts": []})",
                    R"({"question_answers": [], "key_facts": []})"});
    // The README's Zod example uses a bound on a number and an e-mail format, which llama.cpp
    // skips silently; here they are refused by name.
    EXPECT_EQ(schema_error(R"({"type": "object", "properties": {"age": {"type": "number", "exclusiveMinimum": 0},
        "email": {"type": "string", "format": "email"}}, "required": ["age", "email"], "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"})"),
              "at /properties/age: 'exclusiveMinimum' is supported on integers only");
}

TEST(JsonSchema, UnsupportedKeywordsNamed) {
    EXPECT_EQ(schema_error(R"({"type": "string", "minItems": 1, "contains": {}})"),
              "at /: unsupported JSON Schema keyword 'contains'");
    EXPECT_EQ(schema_error(R"({"properties": {"x": {"not": {}}}})"),
              "at /properties/x: unsupported JSON Schema keyword 'not'");
    EXPECT_EQ(schema_error(R"({"allOf": [{}]})"), "at /: unsupported JSON Schema keyword 'allOf'");
    EXPECT_EQ(schema_error(R"({"type": "number", "minimum": 0})"), "at /: 'minimum' is supported on integers only");
    EXPECT_EQ(
        schema_error(R"({"$ref": "http://x/y.json"})"),
        "at /$ref: $ref 'http://x/y.json' is not \"#\", \"#/$defs/NAME\" or \"#/definitions/NAME\" of this schema");
    EXPECT_EQ(schema_error(R"({"type": "strin"})"), "at /: unknown type 'strin'");
    EXPECT_EQ(schema_error(R"({"type": "array", "minItems": 5, "maxItems": 2})"),
              "at /: maxItems is less than minItems");
    EXPECT_EQ(schema_error(R"({"properties": {"a": {}}, "required": ["b"]})"),
              "at /: required property 'b' is not in 'properties'");
    EXPECT_NE(schema_error("{not json").find("the schema is not JSON"), std::string::npos);
    EXPECT_EQ(schema_error("false"), "at /: the schema false accepts nothing");
}

TEST(JsonSchema, EmptySchemaRefused) {
    EXPECT_EQ(schema_error(""), "the schema is empty (an empty text is not JSON)");
    EXPECT_EQ(schema_error(" \n"), "the schema is empty (an empty text is not JSON)");
}

TEST(JsonSchema, ErrorsAtTheRootHaveAPointer) {
    EXPECT_EQ(schema_error(R"({"type": "integer", "minimum": 1e30})"),
              "at /: 'minimum' must be an integer of at most 16 digits");
    EXPECT_EQ(schema_error(R"({"type": "string", "minLength": 5, "maxLength": 2})"),
              "at /: maxLength is less than minLength");
    EXPECT_EQ(schema_error(R"({"properties": {"n": {"type": "string", "minLength": 5, "maxLength": 2}}})"),
              "at /properties/n: maxLength is less than minLength");
    // A property name is escaped as a JSON pointer writes it (~ as ~0, / as ~1).
    EXPECT_EQ(schema_error(R"({"properties": {"a/b~": {"not": {}}}})"),
              "at /properties/a~1b~0: unsupported JSON Schema keyword 'not'");
}

TEST(JsonSchema, EnumAndConstMeetTheRestOfTheSchema) {
    // Values the other keywords refuse are dropped; none left is refused as `false` is.
    const std::string nothing_enum  = "at /: no value of 'enum' satisfies the rest of the schema: it accepts nothing";
    const std::string nothing_const = "at /: no value of 'const' satisfies the rest of the schema: it accepts nothing";
    EXPECT_EQ(schema_error(R"({"type": "string", "enum": [1, 2]})"), nothing_enum);
    EXPECT_EQ(schema_error(R"({"type": "integer", "enum": ["a", "b"]})"), nothing_enum);
    EXPECT_EQ(schema_error(R"({"type": "string", "const": 5})"), nothing_const);
    EXPECT_EQ(schema_error(R"({"type": "integer", "minimum": 3, "const": 1})"), nothing_const);
    EXPECT_EQ(schema_error(R"({"type": "string", "maxLength": 1, "enum": ["ab", "cd"]})"), nothing_enum);
    EXPECT_EQ(schema_error(R"({"const": "a", "enum": ["b", "c"]})"), nothing_const);
    EXPECT_EQ(schema_error(R"({"properties": {"x": {"type": "null", "enum": [0, false]}}})"),
              "at /properties/x: no value of 'enum' satisfies the rest of the schema: it accepts nothing");
    // Keywords that are not checked against the values are refused by name where they apply to one.
    EXPECT_EQ(schema_error(R"({"type": "object", "properties": {"a": {"type": "integer"}},
        "additionalProperties": false, "const": {"b": 1}})"),
              "at /: 'const' together with 'properties' is not supported");
    EXPECT_EQ(schema_error(R"({"type": "string", "pattern": "^a$", "enum": ["a", "b"]})"),
              "at /: 'enum' together with 'pattern' is not supported");
    EXPECT_EQ(schema_error(R"({"enum": [[1], 2], "minItems": 1})"),
              "at /: 'enum' together with 'minItems' is not supported");
    EXPECT_EQ(schema_error(R"({"enum": ["a"], "anyOf": [{"type": "string"}]})"),
              "at /: 'enum' together with 'anyOf' is not supported");
    EXPECT_EQ(schema_error(R"({"enum": [1], "type": "strin"})"), "at /: unknown type 'strin'");
    EXPECT_EQ(schema_error(R"({"enum": [1], "minimum": "0"})"), "at /: 'minimum' must be a number");
    // The common forms keep working.
    auto str = schema_grammar(R"({"type": "string", "enum": ["a", "b"], "description": "d"})");
    ASSERT_TRUE(str);
    expect_matches(*str, {R"("a")", R"("b")"}, {"1", R"("c")"});
    auto ints = schema_grammar(R"({"type": "integer", "minimum": 2, "maximum": 5, "enum": [1, 3, 4.0, 4.5, "3", 7]})");
    ASSERT_TRUE(ints);
    expect_matches(*ints, {"3", "4.0"}, {"1", "4.5", R"("3")", "7"});
    auto excl = schema_grammar(R"({"exclusiveMinimum": 1, "exclusiveMaximum": 2.5, "enum": [1, 2, 2.5, "x"]})");
    ASSERT_TRUE(excl);
    expect_matches(*excl, {"2", R"("x")"}, {"1", "2.5"});
    auto lens = schema_grammar(R"({"minLength": 1, "maxLength": 2, "enum": ["", "ab", "abc", "éé", 10]})");
    ASSERT_TRUE(lens);
    expect_matches(*lens, {R"("ab")", "\"\xc3\xa9\xc3\xa9\"", "10"}, {R"("")", R"("abc")"});
    // A keyword for another type than the values' is irrelevant to them.
    auto other = schema_grammar(R"({"enum": [1, 2], "pattern": "^x$", "properties": {"a": {}}})");
    ASSERT_TRUE(other);
    expect_matches(*other, {"1", "2"}, {R"("x")"});
    auto both = schema_grammar(R"({"const": "a", "enum": ["a", "b"]})");
    ASSERT_TRUE(both);
    expect_matches(*both, {R"("a")"}, {R"("b")"});
    auto obj = schema_grammar(R"({"type": ["object", "null"], "const": {"b": 1}})");
    ASSERT_TRUE(obj);
    expect_matches(*obj, {R"({"b":1})"}, {"null", R"({"b":2})"});
}

TEST(JsonSchema, PatternRepeatingAnEmptyMatch) {
    // A repeated group that can match the empty string: (x*)* is x*, not left recursion.
    auto g = schema_grammar(R"({"type": "string", "pattern": "^(a*)*$"})");
    ASSERT_TRUE(g);
    expect_matches(*g, {R"("")", R"("a")", R"("aaaa")"}, {R"("b")", R"("ab")"});
    auto ab = schema_grammar(R"({"pattern": "^(a?b?)+c$"})");
    ASSERT_TRUE(ab);
    expect_matches(*ab, {R"("c")", R"("abc")", R"("bbaac")"}, {R"("")", R"("ca")", R"("abxc")"});
    auto alt = schema_grammar(R"({"pattern": "^(|x|y*)*z{0,}$"})");
    ASSERT_TRUE(alt);
    expect_matches(*alt, {R"("")", R"("xyyxz")", R"("zz")"}, {R"("zx")", R"("w")"});
    auto nested = schema_grammar(R"({"pattern": "^((a*)*(b?)+)*(){2,}(c*){2,3}d$"})");
    ASSERT_TRUE(nested);
    expect_matches(*nested, {R"("d")", R"("abbaccd")", R"("cccd")"}, {R"("dd")", R"("da")"});
    auto at_least = schema_grammar(R"({"pattern": "^(a?){2,}b$"})");
    ASSERT_TRUE(at_least);
    expect_matches(*at_least, {R"("b")", R"("aaab")"}, {R"("ba")"});
    // A pattern whose grammar is too large is refused naming the pattern, not the converter's rules.
    std::string big = "^";
    for (int i = 0; i < 420; ++i) big += "a{10000}";
    big += "$";
    EXPECT_EQ(schema_error(R"({"properties": {"p": {"pattern": ")" + big + "\"}}}"),
              "at /properties/p: pattern \"" + big + "\" is not supported (its grammar expands to too many elements)");
}

TEST(JsonSchema, PatternSurrogateEscapes) {
    // A surrogate pair is one character; a lone surrogate is refused.
    auto g = schema_grammar(R"({"pattern": "^\\uD83D\\uDE00[\\uD83D\\uDE01-\\uD83D\\uDE02]$"})");
    ASSERT_TRUE(g);
    expect_matches(*g, {"\"\xf0\x9f\x98\x80\xf0\x9f\x98\x82\""}, {"\"\xf0\x9f\x98\x80\xf0\x9f\x98\x83\""});
    EXPECT_EQ(schema_error(R"({"pattern": "^a\\uD800$"})"),
              "at /: pattern: a lone UTF-16 surrogate \\uD800 is not a character (at character 2 after the ^)");
    EXPECT_EQ(schema_error(R"({"pattern": "^[\\uDC00-\\uDFFF]$"})"),
              "at /: pattern: a lone UTF-16 surrogate \\uDC00 is not a character (at character 2 after the ^)");
    EXPECT_EQ(schema_error(R"({"pattern": "^\\uD800\\u0041$"})"),
              "at /: pattern: a lone UTF-16 surrogate \\uD800 is not a character (at character 1 after the ^)");
}

} // namespace
