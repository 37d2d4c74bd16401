// The plot hint (output/plot_command.hpp).
#include "output/plot_command.hpp"

namespace convbench {

std::string plot_command(const std::string& csv) {
  std::string png = csv;
  if (png.size() > 4 && png.compare(png.size() - 4, 4, ".csv") == 0) png.resize(png.size() - 4);
  png += ".png";
#ifdef CONVBENCH_PLOT_SCRIPT
  const std::string script = CONVBENCH_PLOT_SCRIPT;
#else
  const std::string script = "bench/plot_sweep.py";
#endif
  return "/usr/bin/python3 " + script + " " + csv + " -o " + png;
}

}  // namespace convbench
