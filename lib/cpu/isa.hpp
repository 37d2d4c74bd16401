#pragma once
// The instruction sets the CPU kernels are compiled for, and the choice among them at run
// time. A kernel source is compiled once per instruction set (CMake's
// convlab_cpu_isa_sources, lib/cpu/CMakeLists.txt), each build in its own namespace, and a
// plan picks one from its `isa` knob, so one binary runs on any x86-64 CPU and still uses
// AVX-512 where the CPU has it. cpu.fft's bin GEMM, cpu.winograd's tile transforms and the
// unpacked GEMM (gemm_kernels/) use it.

#include <cstdint>
#include <string>
#include <vector>

#include "convlab/enum_names.hpp"

namespace convlab {

/// The instruction sets: the portable x86-64 baseline (SSE2), AVX2 + FMA, AVX-512F + FMA.
enum class CpuIsa { generic, avx2, avx512 };
inline constexpr auto kCpuIsaNames = enum_names<CpuIsa::avx512>({
    {CpuIsa::generic, "generic"},
    {CpuIsa::avx2, "avx2"},
    {CpuIsa::avx512, "avx512"},
});
const char* to_string(CpuIsa isa) noexcept;

/// Who designed this CPU (x86's vendor string), for the few defaults that were measured to
/// go opposite ways on AMD's and Intel's cores with the same instruction set.
enum class CpuVendor { amd, intel, other };
CpuVendor cpu_vendor();

/// Whether this CPU (and its OS) can run the kernels of `isa`.
bool cpu_isa_supported(CpuIsa isa);
/// Floats per SIMD vector of the kernels of `isa`: 4, 8, 16.
int64_t cpu_isa_vector_floats(CpuIsa isa);
/// The values of an `isa` knob: "auto", then every instruction set.
std::vector<std::string> cpu_isa_choices();
/// The instruction set an `isa` knob's value names: "auto" (the widest this CPU runs) or one
/// of kCpuIsaNames. Throws Error{invalid_argument} naming `knob` (e.g. "cpu.fft.isa") for
/// an unknown value or one this CPU does not run.
CpuIsa cpu_isa(const std::string& choice, const std::string& knob);

}  // namespace convlab
