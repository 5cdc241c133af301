// The seed's printed kernels for tutorial/01_linear.psk 'Linear{3, 2}.apply' at batch = 4 in
// f32 (../shared/seeds/presk-native.txt, "PSK-Kernel v0"), which the printer, the lowering and
// `presk dump --stage kernel` must reproduce character for character.
#pragma once

namespace presk::test {

inline constexpr const char* kSeedDot = R"(kernel dot (%0 : f32[batch: 4, 3], %1 : f32[3, 2]) -> %2 : f32[batch: 4, 2] {
  for i0 in 0..4 {
    for i2 in 0..2 {
      %2[i0, i2] = 0
    }
    for i1 in 0..3 {
      s0 = %0[i0, i1]
      for i2 in 0..2 {
        %2[i0, i2] = (%2[i0, i2] + (s0 * %1[i1, i2]))
      }
    }
  }
}
)";

inline constexpr const char* kSeedAdd = R"(kernel add (%0 : f32[batch: 4, 2], %1 : f32[2]) -> %2 : f32[batch: 4, 2] {
  for i0 in 0..4 {
    for i1 in 0..2 {
      %2[i0, i1] = (%0[i0, i1] + %1[i1])
    }
  }
}
)";

} // namespace presk::test
