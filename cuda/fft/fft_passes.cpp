#include "fft_passes.hpp"

namespace convlab::cuda {

FftSchedule fft_schedule(const ConvProblem& p, Pass pass, int64_t library_work_bytes,
                         FftStaging staging, FftBatchLayout layout, FftCrop crop) {
  FftGeometryOptions options;
  options.layout = FftSpectrumLayout::frequency_major;
  options.alignment = 256;
  options.library_work_bytes = library_work_bytes;
  options.transpose_buffer = layout == FftBatchLayout::contiguous;
  options.staging_header_bytes = crop == FftCrop::fused ? kFftCropHeaderBytes : 0;
  FftSchedule s;
  s.layout = layout;
  s.crop = crop;
  // The staging layout needs the planes and sizes; the geometry then sizes the staging by it.
  s.staging = fft_staging_layout(fft_geometry(p, pass, options), staging, options.alignment);
  options.staging_planes = s.staging.staging_planes;
  s.geometry = fft_geometry(p, pass, options);
  const FftGeometry& g = s.geometry;
  s.transform = fft_transform(g);
  s.call = fft_cgemm_call(g);
  const bool contiguous = s.transposes();
  s.input_a = cufft_layout(s.transform, fft_planes(g, g.input_a), true, contiguous);
  s.input_b = cufft_layout(s.transform, fft_planes(g, g.input_b), true, contiguous);
  s.output = cufft_layout(s.transform, fft_planes(g, g.output), false, contiguous);
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

// The buffers of one run, at their offsets in the workspace.
struct PassBuffers {
  const FftSchedule& s;
  unsigned char* base;
  float* at(const FftBuffer& b) const { return reinterpret_cast<float*>(base + b.offset); }
  float* staging() const { return at(s.geometry.staging); }
  float* spectra(FftTensor which) const { return at(fft_spectra(s.geometry, which)); }
  float* transposed() const { return at(s.geometry.transpose); }
};

// Input i's forward transform from its real planes at `real` into its frequency-major
// spectra: straight there (strided), or plane-major into the transpose buffer and then
// transposed (contiguous).
void forward_transform(const PassBuffers& b, int i, FftTensor which, float* real, FftOps& ops) {
  const FftSchedule& s = b.s;
  const CufftLayout& layout = i == 0 ? s.input_a : s.input_b;
  if (!s.transposes()) {
    ops.transform(i, layout, real, b.spectra(which));
    return;
  }
  ops.transform(i, layout, real, b.transposed());
  ops.transpose(b.transposed(), fft_planes(s.geometry, which), s.transform.bins, b.spectra(which));
}

// The separate staging (or a fused one with w's spectra reused): each input in turn at the
// start of the staging, placed then transformed.
void run_separate_inputs(const ConvProblem& p, const PassBuffers& b, const Tensors& t, FftOps& ops,
                         bool reuse_filter_spectra) {
  const FftGeometry& g = b.s.geometry;
  const FftTensor inputs[2] = {g.input_a, g.input_b};
  for (int i = 0; i < 2; ++i) {
    if (reuse_filter_spectra && inputs[i] == FftTensor::w) continue;
    int64_t h = 0, w = 0;
    plane_shape(p, inputs[i], &h, &w);
    ops.place(fft_placement(g, inputs[i]), tensor_of(t, inputs[i]), h, w, fft_planes(g, inputs[i]),
              g.h.size, g.w.size, b.staging());
    forward_transform(b, i, inputs[i], b.staging(), ops);
  }
}

// The output: its spectra (transposed to plane-major first when contiguous) through the C2R,
// then cropped with the scale into the tensor, by a kernel after the C2R or by the C2R's
// store callback.
void run_output(const ConvProblem& p, const PassBuffers& b, const Tensors& t, FftOps& ops) {
  const FftSchedule& s = b.s;
  const FftGeometry& g = s.geometry;
  float* spectrum = b.spectra(g.output);
  if (s.transposes()) {
    ops.transpose(spectrum, s.transform.bins, fft_planes(g, g.output), b.transposed());
    spectrum = b.transposed();
  }
  int64_t h = 0, w = 0;
  plane_shape(p, g.output, &h, &w);
  const FftPlacement& placement = fft_placement(g, g.output);
  float* dst = tensor_of(t, g.output);
  if (s.crop == FftCrop::fused) {
    ops.inverse_cropped(s.output, spectrum, b.staging(),
                        FftCropTarget::of(placement, g.h.size, g.w.size, dst, h, w, g.scale));
    return;
  }
  ops.transform(2, s.output, b.staging(), spectrum);
  ops.crop(placement, b.staging(), g.h.size, g.w.size, fft_planes(g, g.output), h, w, g.scale, dst);
}

}  // namespace

void run_fft_pass(const ConvProblem& p, const FftSchedule& s, const Tensors& t, unsigned char* base,
                  FftOps& ops, bool reuse_filter_spectra) {
  const FftGeometry& g = s.geometry;
  const PassBuffers buffers{s, base};
  float* staging = buffers.staging();
  auto spectra = [&](FftTensor which) { return buffers.spectra(which); };
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
    forward_transform(buffers, 0, inputs[0], staging, ops);
    forward_transform(buffers, 1, inputs[1], staging + s.staging.b_offset, ops);
  } else {
    run_separate_inputs(p, buffers, t, ops, reuse_filter_spectra);
  }

  // Per-bin products, one batched CGEMM per group (complex elements are two floats).
  const CgemmCall& c = s.call;
  for (int64_t group = 0; group < c.groups; ++group) {
    ops.cgemm(c, spectra(c.a.tensor) + 2 * group * c.a.per_group,
              spectra(c.b.tensor) + 2 * group * c.b.per_group,
              spectra(c.c.tensor) + 2 * group * c.c.per_group, s.transform.bins);
  }
  run_output(p, buffers, t, ops);
}

}  // namespace convlab::cuda
