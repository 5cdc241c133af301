#include "lang/parser.h"

#include <algorithm>

#include "lang/lexer.h"
#include "lang/stack.h"

namespace presk {
namespace {

using namespace ast;

class Parser {
public:
    explicit Parser(std::vector<Token> t) : toks_(std::move(t)) {}

    File file() {
        File f;
        while (!at_end()) {
            if (is_kw("module")) f.modules.push_back(module());
            else if (is_kw("fn")) f.fns.push_back(fn());
            else if (is_kw("const")) f.consts.push_back(constant());
            else if (is_kw("type")) f.types.push_back(alias());
            else fail("expected 'module', 'fn', 'const' or 'type'");
        }
        once("function", f.fns);
        once("module", f.modules);
        once("constant", f.consts);
        once("type", f.types);
        for (const Module& m : f.modules) {
            once("function of module " + m.name, m.fns);
            once("parameter of module " + m.name, m.params);
        }
        return f;
    }

private:
    std::vector<Token> toks_;
    size_t p_ = 0;
    int depth_ = 0;

    const Token& peek(size_t k = 0) const { return toks_[std::min(p_ + k, toks_.size() - 1)]; }
    bool at_end() const { return peek().kind == Tok::End; }
    bool is_kw(const char* kw) const { return peek().kind == Tok::Ident && peek().text == kw; }
    bool is_p(const char* p, size_t k = 0) const { return peek(k).kind == Tok::Punct && peek(k).text == p; }
    [[noreturn]] void fail(const std::string& what) const {
        const Token& t = peek();
        std::string got = t.kind == Tok::End ? "end of file" : "'" + t.text + "'";
        throw Error(t.loc, what + ", found " + got);
    }
    Token next() { Token t = peek(); if (!at_end()) ++p_; return t; }
    bool accept(const char* p) { if (is_p(p)) { ++p_; return true; } return false; }
    void expect(const char* p) { if (!accept(p)) fail(std::string("expected '") + p + "'"); }
    Token ident(const char* what = "an identifier") {
        if (peek().kind != Tok::Ident) fail(std::string("expected ") + what);
        return next();
    }
    /// A name being declared: an identifier that is not a keyword.
    Token name(const char* what) {
        static const char* const kKeywords[] = {"module", "fn", "const", "type", "param", "let"};
        for (const char* k : kKeywords)
            if (is_kw(k)) fail(std::string("expected ") + what + " ('" + k + "' is a keyword)");
        return ident(what);
    }

    /// Refuses a second declaration of one name among `items` (each with `name` and `loc`).
    template <class T>
    static void once(const std::string& what, const std::vector<T>& items) {
        for (size_t i = 0; i < items.size(); ++i)
            for (size_t j = 0; j < i; ++j)
                if (items[i].name == items[j].name)
                    throw Error(items[i].loc, what + " '" + items[i].name + "' is declared twice (first at line " +
                                                  std::to_string(items[j].loc.line) + ")");
    }

    struct Deep {  // bounds recursion so that hostile input cannot exhaust the stack
        Parser& p;
        explicit Deep(Parser& q) : p(q) { if (++p.depth_ > 200) p.fail("nesting too deep"); }
        ~Deep() { --p.depth_; }
    };

    Module module() {
        Module m;
        m.loc = next().loc;
        m.name = name("a module name").text;
        // dims `{a, b}` (or `{}`) come before the body; a body starts with `param` or `fn`.
        bool dims = is_p("{") && ((is_p("}", 1) && is_p("{", 2)) ||
                                  (peek(1).kind == Tok::Ident && (is_p(",", 2) || is_p("}", 2))));
        if (dims && accept("{")) {
            if (!is_p("}")) do {
                Token d = name("a dim name");
                if (std::find(m.dims.begin(), m.dims.end(), d.text) != m.dims.end())
                    throw Error(d.loc, "dim '" + d.text + "' of module " + m.name + " is declared twice");
                m.dims.push_back(d.text);
            } while (accept(","));
            expect("}");
        }
        expect("{");
        while (!accept("}")) {
            if (is_kw("param")) m.params.push_back(param());
            else if (is_kw("fn")) m.fns.push_back(fn());
            else fail("expected 'param', 'fn' or '}'");
        }
        return m;
    }

    ExprP modref() {
        Token t = ident("a module name");
        auto e = std::make_shared<Expr>(Expr{Expr::ModRef, t.loc, t.text, {}, {}});
        expect("{");
        if (!is_p("}")) do e->args.push_back(expr()); while (accept(","));
        expect("}");
        return deepen(e);
    }

