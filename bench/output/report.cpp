#include "output/report.hpp"

#include <iostream>

#include "output/output_file.hpp"

namespace convbench {

void write_report(const std::optional<std::string>& format, const std::optional<std::string>& out,
                  const std::string& flag, const ReportWriter& write) {
  write(std::cout, format.value_or("table"));
  if (!out) return;
  const std::string suffix = ".json";
  const bool json = out->size() > suffix.size() &&
                    out->compare(out->size() - suffix.size(), suffix.size(), suffix) == 0;
  OutputFile output(*out, flag, OutputFile::OnAbandon::remove);
  write(output.begin(), json ? "json" : "csv");
  output.commit();
}

}  // namespace convbench
