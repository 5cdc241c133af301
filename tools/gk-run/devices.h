// devices.h - gk-run's --list-devices, --device and -ngl (llama.cpp's meanings: see
// docs/gk-run.md, "Devices").
#pragma once

#include "options.h"

#include "gk/gk-backend.h"

#include <string>

namespace gk_run_tool {

/** --list-devices: "Available devices:" and one line per device of the registry, as
 *  llama.cpp prints them ("  Vulkan0: llvmpipe (...) (2048 MiB, 2048 MiB free)"), the
 *  CPU last, on stdout. */
void print_devices();

/** The device that takes -ngl's blocks: --device's first (a warning names the others:
 *  gk-run uses one device), else, when -ngl asks for blocks, the registry's first device
 *  that is not the CPU. nullptr (the CPU alone) for --device none, -ngl 0, or no device
 *  (with -ngl > 0 a warning, as llama.cpp's "no usable GPU found"). false and a message
 *  listing the devices there are when --device names one that does not exist (or the
 *  CPU, which llama.cpp refuses too). */
bool choose_device(const run_options & opt, gk_backend_dev_t * device, std::string * error);

/** The blocks -ngl puts on the device: its count, or -1 (all, and the output layer) for
 *  auto / all and when --device is given without -ngl (llama.cpp's default, auto). */
int64_t gpu_layers(const run_options & opt);

} // namespace gk_run_tool