    ParamDecl param() {
        ParamDecl d;
        d.loc = next().loc;
        d.name = name("a parameter name").text;
        expect(":");
        if (is_kw("stack")) {
            next();
            expect("[");
            d.stack = expr();
            expect("]");
            d.mod = modref();
        } else if (peek().kind == Tok::Ident && is_p("{", 1)) {
            d.mod = modref();
        } else {
            d.type = type();
        }
        if (accept("=")) {
            Token t = ident("an initializer (normal, uniform, zeros, ones)");
            d.init = t.text;
            d.init_loc = t.loc;
            if (accept("(")) {
                if (!is_p(")")) do d.init_args.push_back(expr()); while (accept(","));
                expect(")");
            }
        }
        return d;
    }

    Fn fn() {
        Fn f;
        f.loc = next().loc;
        f.name = name("a function name").text;
        expect("(");
        if (!is_p(")")) do {
            Param p;
            Token t = name("a parameter name");
            for (const Param& q : f.params)
                if (q.name == t.text)
                    throw Error(t.loc, "parameter '" + t.text + "' of " + f.name + " is declared twice");
            p.loc = t.loc;
            p.name = t.text;
            expect(":");
            p.type = type();
            f.params.push_back(std::move(p));
        } while (accept(","));
        expect(")");
        if (accept("->")) f.ret = type();
        f.body = block();
        return f;
    }

    Const constant() {
        Const c;
        c.loc = next().loc;
        c.name = name("a constant name").text;
        expect(":");
        Token t = ident("'f64' or 'nat'");
        if (t.text == "nat") c.nat = true;
        else if (t.text != "f64") throw Error(t.loc, "a constant is 'f64' or 'nat', found '" + t.text + "'");
        expect("=");
        c.value = expr();
        return c;
    }

    TypeAlias alias() {
        TypeAlias a;
        a.loc = next().loc;
        a.name = name("a type name").text;
        expect("=");
        a.type = type();
        return a;
    }

    Block block() {
        Block b;
        expect("{");
        while (is_kw("let")) {
            Let l;
            l.loc = next().loc;
            if (accept("(")) {
                l.tuple = true;
                do l.names.push_back(name("a name").text); while (accept(","));
                expect(")");
            } else {
                l.names.push_back(name("a name").text);
            }
            expect("=");
            l.value = expr();
            accept(";");
            b.lets.push_back(std::move(l));
        }
        b.result = expr();
        accept(";");
        expect("}");
        return b;
    }

    TypeP type() {
        Deep guard(*this);
        auto t = std::make_shared<Type>();
        t->loc = peek().loc;
        if (is_p("[")) {
            t->kind = Type::Tensor;
            axes(*t);
        } else if (is_kw("int") || is_kw("bool")) {
            t->kind = Type::Tensor;
            t->elem = next().text;
            if (t->elem == "int" && accept("<")) {
                t->bound = primary();
                expect(">");
            }
            axes(*t);
        } else if (accept("(")) {
            t->kind = Type::Tuple;
            do t->items.push_back(type()); while (accept(","));
            expect(")");
        } else if (accept("{")) {
            t->kind = Type::Record;
            if (!is_p("}")) do {
                t->names.push_back(ident("a field name").text);
                expect(":");
                t->items.push_back(type());
            } while (accept(","));
            expect("}");
        } else if (is_kw("f64")) {
            next();
            t->kind = Type::F64;
        } else if (is_kw("nat")) {
            next();
            t->kind = Type::Nat;
        } else if (is_kw("params")) {
            next();
            t->kind = Type::Params;
            expect("(");
            t->mod = modref();
            expect(")");
        } else if (peek().kind == Tok::Ident) {
            t->kind = Type::Alias;
            t->name = next().text;
        } else {
            fail("expected a type");
        }
        return t;
    }

    void axes(Type& t) {
        expect("[");
        if (accept("...")) {
            t.ellipsis = true;
            if (!accept(",")) { expect("]"); return; }
        }
        if (!is_p("]")) do t.axes.push_back(axis()); while (accept(","));
        expect("]");
    }

    /// A tensor type's axis: an expression, or `NAME ':' expr`, a named axis of a written size.
    ExprP axis() {
        if (peek().kind == Tok::Ident && is_p(":", 1)) {
            Token n = next();
            next();
            ExprP a = make(Expr::Sized, n.loc, n.text);
            a->args = {expr()};
            return deepen(a);
        }
        return expr();
    }

    /// One axis of a subscript: `axis ':' i` or `axis ':' lo? '..' hi?`; the axis is a name or
    /// an integer (negative from the end).
    ExprP select() {
        Loc loc = peek().loc;
        ExprP s = make(Expr::Select, loc);
        if (peek().kind == Tok::Ident) s->args.push_back(make(Expr::Var, loc, next().text));
        else if (peek().kind == Tok::Number || is_p("-")) s->args.push_back(unary());
        else fail("expected an axis (a name or an integer) in a subscript");
        expect(":");
        ExprP lo = is_p("..") ? nullptr : expr();
        s->args.push_back(lo);
        if (accept("..")) {
            s->text = "..";
            s->args.push_back(is_p(",") || is_p("]") ? nullptr : expr());
        }
        return deepen(s);
    }

