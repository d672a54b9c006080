// The picture of a conform pair's steps for the HTML report: per-step NMSE
// and KL divergence on logarithmic axes, as inline SVG (no script, no
// external file), the deviating steps drawn red and the NMSE threshold as a
// dashed line, each point titled with its step and value (a browser shows
// the title on hover). A reviewer sees at a glance whether the engines
// drift apart step by step or deviate at one step.
#pragma once

#include <string>

#include "harness/analysis/run_conformance.h"

namespace samebits::harness::report {

// Returns the SVG of `pair`'s measured steps, "" when none was measured.
// `max_nmse` is the threshold a step's NMSE is held to. Values of 0 are
// drawn on the axis's floor (titled "0"); values that are not finite are
// left out of the curve and counted in a line under the panel.
std::string StepMetricsSvg(const PairConformance& pair, double max_nmse);

}  // namespace samebits::harness::report
