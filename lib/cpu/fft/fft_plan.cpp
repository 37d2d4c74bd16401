#include "fft_plan.hpp"

#include <chrono>
#include <cstring>
#include <sstream>

#include "convlab/error.hpp"
#include "worker_pool.hpp"

namespace convlab::cpu_fft {

std::vector<KnobSpec> fft_plan_knobs(const std::string& planner_doc, const std::string& isa_doc) {
  return {choice_knob("planner", "estimate", planner_names(), "CONVLAB_FFTW_PLANNER", planner_doc),
          choice_knob("isa", "auto", cpu_isa_choices(), "CONVLAB_FFT_ISA", isa_doc)};
}
namespace {

constexpr int64_t kBinMultiple = 8;  // the widest kernel's vector (AVX-512: 8 complex bins)

// Rows and columns of a tensor's own planes (x: H x W, w: R x S, y: OH x OW).
struct PlaneShape {
  int64_t rows, cols;
  int64_t elems() const { return rows * cols; }
};
PlaneShape plane_shape(const ConvProblem& p, FftTensor t) {
  return t == FftTensor::x ? PlaneShape{p.h, p.w}
         : t == FftTensor::w ? PlaneShape{p.r, p.s}
                             : PlaneShape{p.out_h(), p.out_w()};
}

int64_t chunks(int64_t planes, int64_t chunk) { return (planes + chunk - 1) / chunk; }

}  // namespace

int64_t chunk_planes(const FftGeometry& g) {
  // Per-worker staging is chunk * Hf * Wf floats and must stay a multiple of 64 bytes for
  // FFTW's alignment: 8 planes are whenever Hf * Wf is even (always: cpu.fft's Wf is even).
  return (g.h.size * g.w.size) % 2 == 0 ? 8 : 16;
}

FftGeometry cpu_fft_geometry(const ConvProblem& problem, Pass pass, int threads) {
  FftGeometryOptions options;
  options.layout = FftSpectrumLayout::plane_major;
  options.bin_multiple = kBinMultiple;
  options.even_w = true;  // allocation-free FFTW row plans (FFTW_NO_BUFFERING)
  options.staging_planes = 1;
  const int64_t chunk = chunk_planes(fft_geometry(problem, pass, options));
  options.staging_planes = checked_mul(chunk, threads, "cpu.fft staging planes");
  return fft_geometry(problem, pass, options);
}

struct FftPlan::RunState {
  float* tensor[3];   // x, w, y by FftTensor
  float* spectra[3];  // interleaved complex, plane-major
  float* staging;
};

FftPlan::FftPlan(const ConvProblem& problem, Pass pass, int threads, CpuIsa isa,
                 const std::string& planner)
    : problem_(problem), pass_(pass), threads_(threads), isa_(isa),
      geometry_(cpu_fft_geometry(problem, pass, threads)), planner_(planner),
      planner_flags_(planner_flags(planner)),
      where_(std::string("cpu.fft ") + to_string(pass) + " " + problem.descriptor()) {
  chunk_ = chunk_planes(geometry_);
  staging_stride_ = chunk_ * geometry_.h.size * geometry_.w.size;
  reserve_workers(threads_);
  make_plans(geometry_.input_a, false);
  make_plans(geometry_.input_b, false);
  make_plans(geometry_.output, true);
  // Every lookup run() will make, made once here: find() throws, and a task must not.
  for (FftTensor t : {geometry_.input_a, geometry_.input_b, geometry_.output}) {
    const FftPlacement& pl = fft_placement(geometry_, t);
    if (pl.h.count == 0 || pl.w.count == 0) continue;
    const bool inverse = t == geometry_.output;
    const int64_t planes = fft_planes(geometry_, t);
    for (int64_t q : {planes < chunk_ ? planes : chunk_, planes % chunk_}) {
      if (q == 0) continue;
      find(inverse ? Kind::rows_inverse : Kind::rows_forward, t, q);
      find(inverse ? Kind::columns_inverse : Kind::columns_forward, t, q);
    }
  }
  describe_plan();
}

void FftPlan::make_plans(FftTensor tensor, bool inverse) {
  const FftGeometry& g = geometry_;
  const FftPlacement& pl = fft_placement(g, tensor);
  if (pl.h.count == 0 || pl.w.count == 0) return;  // all zero: no transform at all
  const int64_t planes = fft_planes(g, tensor);
  const int64_t ps = g.plane_stride;
  const std::string where = where_ + " ";
  int64_t counts[2] = {planes < chunk_ ? planes : chunk_, planes % chunk_};
  for (int64_t q : counts) {
    if (q == 0) continue;
    RowBatch b;
    b.n = g.w.size;
    b.planes = q;
    b.rows = pl.h.count;
    const Kind columns = inverse ? Kind::columns_inverse : Kind::columns_forward;
    const Kind rows = inverse ? Kind::rows_inverse : Kind::rows_forward;
    bool have_columns = false, have_rows = false;
    for (const Entry& e : plans_) {
      have_columns |= e.kind == columns && e.planes == q;
      have_rows |= e.kind == rows && e.tensor == tensor && e.planes == q;
    }
    if (!have_columns) {
      plans_.push_back({columns, tensor, q,
                        plan_columns(planner_flags_, g.h.size, 1, g.half_w, g.h.size, q, ps,
                                     inverse ? +1 : -1, where + "columns")});
    }
    if (have_rows) continue;
    // Bins are column-major within a plane (kw * Hf + kh): see transform_chunk.
    const int64_t row_offset = pl.h.offset;
    if (!inverse) {
      b.in_elem = 1, b.out_elem = g.h.size;
      b.in_plane = pl.h.count * g.w.size, b.in_row = g.w.size;
      b.out_plane = ps, b.out_row = pl.h.step;
      plans_.push_back({rows, tensor, q,
                        plan_rows_real(planner_flags_, b, false, q * pl.h.count * g.w.size, q * ps,
                                       row_offset, where + "rows r2c")});
    } else {
      b.in_elem = g.h.size, b.out_elem = 1;
      b.in_plane = ps, b.in_row = pl.h.step;
      b.out_plane = pl.h.count * g.w.size, b.out_row = g.w.size;
      plans_.push_back({rows, tensor, q,
                        plan_rows_real(planner_flags_, b, true, q * pl.h.count * g.w.size, q * ps,
                                       row_offset, where + "rows c2r")});
    }
  }
}

const FftwPlan& FftPlan::find(Kind kind, FftTensor tensor, int64_t planes) const {
  const bool any_tensor = kind == Kind::columns_forward || kind == Kind::columns_inverse;
  for (const Entry& e : plans_) {
    if (e.kind == kind && e.planes == planes && (any_tensor || e.tensor == tensor)) return e.plan;
  }
  throw Error(ErrorCode::backend, "cpu.fft: internal error, no FFTW plan for a chunk of " +
                                      std::to_string(planes) + " planes");
}

void FftPlan::transform_chunk(const RunState& s, FftTensor tensor, int64_t first,
                              int64_t planes, int worker) const {
  const FftGeometry& g = geometry_;
  const FftPlacement& pl = fft_placement(g, tensor);
  const int64_t ps = g.plane_stride, wf = g.w.size, hf = g.h.size;
  float* spec = s.spectra[static_cast<int>(tensor)] + 2 * first * ps;
  if (pl.h.count == 0 || pl.w.count == 0) {
    std::memset(spec, 0, static_cast<size_t>(planes * ps) * 8);
    return;
  }
  // Stage the chunk's nonzero rows: each row a zero Wf-row with the tensor's elements at
  // their slots (x: shifted by the padding, w: dilated, y: upsampled by the stride).
  const PlaneShape shape = plane_shape(problem_, tensor);
  const float* src = s.tensor[static_cast<int>(tensor)] + first * shape.elems();
  float* stg = s.staging + worker * staging_stride_;
  const int64_t rows = pl.h.count, cols = pl.w.count, off = pl.w.offset, step = pl.w.step;
  for (int64_t j = 0; j < planes; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      float* d = stg + (j * rows + r) * wf;
      const float* row = src + j * shape.elems() + r * shape.cols;
      if (step == 1) {
        std::memset(d, 0, static_cast<size_t>(off) * 4);
        std::memcpy(d + off, row, static_cast<size_t>(cols) * 4);
        std::memset(d + off + cols, 0, static_cast<size_t>(wf - off - cols) * 4);
      } else {
        std::memset(d, 0, static_cast<size_t>(wf) * 4);
        for (int64_t c = 0; c < cols; ++c) d[off + c * step] = row[c];
      }
    }
    // The row pass writes only the placed rows; the others and the padding bins are zero.
    // Bins are column-major within the plane (bin of (kh, kw) = kw * Hf + kh): the column
    // transforms are then unit-stride, which FFTW runs 1.5-3x faster than columns of
    // stride Wf/2+1 and plans more consistently (docs/strategy-fft.md). The per-bin product
    // does not care about the order of bins.
    float* sp = spec + 2 * j * ps;
    for (int64_t kw = 0; kw < g.half_w; ++kw) {
      float* column = sp + 2 * kw * hf;
      if (pl.h.step == 1) {
        std::memset(column, 0, static_cast<size_t>(pl.h.offset) * 8);
        std::memset(column + 2 * (pl.h.offset + pl.h.count), 0,
                    static_cast<size_t>(hf - pl.h.offset - pl.h.count) * 8);
      } else {
        std::memset(column, 0, static_cast<size_t>(hf) * 8);
      }
    }
    std::memset(sp + 2 * g.bins, 0, static_cast<size_t>(ps - g.bins) * 8);
  }
  execute_r2c(find(Kind::rows_forward, tensor, planes), stg, spec + 2 * pl.h.offset);
  execute_c2c(find(Kind::columns_forward, tensor, planes), spec);
}

