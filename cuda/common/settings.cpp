#include "settings.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

#include "convlab/error.hpp"

namespace convlab::cuda {

std::size_t parse_bytes(const char* value, const char* variable, std::size_t fallback) {
  if (value == nullptr || value[0] == '\0') return fallback;
  const std::string text(value);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K" || suffix == "KiB") shift = 10;
  if (suffix == "M" || suffix == "MiB") shift = 20;
  if (suffix == "G" || suffix == "GiB") shift = 30;
  const std::string where = std::string(variable) + "='" + text + "'";
  if (digits == 0 || shift < 0) {
    throw Error(ErrorCode::invalid_argument,
                where + ": expected bytes, optionally with K/KiB, M/MiB or G/GiB (e.g. 512MiB)");
  }
  const unsigned long long count =
      digits > 19 ? ~0ull : std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
  if (digits > 19 || count > (~0ull >> shift)) {
    throw Error(ErrorCode::invalid_argument, where + " does not fit 64 bits");
  }
  return static_cast<std::size_t>(count << shift);
}

int64_t parse_count_or_auto(const char* value, const char* variable) {
  if (value == nullptr || value[0] == '\0' || std::string(value) == "auto") return 0;
  char* end = nullptr;
  const long long count = std::strtoll(value, &end, 10);
  if (*end != '\0' || count < 1 || count > (1ll << 40)) {
    throw Error(ErrorCode::invalid_argument,
                std::string(variable) + "='" + value + "': expected a positive integer or 'auto'");
  }
  return count;
}

std::size_t cublas_workspace_bytes(int cc_major) {
  static const char* value = std::getenv("CONVLAB_CUBLAS_WORKSPACE");
  const std::size_t fallback = (cc_major >= 9 ? 32 : 4) * (std::size_t(1) << 20);
  return parse_bytes(value, "CONVLAB_CUBLAS_WORKSPACE", fallback);
}

int64_t im2col_images_setting() {
  static const int64_t images =
      parse_count_or_auto(std::getenv("CONVLAB_CUDA_IM2COL_IMAGES"), "CONVLAB_CUDA_IM2COL_IMAGES");
  return images;
}

std::size_t find_budget() {
  static const std::size_t budget =
      parse_bytes(std::getenv("CONVLAB_CUDNN_FIND_WORKSPACE"), "CONVLAB_CUDNN_FIND_WORKSPACE",
                  std::size_t(1) << 30);
  return budget;
}

}  // namespace convlab::cuda
