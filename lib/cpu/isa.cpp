// Chooses among the per-instruction-set builds of the CPU kernels at run time.
#include "isa.hpp"

#include "convlab/error.hpp"

namespace convlab {

const char* to_string(CpuIsa isa) noexcept { return name_of(kCpuIsaNames, isa); }

bool cpu_isa_supported(CpuIsa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // __builtin_cpu_supports also checks that the OS saves the vector registers (XCR0).
  switch (isa) {
    case CpuIsa::generic:
      return true;
    case CpuIsa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuIsa::avx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return isa == CpuIsa::generic;
#endif
}

CpuVendor cpu_vendor() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_is("amd")) return CpuVendor::amd;
  if (__builtin_cpu_is("intel")) return CpuVendor::intel;
#endif
  return CpuVendor::other;
}

int64_t cpu_isa_vector_floats(CpuIsa isa) {
  return isa == CpuIsa::avx512 ? 16 : isa == CpuIsa::avx2 ? 8 : 4;
}

std::vector<std::string> cpu_isa_choices() {
  std::vector<std::string> choices{"auto"};
  for (const auto& entry : kCpuIsaNames) choices.emplace_back(entry.name);
  return choices;
}

CpuIsa cpu_isa(const std::string& choice, const std::string& knob) {
  if (choice == "auto") {
    if (cpu_isa_supported(CpuIsa::avx512)) return CpuIsa::avx512;
    if (cpu_isa_supported(CpuIsa::avx2)) return CpuIsa::avx2;
    return CpuIsa::generic;
  }
  if (auto isa = find_value(kCpuIsaNames, choice)) {
    if (!cpu_isa_supported(*isa)) {
      throw Error(ErrorCode::invalid_argument,
                  "knob " + knob + "=" + choice + ": this CPU does not support it");
    }
    return *isa;
  }
  throw Error(ErrorCode::invalid_argument, "invalid value '" + choice.substr(0, 64) +
                                               "' for knob " + knob +
                                               ": expected auto, generic, avx2 or avx512");
}

}  // namespace convlab