void FftPlan::inverse_chunk(const RunState& s, int64_t first, int64_t planes,
                            int worker) const {
  const FftGeometry& g = geometry_;
  const FftTensor tensor = g.output;
  const FftPlacement& pl = fft_placement(g, tensor);
  const PlaneShape shape = plane_shape(problem_, tensor);
  float* dst = s.tensor[static_cast<int>(tensor)] + first * shape.elems();
  if (pl.h.count == 0 || pl.w.count == 0) {  // no kept output meets this input (dx only)
    std::memset(dst, 0, static_cast<size_t>(planes * shape.elems()) * 4);
    return;
  }
  const int64_t ps = g.plane_stride, wf = g.w.size;
  float* spec = s.spectra[static_cast<int>(tensor)] + 2 * first * ps;
  float* stg = s.staging + worker * staging_stride_;
  execute_c2c(find(Kind::columns_inverse, tensor, planes), spec);
  execute_c2r(find(Kind::rows_inverse, tensor, planes), spec + 2 * pl.h.offset, stg);
  // Read the kept slots back, scaled by 1/(Hf Wf); dx rows and columns that no kept output
  // reaches are exact zeros.
  const int64_t rows = pl.h.count, cols = pl.w.count, off = pl.w.offset, step = pl.w.step;
  const float scale = g.scale;
  for (int64_t j = 0; j < planes; ++j) {
    for (int64_t r = 0; r < shape.rows; ++r) {
      float* d = dst + j * shape.elems() + r * shape.cols;
      if (r >= rows) {
        std::memset(d, 0, static_cast<size_t>(shape.cols) * 4);
        continue;
      }
      const float* row = stg + (j * rows + r) * wf + off;
      for (int64_t c = 0; c < cols; ++c) d[c] = scale * row[c * step];
      for (int64_t c = cols; c < shape.cols; ++c) d[c] = 0.0f;
    }
  }
}

