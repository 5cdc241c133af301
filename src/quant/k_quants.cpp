// k_quants.cpp - placeholder until the family lands: registers nothing yet.
#include "codec.h"

namespace gk::quant {
void register_k_quants(codec_table &) {}
} // namespace gk::quant
