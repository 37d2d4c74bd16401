#include "tiled_plan.hpp"

#include <cstring>

#include "convlab/error.hpp"
#include "cpu/fft/fftw_plans.hpp"
#include "cpu/fft/worker_pool.hpp"
#include "strategy/tiled_fft_host.hpp"
#include "strategy/tiled_fft_passes.hpp"

namespace convlab::cpu_fft_tiled {
namespace {

// Planes copied per task: small tiles make a plane a few hundred floats, too little to hand
// out one at a time.
constexpr int64_t kPlanesPerTask = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// body(plane) for every plane in [0, planes) on `threads` workers, kPlanesPerTask a task.
template <typename Body>
void for_each_plane(int threads, int64_t planes, const Body& body) {
  auto task = [&](int64_t i, int) {
    const int64_t end = (i + 1) * kPlanesPerTask < planes ? (i + 1) * kPlanesPerTask : planes;
    for (int64_t plane = i * kPlanesPerTask; plane < end; ++plane) body(plane);
  };
  cpu_fft::run_tasks(threads, ceil_div(planes, kPlanesPerTask), task);
}

// body(pair, offset of its dy/y plane, offset of its tile) for every (pair, output channel)
// of the batch, the tiles packed in that order.
template <typename Body>
void for_each_output_tile(int threads, const TiledFftGeometry& g, const ConvProblem& p,
                          TiledBatch b, const Body& body) {
  const int64_t plane_elems = p.out_h() * p.out_w(), tile_elems = g.h.tile * g.w.tile;
  for_each_plane(threads, b.count * p.k, [&](int64_t plane) {
    const TiledFftPair pair = tiled_fft_pair(g, b.first + plane / p.k);
    body(pair, (pair.image * p.k + plane % p.k) * plane_elems, plane * tile_elems);
  });
}

}  // namespace

TiledFftGeometry cpu_tiled_geometry(const ConvProblem& problem, Pass pass,
                                    const TiledFftOptions& options, int threads) {
  TiledFftGeometry g = tiled_fft_geometry(problem, pass, options);
  const ConvProblem sub = tiled_fft_subproblem(problem, g, g.batch);
  tiled_fft_set_fft_bytes(g, cpu_fft::cpu_fft_geometry(sub, pass, threads).total_bytes);
  return g;
}

ErrorBound tiled_error_bound(const TiledFftGeometry& g) {
  return tiled_fft_error_bound(g, 4.0);  // cpu.fft's factor (cpu_fft.cpp), per pair
}

TiledPlan::TiledPlan(const ConvProblem& problem, Pass pass, const TiledFftOptions& options,
                     int threads, CpuIsa isa, const std::string& planner)
    : problem_(problem),
      pass_(pass),
      threads_(threads),
      geometry_(cpu_tiled_geometry(problem, pass, options, threads)),
      where_(std::string("cpu.fft_tiled ") + to_string(pass) + " " + problem.descriptor()) {
  const TiledFftGeometry& g = geometry_;
  full_ = std::make_unique<cpu_fft::FftPlan>(tiled_fft_subproblem(problem, g, g.batch), pass,
                                             threads, isa, planner);
  if (g.last_batch != g.batch) {
    last_ = std::make_unique<cpu_fft::FftPlan>(tiled_fft_subproblem(problem, g, g.last_batch), pass,
                                               threads, isa, planner);
  }
  if (static_cast<int64_t>(full_->workspace_bytes()) != g.fft.bytes) {
    throw Error(ErrorCode::backend, where_ + ": internal error, the sub-problem's FFT plan needs " +
                                        std::to_string(full_->workspace_bytes()) +
                                        " bytes, the geometry placed " +
                                        std::to_string(g.fft.bytes));
  }
  describe_plan();
}

void TiledPlan::gather_patches(TiledBatch b, const float* x, float* patches) const {
  const TiledFftGeometry& g = geometry_;
  const ConvProblem& p = problem_;
  const int64_t ph = g.h.patch, pw = g.w.patch, planes = b.count * p.c;
  for_each_plane(threads_, planes, [&](int64_t plane) {
    const TiledFftPair pair = tiled_fft_pair(g, b.first + plane / p.c);
    const float* src = x + (pair.image * p.c + plane % p.c) * p.h * p.w;
    float* dst = patches + plane * ph * pw;
    for (int64_t j = 0; j < ph; ++j) {
      const int64_t ih = tiled_fft_input_index(g.h, pair.th, j);
      float* row = dst + j * pw;
      for (int64_t k = 0; k < pw; ++k) {
        const int64_t iw = ih < 0 ? -1 : tiled_fft_input_index(g.w, pair.tw, k);
        row[k] = iw < 0 ? 0.0f : src[ih * p.w + iw];
      }
    }
  });
}

void TiledPlan::gather_tiles(TiledBatch b, const float* dy, float* tiles) const {
  const TiledFftGeometry& g = geometry_;
  const int64_t th = g.h.tile, tw = g.w.tile, ow = problem_.out_w();
  for_each_output_tile(threads_, g, problem_, b, [&](TiledFftPair pair, int64_t at, int64_t tile) {
    const float* src = dy + at;
    float* dst = tiles + tile;
    for (int64_t j = 0; j < th; ++j) {
      const int64_t o = tiled_fft_output_index(g.h, pair.th, j);
      for (int64_t k = 0; k < tw; ++k) {
        const int64_t q = o < 0 ? -1 : tiled_fft_output_index(g.w, pair.tw, k);
        dst[j * tw + k] = q < 0 ? 0.0f : src[o * ow + q];
      }
    }
  });
}

void TiledPlan::scatter_tiles(TiledBatch b, const float* tiles, float* y) const {
  const TiledFftGeometry& g = geometry_;
  const int64_t th = g.h.tile, tw = g.w.tile, ow = problem_.out_w();
  for_each_output_tile(threads_, g, problem_, b, [&](TiledFftPair pair, int64_t at, int64_t tile) {
    float* dst = y + at;
    const float* src = tiles + tile;
    for (int64_t j = 0; j < th; ++j) {
      const int64_t o = tiled_fft_output_index(g.h, pair.th, j);
      if (o < 0) break;
      for (int64_t k = 0; k < tw; ++k) {
        const int64_t q = tiled_fft_output_index(g.w, pair.tw, k);
        if (q < 0) break;
        dst[o * ow + q] = src[j * tw + k];
      }
    }
  });
}

// Overlap-add: the patches of one image overlap, so a task owns one (image, channel) plane of
// dx and adds the batch's patches of that image in pair order (deterministic, race-free).
void TiledPlan::add_patches(TiledBatch b, const float* patches, float* dx) const {
  const TiledFftGeometry& g = geometry_;
  const ConvProblem& p = problem_;
  const int64_t ph = g.h.patch, pw = g.w.patch;
  const int64_t first_image = b.first / g.tiles;
  const int64_t images = (b.first + b.count - 1) / g.tiles - first_image + 1;
  auto task = [&](int64_t i, int) {
    const int64_t image = first_image + i / p.c, c = i % p.c;
    float* dst = dx + (image * p.c + c) * p.h * p.w;
    const int64_t q0 = image * g.tiles > b.first ? image * g.tiles : b.first;
    const int64_t q1 =
        (image + 1) * g.tiles < b.first + b.count ? (image + 1) * g.tiles : b.first + b.count;
    for (int64_t q = q0; q < q1; ++q) {
      const TiledFftPair pair = tiled_fft_pair(g, q);
      const float* src = patches + ((q - b.first) * p.c + c) * ph * pw;
      for (int64_t j = 0; j < ph; ++j) {
        const int64_t ih = tiled_fft_input_index(g.h, pair.th, j);
        if (ih < 0) continue;
        for (int64_t k = 0; k < pw; ++k) {
          const int64_t iw = tiled_fft_input_index(g.w, pair.tw, k);
          if (iw >= 0) dst[ih * p.w + iw] += src[j * pw + k];
        }
      }
    }
  };
  cpu_fft::run_tasks(threads_, images * p.c, task);
}

// The steps of strategy/tiled_fft_passes.hpp on the CPU's worker pool.
struct TiledPlan::Ops {
  const TiledPlan& plan;
  char* base;
  Stream stream;
  float* patches() const { return reinterpret_cast<float*>(base + plan.geometry_.patches.offset); }
  float* tiles() const {
    return reinterpret_cast<float*>(base + plan.geometry_.tiles_buffer.offset);
  }
  float* partial() const { return reinterpret_cast<float*>(base + plan.geometry_.partial.offset); }
  void gather_patches(TiledBatch b, const float* x) { plan.gather_patches(b, x, patches()); }
  void gather_tiles(TiledBatch b, const float* dy) { plan.gather_tiles(b, dy, tiles()); }
  void scatter_tiles(TiledBatch b, float* y) { plan.scatter_tiles(b, tiles(), y); }
  void add_patches(TiledBatch b, float* dx) { plan.add_patches(b, patches(), dx); }
  void zero(float* dx) {
    const ConvProblem& p = plan.problem_;
    const int64_t planes = p.n * p.c, plane = p.h * p.w;
    auto task = [&](int64_t i, int) {
      const int64_t end = (i + 1) * kPlanesPerTask < planes ? (i + 1) * kPlanesPerTask : planes;
      std::memset(dx + i * kPlanesPerTask * plane, 0,
                  static_cast<std::size_t>((end - i * kPlanesPerTask) * plane) * sizeof(float));
    };
    cpu_fft::run_tasks(plan.threads_, ceil_div(planes, kPlanesPerTask), task);
  }
  void run_fft(TiledBatch b, float* w) {
    Tensors sub;
    sub.x = patches();
    sub.y = tiles();
    sub.w = w;
    const TiledFftGeometry& g = plan.geometry_;
    cpu_fft::FftPlan& fft = b.count == g.batch ? *plan.full_ : *plan.last_;
    fft.run(sub, Workspace{base + g.fft.offset, static_cast<std::size_t>(g.fft.bytes)}, stream);
  }
  void accumulate(float* dw) {
    const ConvProblem& p = plan.problem_;
    const int64_t n = p.k * p.c_per_group() * p.r * p.s, chunk = 4096;
    const float* src = partial();
    auto task = [&](int64_t j, int) {
      const int64_t end = (j + 1) * chunk < n ? (j + 1) * chunk : n;
      for (int64_t e = j * chunk; e < end; ++e) dw[e] += src[e];
    };
    cpu_fft::run_tasks(plan.threads_, ceil_div(n, chunk), task);
  }
};

void TiledPlan::execute(const Tensors& t, const Workspace& workspace, Stream stream) {
  check_run_arguments("cpu.fft_tiled", problem_, pass_, t, workspace, workspace_bytes());
  cpu_fft::check_fftw_alignment(workspace.data, where_);
  Ops ops{*this, static_cast<char*>(workspace.data), stream};
  run_tiled_fft_pass(geometry_, pass_, t, ops);
}

void TiledPlan::describe_plan() {
  const TiledFftGeometry& g = geometry_;
  const PlanInfo& sub = full_->info();
  describe_tiled_fft_plan(g, sub, workspace_bytes(), info_);
  info_.details.emplace_back("threads", std::to_string(threads_));
  for (const auto& d : sub.details) {
    if (d.first == "fftw_buffered_plans") info_.details.push_back(d);
  }
}

}  // namespace convlab::cpu_fft_tiled
