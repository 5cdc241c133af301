// low_bit.cpp - placeholder until the family lands: registers nothing yet.
#include "codec.h"

namespace gk::quant {
void register_low_bit(codec_table &) {}
} // namespace gk::quant
