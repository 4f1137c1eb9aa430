// A fixture for ctest `layering_catches_back_edge`, never compiled: a relative include that
// climbs out of its folder, which include scope cannot see.
#include "../bench/stats.h"