void FftPlan::execute(const Tensors& t, const Workspace& workspace, Stream) {
  check_run_arguments("cpu.fft", problem_, pass_, t, workspace, workspace_bytes());
  check_fftw_alignment(workspace.data, where_);
  const FftGeometry& g = geometry_;
  auto* base = static_cast<char*>(workspace.data);
  RunState s;
  s.tensor[static_cast<int>(FftTensor::x)] = t.x;
  s.tensor[static_cast<int>(FftTensor::w)] = t.w;
  s.tensor[static_cast<int>(FftTensor::y)] = t.y;
  for (FftTensor k : {FftTensor::x, FftTensor::w, FftTensor::y}) {
    s.spectra[static_cast<int>(k)] = reinterpret_cast<float*>(base + fft_spectra(g, k).offset);
  }
  s.staging = reinterpret_cast<float*>(base + g.staging.offset);

  // Phase times for notes() (four steady-clock reads per run).
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  // Phase 1: spectra of both inputs, chunk by chunk.
  const int64_t ca = chunks(fft_planes(g, g.input_a), chunk_);
  const int64_t cb = chunks(fft_planes(g, g.input_b), chunk_);
  auto forward = [&](int64_t i, int worker) {
    const FftTensor tensor = i < ca ? g.input_a : g.input_b;
    const int64_t first = (i < ca ? i : i - ca) * chunk_;
    const int64_t planes = fft_planes(g, tensor) - first < chunk_ ? fft_planes(g, tensor) - first
                                                                  : chunk_;
    transform_chunk(s, tensor, first, planes, worker);
  };
  run_tasks(threads_, ca + cb, forward);
  const auto t1 = clock::now();

  // Phase 2: the per-bin products, by ranges of bins.
  BinGemmArgs args;
  args.a = s.spectra[static_cast<int>(g.gemm.a.tensor)];
  args.b = s.spectra[static_cast<int>(g.gemm.b.tensor)];
  args.out = s.spectra[static_cast<int>(g.gemm.out.tensor)];
  args.plane_stride = g.plane_stride;
  args.shape = g.gemm;
  const int64_t task_bins = 16 * bin_gemm_vector_bins(isa_);  // one kernel chunk per task
  auto products = [&](int64_t i, int) {
    const int64_t begin = i * task_bins;
    const int64_t end = begin + task_bins < g.plane_stride ? begin + task_bins : g.plane_stride;
    bin_gemm(isa_, args, begin, end);
  };
  run_tasks(threads_, chunks(g.plane_stride, task_bins), products);
  const auto t2 = clock::now();

  // Phase 3: the output, chunk by chunk.
  auto inverse = [&](int64_t i, int worker) {
    const int64_t first = i * chunk_;
    const int64_t total = fft_planes(g, g.output);
    inverse_chunk(s, first, total - first < chunk_ ? total - first : chunk_, worker);
  };
  run_tasks(threads_, chunks(fft_planes(g, g.output), chunk_), inverse);
  const auto t3 = clock::now();
  const auto ms = [](clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  last_ms_[0] = ms(t1 - t0);
  last_ms_[1] = ms(t2 - t1);
  last_ms_[2] = ms(t3 - t2);
}

void FftPlan::describe_plan() {
  const FftGeometry& g = geometry_;
  info_.kernel = std::string("fftw ") + planner_ + ", bin gemm " + to_string(isa_);
  info_.transform = "fft " + std::to_string(g.h.size) + "x" + std::to_string(g.w.size);
  info_.details = {{"needed", std::to_string(g.h.needed) + "x" + std::to_string(g.w.needed)},
                   {"bins", std::to_string(g.bins)},
                   {"chunk_planes", std::to_string(chunk_)},
                   {"threads", std::to_string(threads_)}};
  int buffered = 0;
  for (const Entry& e : plans_) buffered += e.plan.buffered() ? 1 : 0;
  // A buffered FFTW plan allocates inside execute: the row says so.
  if (buffered) info_.details.emplace_back("fftw_buffered_plans", std::to_string(buffered));
}

std::vector<std::pair<std::string, double>> FftPlan::last_run_phases() const {
  if (last_ms_[0] < 0) return {};
  return {{"inputs", last_ms_[0]}, {"products", last_ms_[1]}, {"output", last_ms_[2]}};
}

}  // namespace convlab::cpu_fft
