// Reverse-mode differentiation as a PSK-Core to PSK-Core transform.
#pragma once
#include <string>

#include "core/core.h"
#include "core/prims.h"

namespace presk::core {

/// Adds to `p` (once; later calls return the same name) the function "vjp(F)" of F's parameters
/// followed by a cotangent of F's result, returning the tuple of the cotangents of F's
/// parameters, one per parameter (a parameter holding no real tensor gets an empty tuple).
/// Callees and folds are differentiated recursively. Throws Error naming the site of a let
/// that has no derivative (e.g. argmax feeding a real result).
std::string vjp(Program& p, const std::string& fn);

/// Does primitive `p` have a reverse rule? vjp refuses a let of one without it whose value
/// holds reals (argmax and the other int or bool results never need one).
bool has_vjp(Prim p);

} // namespace presk::core
