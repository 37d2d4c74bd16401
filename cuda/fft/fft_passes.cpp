#include "fft_passes.hpp"

namespace convlab::cuda {

FftSchedule fft_schedule(const ConvProblem& p, Pass pass, int64_t library_work_bytes,
                         FftStaging staging) {
  FftGeometryOptions options;
  options.layout = FftSpectrumLayout::frequency_major;
  options.alignment = 256;
  options.library_work_bytes = library_work_bytes;
  FftSchedule s;
  // The staging layout needs the planes and sizes; the geometry then sizes the staging by it.
  s.staging = fft_staging_layout(fft_geometry(p, pass, options), staging, options.alignment);
  options.staging_planes = s.staging.staging_planes;
  s.geometry = fft_geometry(p, pass, options);
  const FftGeometry& g = s.geometry;
  s.transform = fft_transform(g);
  s.call = fft_cgemm_call(g);
  s.input_a = cufft_layout(s.transform, fft_planes(g, g.input_a), true);
  s.input_b = cufft_layout(s.transform, fft_planes(g, g.input_b), true);
  s.output = cufft_layout(s.transform, fft_planes(g, g.output), false);
  return s;
}

namespace {

float* tensor_of(const Tensors& t, FftTensor which) {
  return which == FftTensor::x ? t.x : which == FftTensor::w ? t.w : t.y;
}

// One plane of a tensor as stored (NCHW / KCRS): its height and width.
void plane_shape(const ConvProblem& p, FftTensor which, int64_t* h, int64_t* w) {
  if (which == FftTensor::x) *h = p.h, *w = p.w;
  if (which == FftTensor::w) *h = p.r, *w = p.s;
  if (which == FftTensor::y) *h = p.out_h(), *w = p.out_w();
}

// The separate staging (or a fused one with w's spectra reused): each input in turn at the
// start of the staging, placed then transformed.
template <typename Spectra>
void run_separate_inputs(const ConvProblem& p, const FftSchedule& s, const Tensors& t,
                         float* staging, const Spectra& spectra, FftOps& ops,
                         bool reuse_filter_spectra) {
  const FftGeometry& g = s.geometry;
  const FftTensor inputs[2] = {g.input_a, g.input_b};
  const CufftLayout* layouts[2] = {&s.input_a, &s.input_b};
  for (int i = 0; i < 2; ++i) {
    if (reuse_filter_spectra && inputs[i] == FftTensor::w) continue;
    int64_t h = 0, w = 0;
    plane_shape(p, inputs[i], &h, &w);
    ops.place(fft_placement(g, inputs[i]), tensor_of(t, inputs[i]), h, w, fft_planes(g, inputs[i]),
              g.h.size, g.w.size, staging);
    ops.transform(i, *layouts[i], staging, spectra(inputs[i]));
  }
}

}  // namespace

void run_fft_pass(const ConvProblem& p, const FftSchedule& s, const Tensors& t, unsigned char* base,
                  FftOps& ops, bool reuse_filter_spectra) {
  const FftGeometry& g = s.geometry;
  float* staging = reinterpret_cast<float*>(base + g.staging.offset);
  auto spectra = [&](FftTensor which) {
    return reinterpret_cast<float*>(base + fft_spectra(g, which).offset);
  };
  // Inputs: placed into the real planes (both by one gather when fused), each transformed
  // into its frequency-major spectra.
  const FftTensor inputs[2] = {g.input_a, g.input_b};
  const bool skips_w =
      reuse_filter_spectra && (g.input_a == FftTensor::w || g.input_b == FftTensor::w);
  if (s.staging.mode == FftStaging::fused && !skips_w) {
    StagedInput staged[2];
    for (int i = 0; i < 2; ++i) {
      int64_t h = 0, w = 0;
      plane_shape(p, inputs[i], &h, &w);
      staged[i] = StagedInput::of(fft_placement(g, inputs[i]), tensor_of(t, inputs[i]), h, w,
                                  fft_planes(g, inputs[i]));
    }
    ops.place_pair(staged[0], staged[1], s.staging, g.h.size, g.w.size, staging);
    ops.transform(0, s.input_a, staging, spectra(inputs[0]));
    ops.transform(1, s.input_b, staging + s.staging.b_offset, spectra(inputs[1]));
  } else {
    run_separate_inputs(p, s, t, staging, spectra, ops, reuse_filter_spectra);
  }

  // Per-bin products, one batched CGEMM per group (complex elements are two floats).
  const CgemmCall& c = s.call;
  for (int64_t group = 0; group < c.groups; ++group) {
    ops.cgemm(c, spectra(c.a.tensor) + 2 * group * c.a.per_group,
              spectra(c.b.tensor) + 2 * group * c.b.per_group,
              spectra(c.c.tensor) + 2 * group * c.c.per_group, s.transform.bins);
  }
  // Output: inverse transform into the real planes, crop with the scale into the tensor.
  int64_t h = 0, w = 0;
  plane_shape(p, g.output, &h, &w);
  ops.transform(2, s.output, staging, spectra(g.output));
  ops.crop(fft_placement(g, g.output), staging, g.h.size, g.w.size, fft_planes(g, g.output), h, w,
           g.scale, tensor_of(t, g.output));
}

}  // namespace convlab::cuda
