// model_rewrite.h - a GGUF model copied to a new file with its metadata and tensors edited:
// the hostile and spoilt models of the gk-run tests.
#pragma once

#include "gk/gguf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gk_run_test {

struct gguf_closer {
    void operator()(gk_gguf * g) const { gk_gguf_free(g); }
};
using gguf_ptr = std::unique_ptr<gk_gguf, gguf_closer>;

/** A tensor of a model being rewritten: edit its shape (then set `data` to the new size)
 *  or its data. */
struct tensor_edit {
    std::string          name;
    enum gk_type         type;
    uint32_t             n_dims;
    int64_t              ne[4];
    std::vector<uint8_t> data;
};

/** `src` written to `dst` after `edit_kv` on its metadata and `edit_tensor` on each tensor
 *  (which drops the tensor by returning false). Either edit may be empty. Failures are
 *  test failures. */
inline void rewrite_model(const std::filesystem::path & src_path, const std::filesystem::path & dst_path,
                          const std::function<void(gk_gguf *)> &      edit_kv,
                          const std::function<bool(tensor_edit &)> & edit_tensor) {
    gk_gguf_error err{};
    gguf_ptr      src(gk_gguf_open(src_path.c_str(), &err));
    ASSERT_TRUE(src) << err.message;
    gguf_ptr dst(gk_gguf_create());
    for (int64_t i = 0; i < gk_gguf_kv_count(src.get()); ++i) {
        EXPECT_EQ(gk_gguf_set_value(dst.get(), gk_gguf_kv_key(src.get(), i), gk_gguf_kv_value(src.get(), i), &err),
                  GK_GGUF_OK);
    }
    if (edit_kv) edit_kv(dst.get());
    for (int64_t i = 0; i < gk_gguf_tensor_count(src.get()); ++i) {
        tensor_edit t{gk_gguf_tensor_name(src.get(), i), gk_gguf_tensor_type(src.get(), i),
                      gk_gguf_tensor_n_dims(src.get(), i), {}, {}};
        std::memcpy(t.ne, gk_gguf_tensor_ne(src.get(), i), sizeof t.ne);
        const auto * bytes = static_cast<const uint8_t *>(gk_gguf_tensor_data(src.get(), i));
        t.data.assign(bytes, bytes + gk_gguf_tensor_size(src.get(), i));
        if (edit_tensor && !edit_tensor(t)) continue;
        EXPECT_EQ(
            gk_gguf_add_tensor(dst.get(), t.name.c_str(), t.type, t.n_dims, t.ne, t.data.data(), t.data.size(), &err),
            GK_GGUF_OK)
            << t.name << ": " << err.message;
    }
    EXPECT_EQ(gk_gguf_write(dst.get(), dst_path.c_str(), &err), GK_GGUF_OK) << err.message;
}

} // namespace gk_run_test
