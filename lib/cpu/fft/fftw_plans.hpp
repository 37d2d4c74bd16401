#pragma once
// FFTW plans for cpu.fft: the row and column halves of a 2-D real transform, each a rank-1
// guru64 plan over a chunk of planes, so that rows holding only zeros are never transformed
// (a 9x9 filter in a 64x64 plane has 9 nonzero rows of 64; the row pass over 55 zero rows is
// skipped, and an inverse computes only the rows that are read back).
//
// Plans are made once in plan() and executed with the new-array interface on workspace
// buffers. FFTW requires those to have the alignment of the arrays the plan was made with;
// plans are made on 64-byte-aligned scratch at the same relative offsets the workspace
// uses (all multiples of 64 bytes), so run() only has to check the workspace base
// (check_fftw_alignment). FFTW's planner is not thread-safe: every plan creation and
// destruction holds one process-wide mutex.

#include <cstdint>
#include <string>
#include <vector>

typedef struct fftwf_plan_s* fftwf_plan;

namespace convlab::cpu_fft {

/// The planner rigours, as the knob cpu.fft.planner names them: estimate, measure, patient,
/// exhaustive. Only estimate is reproducible across processes: the others time candidate
/// codelets, and what wins may differ from one process to the next.
const std::vector<std::string>& planner_names();
/// The FFTW flags of a rigour, plus FFTW_NO_BUFFERING (no allocation inside execute).
/// Throws Error{invalid_argument} naming the knob for another name.
unsigned planner_flags(const std::string& planner);

/// An owned FFTW plan.
class FftwPlan {
 public:
  FftwPlan() = default;
  explicit FftwPlan(fftwf_plan plan, bool buffered = false) : plan_(plan), buffered_(buffered) {}
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;
  FftwPlan(FftwPlan&& other) noexcept : plan_(other.plan_), buffered_(other.buffered_) {
    other.plan_ = nullptr;
  }
  FftwPlan& operator=(FftwPlan&& other) noexcept;
  ~FftwPlan();
  fftwf_plan get() const { return plan_; }
  explicit operator bool() const { return plan_ != nullptr; }
  /// Whether FFTW could plan this only with its buffered solvers, which allocate inside
  /// execute (never seen with even row lengths; reported in the plan's notes).
  bool buffered() const { return buffered_; }

 private:
  fftwf_plan plan_ = nullptr;
  bool buffered_ = false;
};

/// The shape of one batched rank-1 transform: `planes` x `rows` transforms of length n.
/// Strides count elements of the arrays' own types (floats for real, complex for complex).
struct RowBatch {
  int64_t n = 1;  ///< transform length (Wf for a row pass)
  int64_t in_elem = 1, out_elem = 1;   ///< strides between elements of one transform
  int64_t planes = 1, rows = 1;
  int64_t in_plane = 0, in_row = 0;    ///< input strides between planes / rows
  int64_t out_plane = 0, out_row = 0;  ///< output strides between planes / rows
};

/// Real rows and their half spectra: real-to-complex (forward, `inverse` false) or
/// complex-to-real (inverse, unnormalised), planned on scratch of `real_len` floats and
/// `complex_len` complex elements; `complex_offset` (complex) is where the batch's spectra
/// start in theirs. `what` names the plan in errors; `planner` is planner_flags()'s value.
FftwPlan plan_rows_real(unsigned planner, const RowBatch& batch, bool inverse, int64_t real_len,
                        int64_t complex_len, int64_t complex_offset, const std::string& what);
/// In-place complex columns: `planes` planes (plane_stride apart) of `columns` columns
/// (column_stride apart), each a length-n transform of stride `elem`. sign -1 forward, +1
/// inverse.
FftwPlan plan_columns(unsigned planner, int64_t n, int64_t elem, int64_t columns, int64_t column_stride,
                      int64_t planes, int64_t plane_stride, int sign, const std::string& what);

void execute_r2c(const FftwPlan& plan, float* in, void* out);
void execute_c2r(const FftwPlan& plan, void* in, float* out);
void execute_c2c(const FftwPlan& plan, void* in_out);

/// Throws Error{invalid_argument} naming `who` (only then building a message) unless `data` has the alignment (modulo
/// FFTW's SIMD alignment) that the plans were made with: a 64-byte-aligned workspace.
void check_fftw_alignment(const void* data, const std::string& who);

}  // namespace convlab::cpu_fft
