// meta.cpp - ggml's meta backend (a device made of several devices that splits tensors
// across them): the split axis names. The meta device itself is not provided (missing.cpp).
#include "convert.h"

extern "C" {

const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis) {
    switch (split_axis) {
    case GGML_BACKEND_SPLIT_AXIS_0: return "0";
    case GGML_BACKEND_SPLIT_AXIS_1: return "1";
    case GGML_BACKEND_SPLIT_AXIS_2: return "2";
    case GGML_BACKEND_SPLIT_AXIS_3: return "3";
    case GGML_BACKEND_SPLIT_AXIS_MIRRORED: return "MIRRORED";
    case GGML_BACKEND_SPLIT_AXIS_PARTIAL: return "PARTIAL";
    case GGML_BACKEND_SPLIT_AXIS_NONE: return "NONE";
    case GGML_BACKEND_SPLIT_AXIS_UNKNOWN: return "UNKNOWN";
    }
    ggml_abort(__FILE__, __LINE__, "ggml_backend_meta_split_axis_name: %d is not a split axis",
               static_cast<int>(split_axis));
}

} // extern "C"
