// A fixture for ctest `layering_catches_back_edge`, never compiled: a checkpoint file that
// includes a header of engine/bench, which the library graph does not let it see.
#include "engine/checkpoint/safetensors.h"
#include "engine/bench/stats.h"
