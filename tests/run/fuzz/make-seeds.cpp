// make-seeds DIR - write the tiny models of tests/run/tiny_model.h that seed fuzz-model
// (tests/run/fuzz/seeds): each architecture, the BPE and WordPiece tokenizers, tied embeddings, and a few files the loader
// must refuse (blocks past block_count, an f64 matrix, a short per-layer array).
#include "tiny_model.h"

#include <cstdio>
#include <string>

int main(int argc, char ** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make-seeds DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    bool              ok  = true;
    auto save = [&](const tiny_model::gguf_ptr & g, const char * name) { ok = tiny_model::write(g.get(), dir + "/" + name) && ok; };
    for (const char * arch : {"llama", "qwen3", "gemma3"}) {
        tiny_model::spec s;
        s.arch = arch;
        save(tiny_model::build(s), (std::string(arch) + ".gguf").c_str());
    }
    for (const char * tokenizer : {"gpt2", "bert"}) {
        tiny_model::spec s;
        s.tokenizer = tokenizer;
        s.n_layer   = 1;
        save(tiny_model::build(s), (std::string("llama-") + tokenizer + ".gguf").c_str());
    }
    {
        tiny_model::spec s;
        s.tied    = true;
        s.n_layer = 1;
        save(tiny_model::build(s), "llama-tied.gguf");
    }
    {
        tiny_model::spec s;
        s.n_layer = 3;
        auto g    = tiny_model::build(s);
        gk_gguf_set_u32(g.get(), "llama.block_count", 2, nullptr);
        save(g, "llama-extra-block.gguf");
    }
    {
        tiny_model::spec s;
        s.types["blk.0.attn_q.weight"] = GK_TYPE_F64;
        save(tiny_model::build(s), "llama-f64.gguf");
    }
    {
        auto           g     = tiny_model::build();
        const uint32_t one[] = {2};
        gk_gguf_set_array(g.get(), "llama.attention.head_count", GK_GGUF_TYPE_UINT32, one, 1, nullptr);
        save(g, "llama-heads-array.gguf");
    }
    if (!ok) std::fprintf(stderr, "make-seeds: writing into %s failed\n", dir.c_str());
    return ok ? 0 : 1;
}
