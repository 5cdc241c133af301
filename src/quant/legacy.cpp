// legacy.cpp - placeholder until the family lands: registers nothing yet.
#include "codec.h"

namespace gk::quant {
void register_legacy(codec_table &) {}
} // namespace gk::quant
