#include "register_cpu.hpp"

#include "convlab/config.hpp"

namespace convlab {

// Each defined in its strategy's folder.
void register_cpu_im2col(Registry& registry);  // im2col/cpu_im2col.cpp
void register_cpu_winograd(Registry& registry);  // winograd/cpu_winograd.cpp
void register_cpu_fft(Registry& registry);     // fft/cpu_fft.cpp       (with FFTW)
void register_cpu_fft_tiled(Registry& registry);  // fft_tiled/cpu_fft_tiled.cpp (with FFTW)
void register_cpu_onednn(Registry& registry);  // onednn/onednn_algorithm.cpp (with oneDNN)

void register_cpu(Registry& registry) {
  register_cpu_im2col(registry);
  register_cpu_winograd(registry);
#if CONVLAB_HAVE_FFTW
  register_cpu_fft(registry);
  register_cpu_fft_tiled(registry);
#else
  registry.add_missing(
      {"cpu.fft", "not built: FFTW (libfftw3-dev) was not found at configure time"});
  registry.add_missing(
      {"cpu.fft_tiled", "not built: FFTW (libfftw3-dev) was not found at configure time"});
#endif
#if CONVLAB_HAVE_ONEDNN
  register_cpu_onednn(registry);
#else
  registry.add_missing(
      {"cpu.onednn*", "not built: oneDNN (libdnnl-dev) was not found at configure time"});
#endif
}

}  // namespace convlab
