// plain.cpp - placeholder until the family lands: registers nothing yet.
#include "codec.h"

namespace gk::quant {
void register_plain(codec_table &) {}
} // namespace gk::quant