    /// A call's argument: an expression, a new axis `NAME ':' size` (split's), or either of
    /// them, then `->` and another (split and merge: `feat -> head: H`, `dh -> feat`).
    ExprP call_arg() {
        ExprP a = call_item();
        if (!is_p("->")) return a;
        ExprP r = make(Expr::Arrow, next().loc, "->");
        r->args = {a, call_item()};
        return deepen(r);
    }
    ExprP call_item() { return peek().kind == Tok::Ident && is_p(":", 1) ? axis() : expr(); }

    ExprP make(Expr::Kind k, Loc loc, std::string text = {}) {
        return std::make_shared<Expr>(Expr{k, loc, std::move(text), {}, {}});
    }

    /// Sets e's depth from its operands' and refuses a tree deeper than kMaxNesting (every stage
    /// after the parser recurses over it).
    ExprP deepen(ExprP e) {
        for (const ExprP& a : e->args)
            if (a) e->depth = std::max(e->depth, a->depth + 1);
        if (e->depth > kMaxNesting)
            throw Error(e->loc, "expression nested deeper than " + std::to_string(kMaxNesting) +
                                    " levels (each operator of a chain is a level)");
        return e;
    }

    /// After a binary operator: refuses one at the end of an expression at the operator itself
    /// (not at whatever follows, which may be lines below).
    void operand_after(const Token& op) {
        if (at_end() || is_p("}") || is_p(")") || is_p("]") || is_p(",") || is_p(";") || is_p("=") || is_kw("let"))
            throw Error(op.loc, "'" + op.text + "' has no right operand");
    }

    ExprP expr() {
        Deep guard(*this);
        ExprP e = term();
        while (is_p("+") || is_p("-")) {
            Token op = next();
            operand_after(op);
            ExprP b = make(Expr::Binary, op.loc, op.text);
            b->args = {e, term()};
            e = deepen(b);
        }
        return e;
    }

    ExprP term() {
        ExprP e = unary();
        while (is_p("*") || is_p("/")) {
            Token op = next();
            operand_after(op);
            ExprP b = make(Expr::Binary, op.loc, op.text);
            b->args = {e, unary()};
            e = deepen(b);
        }
        return e;
    }

    ExprP unary() {
        Deep guard(*this);
        if (is_p("-")) {
            Token op = next();
            ExprP n = make(Expr::Neg, op.loc);
            n->args = {unary()};
            return deepen(n);
        }
        return postfix();
    }

    ExprP postfix() {
        ExprP e = primary();
        for (;;) {
            // A call's '(' is on the line its callee ends on; on a new line it starts a new
            // expression (a block's result after a let).
            if (is_p("(") && peek().loc.line == toks_[p_ - 1].loc.line) {
                next();
                ExprP c = make(Expr::Call, e->loc);  // errors point at the callee
                c->args.push_back(e);
                if (!is_p(")")) do c->args.push_back(call_arg()); while (accept(","));
                expect(")");
                e = deepen(c);
            } else if (is_p("[")) {
                ExprP x = make(Expr::Subscript, next().loc);
                x->args.push_back(e);
                do x->args.push_back(select()); while (accept(","));
                expect("]");
                e = deepen(x);
            } else if (is_p(".")) {
                next();
                // `t.0`: a tuple's item (the lexer reads the digits after '.' as an integer).
                Token f = peek().kind == Tok::Number ? next() : ident("a field name or a tuple index");
                ExprP x = make(Expr::Field, f.loc, f.text);
                x->args = {e};
                e = deepen(x);
            } else {
                return e;
            }
        }
    }

    ExprP primary() {
        Deep guard(*this);
        const Token& t = peek();
        if (t.kind == Tok::Number) return make(Expr::Num, next().loc, t.text);
        if (t.kind == Tok::String) { Token s = next(); return make(Expr::Str, s.loc, s.text); }
        if (t.kind == Tok::Ident) { Token s = next(); return make(Expr::Var, s.loc, s.text); }
        if (is_p("(")) {
            Loc loc = next().loc;
            ExprP first = expr();
            if (!is_p(",")) { expect(")"); return first; }
            ExprP tup = make(Expr::Tuple, loc);
            tup->args.push_back(first);
            while (accept(",")) tup->args.push_back(expr());
            expect(")");
            return deepen(tup);
        }
        if (is_p("{")) {
            ExprP r = make(Expr::Record, next().loc);
            if (!is_p("}")) do {
                r->names.push_back(ident("a field name").text);
                expect(":");
                r->args.push_back(expr());
            } while (accept(","));
            expect("}");
            return deepen(r);
        }
        fail("expected an expression");
    }
};

} // namespace

ast::File parse(const Source& src) {
    Parser p(lex(src));
    return p.file();
}

} // namespace presk
