#include "fftw_plans.hpp"

#include <fftw3.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/problem.hpp"

namespace convlab::cpu_fft {
namespace {

std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Planning scratch with the workspace's alignment (64 bytes), freed after planning. The
// scratch of one plan is checked against the host memory as a whole before any of it is
// allocated (check_scratch), since FFTW's planner touches every page of it.
void check_scratch(int64_t bytes) {
  check_host_memory(bytes, "cpu.fft: FFTW planning scratch");
}

struct Scratch {
  explicit Scratch(int64_t bytes) {
    const size_t rounded = static_cast<size_t>((bytes + 63) / 64 * 64);
    data = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!data) {
      throw Error(ErrorCode::out_of_memory,
                  "cpu.fft: planning scratch of " + std::to_string(bytes) + " bytes");
    }
    std::memset(data, 0, rounded == 0 ? 64 : rounded);
  }
  ~Scratch() { std::free(data); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data = nullptr;
};

// Plans with `flags`; where FFTW finds no unbuffered solver, once more without
// FFTW_NO_BUFFERING (a plan whose execute may allocate beats no plan).
template <typename MakePlan>
FftwPlan checked(unsigned flags, const std::string& what, MakePlan make) {
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (fftwf_plan plan = make(flags)) return FftwPlan(plan);
  if (fftwf_plan plan = make(flags & ~FFTW_NO_BUFFERING)) return FftwPlan(plan, true);
  throw Error(ErrorCode::backend, "cpu.fft: FFTW could not plan " + what +
                                      " (fftwf_plan_guru64_* returned NULL)");
}

fftwf_iodim64 dim(int64_t n, int64_t is, int64_t os) {
  fftwf_iodim64 d;
  d.n = n;
  d.is = is;
  d.os = os;
  return d;
}

}  // namespace

const std::vector<std::string>& planner_names() {
  static const std::vector<std::string> names = {"estimate", "measure", "patient", "exhaustive"};
  return names;
}

unsigned planner_flags(const std::string& planner) {
  unsigned rigour = 0;
  if (planner == "estimate") {
    rigour = FFTW_ESTIMATE;
  } else if (planner == "measure") {
    rigour = FFTW_MEASURE;
  } else if (planner == "patient") {
    rigour = FFTW_PATIENT;
  } else if (planner == "exhaustive") {
    rigour = FFTW_EXHAUSTIVE;
  } else {
    throw Error(ErrorCode::invalid_argument,
                "invalid value '" + planner.substr(0, 64) +
                    "' for knob cpu.fft.planner: expected estimate, measure, patient or exhaustive");
  }
  // FFTW_NO_BUFFERING (a documented-as-undocumented planner flag of fftw3.h) keeps the
  // planner off the buffered solvers, the only ones that fftwf_malloc a buffer inside every
  // execute: with it run() allocates nothing, so the workspace is the whole truth.
  return rigour | FFTW_NO_BUFFERING;
}

FftwPlan& FftwPlan::operator=(FftwPlan&& other) noexcept {
  if (this != &other) {
    FftwPlan gone(std::move(*this));
    plan_ = other.plan_;
    other.plan_ = nullptr;
  }
  return *this;
}

FftwPlan::~FftwPlan() {
  if (plan_) {
    std::lock_guard<std::mutex> lock(planner_mutex());
    fftwf_destroy_plan(plan_);
  }
}

namespace {

// One row batch's guru dimensions: the transform (length n) and its two loops (planes, rows).
struct RowDims {
  fftwf_iodim64 transform;
  fftwf_iodim64 loops[2];
};
RowDims row_dims(const RowBatch& b) {
  return {dim(b.n, b.in_elem, b.out_elem),
          {dim(b.planes, b.in_plane, b.out_plane), dim(b.rows, b.in_row, b.out_row)}};
}

// Plans a row batch on scratch buffers of the given sizes: make(dims, in, out, flags) calls
// the planner of the transform's kind.
template <class Make>
FftwPlan plan_rows(unsigned planner, const RowBatch& b, int64_t in_bytes, int64_t out_bytes,
                   const std::string& what, Make make) {
  check_scratch(checked_add(in_bytes, out_bytes, "scratch"));
  Scratch in(in_bytes), out(out_bytes);
  const RowDims r = row_dims(b);
  return checked(planner | FFTW_DESTROY_INPUT, what,
                 [&](unsigned f) { return make(r, in.data, out.data, f); });
}

}  // namespace

FftwPlan plan_rows_real(unsigned planner, const RowBatch& b, bool inverse, int64_t real_len,
                        int64_t complex_len, int64_t complex_offset, const std::string& what) {
  const int64_t real_bytes = checked_mul(real_len, 4, "scratch");
  const int64_t complex_bytes = checked_mul(complex_len, 8, "scratch");
  return plan_rows(
      planner, b, inverse ? complex_bytes : real_bytes, inverse ? real_bytes : complex_bytes, what,
      [&](const RowDims& r, void* in, void* out, unsigned f) {
        if (inverse) {
          return fftwf_plan_guru64_dft_c2r(1, &r.transform, 2, r.loops,
                                           static_cast<fftwf_complex*>(in) + complex_offset,
                                           static_cast<float*>(out), f);
        }
        return fftwf_plan_guru64_dft_r2c(1, &r.transform, 2, r.loops, static_cast<float*>(in),
                                         static_cast<fftwf_complex*>(out) + complex_offset, f);
      });
}

FftwPlan plan_columns(unsigned planner, int64_t n, int64_t elem, int64_t columns, int64_t column_stride,
                      int64_t planes, int64_t plane_stride, int sign, const std::string& what) {
  const unsigned flags = planner;
  check_scratch(checked_mul(checked_mul(planes, plane_stride, "scratch"), 8, "scratch"));
  Scratch data(planes * plane_stride * 8);
  const fftwf_iodim64 d = dim(n, elem, elem);
  const fftwf_iodim64 v[2] = {dim(planes, plane_stride, plane_stride),
                              dim(columns, column_stride, column_stride)};
  auto* z = static_cast<fftwf_complex*>(data.data);
  return checked(flags, what, [&](unsigned f) {
    return fftwf_plan_guru64_dft(1, &d, 2, v, z, z, sign, f);
  });
}

void execute_r2c(const FftwPlan& plan, float* in, void* out) {
  fftwf_execute_dft_r2c(plan.get(), in, static_cast<fftwf_complex*>(out));
}
void execute_c2r(const FftwPlan& plan, void* in, float* out) {
  fftwf_execute_dft_c2r(plan.get(), static_cast<fftwf_complex*>(in), out);
}
void execute_c2c(const FftwPlan& plan, void* in_out) {
  auto* z = static_cast<fftwf_complex*>(in_out);
  fftwf_execute_dft(plan.get(), z, z);
}

void check_fftw_alignment(const void* data, const std::string& who) {
  // Plans were made on 64-byte-aligned scratch, where fftwf_alignment_of is 0.
  if (fftwf_alignment_of(static_cast<float*>(const_cast<void*>(data))) != 0) {
    throw Error(ErrorCode::invalid_argument,
                who + ": workspace at " + std::to_string(reinterpret_cast<uintptr_t>(data)) +
                    " is not aligned as FFTW's SIMD plans need (use a 64-byte-aligned "
                    "workspace, as DeviceContext::allocate gives)");
  }
}

}  // namespace convlab::cpu_fft
