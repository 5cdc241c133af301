// fp4.cpp - placeholder until the family lands: registers nothing yet.
#include "codec.h"

namespace gk::quant {
void register_fp4(codec_table &) {}
} // namespace gk::quant
