#include "cudnn_names.hpp"

#include <cctype>

namespace convlab::cuda {

const std::vector<CudnnAlgoName>& cudnn_algo_names() {
  // Values are cudnn_ops.h's enumerators (cuDNN 9), checked against the header by
  // static_asserts in cudnn_algorithm.cpp.
  static const std::vector<CudnnAlgoName> names = {
      //  name                  fwd bwd_data bwd_filter deterministic family
      {"implicit_gemm", 0, -1, -1, true, Family::gemm},
      {"implicit_precomp_gemm", 1, -1, -1, true, Family::gemm},
      {"gemm", 2, -1, -1, true, Family::gemm},
      {"direct", 3, -1, -1, true, Family::direct},
      {"fft", 4, 2, 2, true, Family::fft},
      {"fft_tiling", 5, 3, 6, true, Family::fft_tiled},
      {"winograd", 6, 4, 4, true, Family::winograd},
      {"winograd_nonfused", 7, 5, 5, true, Family::winograd},
      {"algo_0", -1, 0, 0, false, Family::direct},
      {"algo_1", -1, 1, 1, true, Family::direct},
      {"algo_3", -1, -1, 3, false, Family::direct},
  };
  return names;
}

int cudnn_algo_for(const CudnnAlgoName& entry, Pass pass) {
  switch (pass) {
    case Pass::forward:
      return entry.forward;
    case Pass::backward_data:
      return entry.backward_data;
    case Pass::backward_filter:
      return entry.backward_filter;
  }
  return -1;
}

static const CudnnAlgoName* find_entry(Pass pass, int algo) {
  if (algo < 0) return nullptr;
  for (const CudnnAlgoName& entry : cudnn_algo_names()) {
    if (cudnn_algo_for(entry, pass) == algo) return &entry;
  }
  return nullptr;
}

std::string cudnn_enum_name(Pass pass, int algo) {
  const CudnnAlgoName* entry = find_entry(pass, algo);
  if (!entry) return "unknown";
  std::string name = pass == Pass::forward         ? "CUDNN_CONVOLUTION_FWD_ALGO_"
                     : pass == Pass::backward_data ? "CUDNN_CONVOLUTION_BWD_DATA_ALGO_"
                                                   : "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_";
  // The backward enumerators are spelled ALGO_0, not ALGO_ALGO_0.
  std::string suffix = entry->name;
  if (suffix.rfind("algo_", 0) == 0) suffix = suffix.substr(5);
  for (char c : suffix) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::string cudnn_registry_name(Pass pass, int algo) {
  const CudnnAlgoName* entry = find_entry(pass, algo);
  return entry ? std::string("cudnn.") + entry->name : "unknown";
}

std::string cudnn_passes_of(const CudnnAlgoName& entry) {
  std::string passes;
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    if (cudnn_algo_for(entry, pass) < 0) continue;
    if (!passes.empty()) passes += ", ";
    passes += to_string(pass);
  }
  return passes;
}

}  // namespace convlab::cuda
