#pragma once
// The hint printed after a sweep: how to plot its CSV.

#include <string>

namespace convbench {

/// The command that plots a sweep CSV (bench/plot_sweep.py).
std::string plot_command(const std::string& csv);

}  // namespace convbench
