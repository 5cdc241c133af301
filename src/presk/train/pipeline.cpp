#include "train/pipeline.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lang/source.h"
#include "ref/chacha.h"

namespace presk::train {

TokenData read_tokens(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error({}, "--data " + path + ": it is a directory");
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in || in.bad()) throw Error({}, "--data " + path + ": cannot read it");
    const std::string text = ss.str();
    TokenData d;
    d.path = path;
    d.hash = ref::fnv1a64(text);
    size_t i = 0;
    while (i < text.size()) {
        if (std::isspace((unsigned char)text[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && !std::isspace((unsigned char)text[j])) ++j;
        const std::string word = text.substr(i, j - i);
        const bool digits = word.size() <= 18 && word.find_first_not_of("0123456789") == std::string::npos;
        if (!digits)
            throw Error({}, "--data " + path + ": token " + std::to_string(d.tokens.size() + 1) + " ('" +
                                word.substr(0, 32) + "') is not a natural number below 10^18");
        d.tokens.push_back(std::stoll(word));
        i = j;
    }
    if (d.tokens.empty()) throw Error({}, "--data " + path + ": no tokens");
    return d;
}

Pipeline::Pipeline(std::vector<TypeP> types, std::vector<std::string> names, uint64_t seed, std::optional<TokenData> data,
                   Synthesize synth)
    : types_(std::move(types)), names_(std::move(names)), seed_(seed), data_(std::move(data)), synth_(std::move(synth)) {
    if (!data_) return;
    const std::string what = "--data " + data_->path + ": ";
    if (types_.size() != 2 || !same_type(*types_[0], *types_[1]) || types_[0]->kind != Type::Tensor ||
        types_[0]->elem != Elem::Int || types_[0]->axes.size() != 2 || types_[0]->bound <= 0)
        throw Error({}, what + "a token file feeds an entry of two inputs int<V>[B, T] (ids, targets); this one takes " +
                            std::to_string(types_.size()) + " input(s)" +
                            (types_.empty() ? "" : ", the first " + to_string(*types_[0])));
    const int64_t v = types_[0]->bound, b = types_[0]->axes[0].size, t = types_[0]->axes[1].size;
    for (size_t i = 0; i < data_->tokens.size(); ++i)
        if (data_->tokens[i] >= v)
            throw Error({}, what + "token " + std::to_string(i + 1) + " is " + std::to_string(data_->tokens[i]) +
                                ", not below the vocabulary's " + std::to_string(v));
    windows_ = ((int64_t)data_->tokens.size() - 1) / t;
    per_epoch_ = windows_ / b;
    if (per_epoch_ < 1)
        throw Error({}, what + std::to_string(data_->tokens.size()) + " tokens make " + std::to_string(windows_) +
                            " window(s) of " + std::to_string(t + 1) + ", fewer than a batch of " + std::to_string(b));
}

std::vector<ref::Value> Pipeline::batch(int64_t n, BatchPos* pos) {
    std::vector<ref::Value> out;
    if (!data_) {
        *pos = {0, n - 1};
        for (size_t i = 0; i < types_.size(); ++i) out.push_back(synth_(types_[i], names_[i] + "@" + std::to_string(n)));
        return out;
    }
    *pos = {(n - 1) / per_epoch_, (n - 1) % per_epoch_};
    if (order_epoch_ != pos->epoch) {
        order_.resize((size_t)windows_);
        for (int64_t w = 0; w < windows_; ++w) order_[(size_t)w] = w;
        ref::ChaCha rng(seed_, "data.epoch." + std::to_string(pos->epoch));
        for (int64_t i = windows_ - 1; i >= 1; --i) std::swap(order_[(size_t)i], order_[(size_t)(rng.next_unit() * (double)(i + 1))]);
        order_epoch_ = pos->epoch;
    }
    const int64_t b = types_[0]->axes[0].size, t = types_[0]->axes[1].size;
    for (int64_t shift = 0; shift < 2; ++shift) {  // ids, then targets one token later
        ref::Tensor x;
        x.type = types_[(size_t)shift];
        for (int64_t r = 0; r < b; ++r) {
            const int64_t w = order_[(size_t)(pos->index * b + r)];
            for (int64_t k = 0; k < t; ++k) x.in.push_back(data_->tokens[(size_t)(w * t + k + shift)]);
        }
        out.push_back(ref::make_tensor(std::move(x)));
    }
    return out;
}

std::string Pipeline::source() const {
    if (!data_) return "synthesised";
    std::ostringstream s;
    s << "tokens " << std::hex << data_->hash << std::dec << " " << data_->tokens.size();
    return s.str();
}

} // namespace presk::train
