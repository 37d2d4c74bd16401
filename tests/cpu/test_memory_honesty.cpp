// Memory honesty of every CPU algorithm in the registry (reference, cpu.im2col, cpu.fft,
// cpu.onednn and whatever lands later): on a few problems and every pass,
//   1. run() takes (almost) nothing from the heap: every allocation made while run() is
//      under way, on any thread, is counted by replacing the malloc family of this binary,
//      and the count and the peak growth of the heap must stay within the algorithm's
//      documented allowance (docs/memory-honesty.md);
//      anonymous mmap calls made directly (as OpenBLAS does for its buffers) are counted too;
//   2. run() writes nothing outside its tensors' outputs and [0, workspace_bytes()) of its
//      workspace: 4 KiB guards before and after every buffer keep a pattern that must survive,
//      and the inputs must come back bit for bit;
//   3. the result is right (a plan that does nothing would pass 1 and 2), also on a second
//      run over a workspace re-poisoned with another pattern, so stale scratch is caught;
//   4. how much of the declared workspace run() actually wrote is printed, so an over-declared
//      workspace shows (a plan that declares workspace must write some of it).
// The first run of every plan is measured as well as the second, so a plan that allocates
// lazily on first use cannot hide; one-time process-wide set-up (thread pools, JIT kernels)
// is done by a warm-up pass with throw-away plans before anything is measured.
//
// This is its own test binary because the malloc replacement applies to the whole process.
// Under AddressSanitizer or ThreadSanitizer, whose runtimes own malloc, it is compiled out and
// the tests skip.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CONVLAB_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CONVLAB_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef CONVLAB_COUNT_ALLOCATIONS
#define CONVLAB_COUNT_ALLOCATIONS 1
#endif

namespace {

// Constant-initialized, so they are valid for the allocations made before main().
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0}, g_bytes{0}, g_maps{0}, g_map_bytes{0};
// Bytes the heap holds now (malloc_usable_size of every live chunk, tracked always) and the
// most it held above the level at which counting started.
std::atomic<int64_t> g_live{0}, g_start{0}, g_peak{0};

inline void note_allocation(std::size_t requested, std::size_t usable) {
  const int64_t live =
      g_live.fetch_add(static_cast<int64_t>(usable)) + static_cast<int64_t>(usable);
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(static_cast<int64_t>(requested), std::memory_order_relaxed);
    const int64_t above = live - g_start.load(std::memory_order_relaxed);
    int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (above > peak && !g_peak.compare_exchange_weak(peak, above)) {
    }
  }
}
inline void note_release(std::size_t usable) { g_live.fetch_sub(static_cast<int64_t>(usable)); }

}  // namespace

#if CONVLAB_COUNT_ALLOCATIONS
// glibc documents replacing malloc (manual, "Replacing malloc"): a program that defines
// malloc, free, calloc and realloc, and the aligned variants, is used by every library of the
// process, libstdc++'s operator new included. These forward to glibc's own allocator under its
// exported __libc_* names (no dlsym, so no allocation inside the allocator), so
// malloc_usable_size and everything else keep working on the chunks.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

std::size_t malloc_usable_size(void*) noexcept;

void* counted(void* pointer, std::size_t requested) {
  if (pointer) note_allocation(requested, malloc_usable_size(pointer));
  return pointer;
}

void* malloc(std::size_t bytes) noexcept { return counted(__libc_malloc(bytes), bytes); }
void free(void* pointer) noexcept {
  if (pointer) note_release(malloc_usable_size(pointer));
  __libc_free(pointer);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  return counted(__libc_calloc(count, size), count * size);
}
void* realloc(void* pointer, std::size_t bytes) noexcept {
  const std::size_t old = pointer ? malloc_usable_size(pointer) : 0;
  void* moved = __libc_realloc(pointer, bytes);
  if (moved || bytes == 0) note_release(old);  // on failure the old block stays
  return counted(moved, bytes);
}
void* memalign(std::size_t alignment, std::size_t bytes) noexcept {
  return counted(__libc_memalign(alignment, bytes), bytes);
}
void* aligned_alloc(std::size_t alignment, std::size_t bytes) noexcept {
  return counted(__libc_memalign(alignment, bytes), bytes);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t bytes) noexcept {
  if (alignment == 0 || alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) {
    return EINVAL;
  }
  void* p = counted(__libc_memalign(alignment, bytes), bytes);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void* valloc(std::size_t bytes) noexcept { return counted(__libc_memalign(4096, bytes), bytes); }
void* pvalloc(std::size_t bytes) noexcept {
  return counted(__libc_memalign(4096, (bytes + 4095) / 4096 * 4096), bytes);
}
// Direct anonymous mappings (glibc's own large-chunk mmap is internal and not seen here; those
// allocations were counted by malloc above). syscall() returns -1 with errno set on failure,
// which is MAP_FAILED.
void* mmap(void* address, std::size_t length, int protection, int flags, int fd,
           off_t offset) noexcept {
  if ((flags & MAP_ANONYMOUS) && g_counting.load(std::memory_order_relaxed)) {
    g_maps.fetch_add(1, std::memory_order_relaxed);
    g_map_bytes.fetch_add(static_cast<int64_t>(length), std::memory_order_relaxed);
  }
  return reinterpret_cast<void*>(syscall(SYS_mmap, address, length, protection, flags, fd, offset));
}
void* mmap64(void* address, std::size_t length, int protection, int flags, int fd,
             off_t offset) noexcept {
  return mmap(address, length, protection, flags, fd, offset);
}
}  // extern "C"
#endif

namespace convlab {
namespace {

struct Usage {
  int64_t allocations = 0;          ///< calls of the malloc family
  int64_t bytes = 0;                ///< bytes they asked for, in all
  int64_t peak = 0;                 ///< the most the heap held above its level at the start
  int64_t maps = 0, map_bytes = 0;  ///< direct anonymous mmaps
};

void start_counting() {
  g_allocations = 0, g_bytes = 0, g_maps = 0, g_map_bytes = 0, g_peak = 0;
  g_start = g_live.load();
  g_counting = true;
}
Usage stop_counting() {
  g_counting = false;
  return {g_allocations.load(), g_bytes.load(), g_peak.load(), g_maps.load(), g_map_bytes.load()};
}

// What run() may take from the heap, per run, measured and explained in
// docs/memory-honesty.md. The bound that matters is the peak: the most the heap holds above
// its level when run() started (memory a caller did not budget for). Anything not listed
// here must allocate nothing, as the interface says. The peak allowances are far below the
// workspaces the problems below need (the one exception, oneDNN's gemm kernel on the small
// grouped problem, is named in the doc), so a plan that took its scratch from the heap fails.
struct Allowance {
  int64_t allocations = 0;  ///< -1: not bounded (see why), the peak still is
  int64_t peak = 0;
  int64_t maps = 0;  ///< direct anonymous mmaps
  std::string why;
};
// Keyed by the library doing the work, as the algorithm and its plan describe it (backend,
// the plan's kernel and its gemm knob), never by an algorithm's name.
bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}
Allowance allowance(const Algorithm& algorithm, const Plan& plan) {
  const std::string& backend = algorithm.info().backend;
  const PlanInfo& chosen = plan.info();
  // Every oneDNN convolution algorithm (cpu.onednn, .direct, .winograd), by its backend.
  if (starts_with(backend, "onednn")) {
    // oneDNN 2.6 allocates small objects in every run: each dnnl::memory that run() wraps
    // around a user or workspace pointer (3 allocations, 816 bytes), and each primitive
    // execution (5 inside the library for exec_args_t / exec_ctx_t, 4 for the C++ API's
    // argument map). A forward with three reorders makes about 57; all are freed by the end.
    Allowance a{96, 16 << 10, 0, "oneDNN's memory objects and execution contexts"};
    // Its gemm-based convolution (impl x64:gemm:jit, for what its direct kernels do not
    // cover, e.g. groups of few channels) calls oneDNN's own sgemm, which mallocs and frees
    // its packing buffers around every call instead of using the scratchpad: measured about
    // 76 KiB per thread at any problem size, one malloc/free pair per sgemm call (so the
    // count grows with images x groups and is not bounded here).
    if (chosen.kernel.find("gemm") != std::string::npos) {
      a.allocations = -1;
      a.peak += int64_t{num_threads()} * (96 << 10);
      a.why += ", and oneDNN's sgemm packing buffers";
    }
    return a;
  }
  if (backend == "fftw") {
    // FFTW 3.3.10's buffered r2c/c2r solvers, when the planner picks them, fftwf_malloc a
    // buffer of about one transform's half spectrum per execute and thread and free it
    // before returning: measured 5776 bytes per thread for a 36x36 transform (684 bins).
    // 64 KiB per thread covers transforms up to about 90x90; the problems here stay <= 36x36.
    return {-1, int64_t{num_threads()} * (64 << 10), 0,
            "FFTW's buffered solvers' per-execute buffers"};
  }
  if (chosen.knobs.count("gemm")) {
    // By the GEMM library the plan's gemm knob chose (onednn, openblas or eigen).
    const std::string& gemm = chosen.knobs.at("gemm");
    if (gemm == "onednn") {
      // dnnl_sgemm mallocs its packing buffer around every call: 0.67-1.1 MB of heap growth
      // in one run of these problems at 2 threads, depending on how the threads' calls
      // overlap (it grows with the GEMM's shape: 13 MB at n = 8192, k >= 1152, measured on
      // dnnl_sgemm alone), which is why it is not the default.
      return {-1, int64_t{num_threads()} * (1 << 20), 0, "oneDNN's sgemm packing buffers"};
    }
    if (gemm == "openblas") {
      // OpenBLAS 0.3.21: its small-matrix kernels (sgemm_small_kernel_*) malloc and free a few
      // hundred bytes per call (288 measured); a thread that calls a GEMM while no OpenBLAS
      // buffer is free maps one (128 MiB of address space, kept for the process), at most
      // once per thread: seen now and then on a first or second run despite the warm-up.
      Allowance a{-1, int64_t{num_threads()} * (4 << 10), num_threads() + 1,
                  "OpenBLAS's small-kernel packing and per-thread buffers"};
      // A plan that records a column tile can run GEMMs small enough for those kernels, which
      // then copy the tile's column block around every call: measured a heap peak of 2 x the
      // block plus 16 bytes (cpu.im2col fwd, L = 648, tile 7: 36304; bwd passes: none).
      if (!chosen.tile.empty()) {
        for (const auto& [part, bytes] : chosen.workspace_split) {
          if (part == "columns") a.peak += 2 * static_cast<int64_t>(bytes);
        }
        a.why += ", and their copies of a tiled column block (2 x the buffer)";
      }
      return a;
    }
  }
  return {0, 0, 0, "run() allocates nothing"};
}

constexpr std::size_t kGuard = 4096;
constexpr unsigned char kGuardByte = 0xA5;

// A buffer of `bytes` with a guard right before and right after it, 64-byte aligned.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t bytes)
      : bytes_(bytes),
        storage_(static_cast<unsigned char*>(
            std::aligned_alloc(64, (2 * kGuard + bytes + 63) / 64 * 64))) {
    std::memset(storage_, kGuardByte, kGuard);
    std::memset(storage_ + kGuard + bytes_, kGuardByte, kGuard);
  }
  ~GuardedBuffer() { std::free(storage_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  unsigned char* data() const { return storage_ + kGuard; }
  float* floats() const { return reinterpret_cast<float*>(data()); }
  std::size_t bytes() const { return bytes_; }
  // "" when both guards kept their pattern, else where the first damage is.
  std::string damage() const {
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (storage_[i] != kGuardByte) {
        return "written " + std::to_string(kGuard - i) + " bytes before the buffer";
      }
      if (storage_[kGuard + bytes_ + i] != kGuardByte) {
        return "written at byte " + std::to_string(bytes_ + i) + " of a " + std::to_string(bytes_) +
               "-byte buffer";
      }
    }
    return {};
  }

 private:
  std::size_t bytes_;
  unsigned char* storage_;
};

void upload(GuardedBuffer& buffer, const std::vector<float>& host) {
  std::memcpy(buffer.data(), host.data(), host.size() * sizeof(float));
}
bool same(const GuardedBuffer& buffer, const std::vector<float>& host) {
  return std::memcmp(buffer.data(), host.data(), host.size() * sizeof(float)) == 0;
}

// Small enough for the reference, large enough that any buffer sized by the problem exceeds
// every byte allowance; they cover the im2col shortcut and its absence, large kernels (FFT),
// stride, dilation, groups, and oneDNN's Winograd path (mb16, 3x3, 64 channels).
const char* const kProblems[] = {
    "mb2ic16ih24oc16kh3ph1",        "mb2ic16ih16oc32kh1",    "mb2ic8ih32oc8kh9ph4",
    "g2mb2ic8ih21oc12kh3sh2dh1ph2", "mb16ic64ih8oc64kh3ph1",
};

std::vector<const Algorithm*> cpu_algorithms() {
  std::vector<const Algorithm*> cpu;
  for (const Algorithm* a : registry().all()) {
    if (a->device() == Device::cpu && a->available()) cpu.push_back(a);
  }
  return cpu;
}

// One plan, two measured runs; failures name the algorithm, pass and problem.
void check_plan(const Algorithm& algorithm, const ConvProblem& problem, Pass pass, uint64_t seed,
                const KnobValues& knobs = {}) {
  std::string where = algorithm.name() + " " + to_string(pass) + " " + problem.descriptor();
  for (const auto& [knob, value] : knobs) where += " " + knob + "=" + value;
  SCOPED_TRACE(where);
  auto plan = algorithm.plan(problem, pass, knobs);
  const std::size_t declared = plan->workspace_bytes();
  const HostTensors host = make_inputs(problem, pass, seed);
  GuardedBuffer x(host.x.size() * 4), w(host.w.size() * 4), y(host.y.size() * 4);
  GuardedBuffer workspace(declared);
  upload(x, host.x);
  upload(w, host.w);
  upload(y, host.y);
  const Tensors tensors{x.floats(), w.floats(), y.floats()};
  const Allowance allowed = allowance(algorithm, *plan);

  const unsigned char poison[2] = {0xFF, 0x5A};  // NaN bytes, then a huge finite float
  std::vector<bool> touched(declared, false);
  for (int round = 0; round < 2; ++round) {
    std::memset(workspace.data(), poison[round], declared);
    std::vector<float> output = host.output(pass);  // NaN: unwritten elements fail
    GuardedBuffer& out = pass == Pass::forward ? y : pass == Pass::backward_data ? x : w;
    upload(out, output);
    start_counting();
    plan->run(tensors, {workspace.data(), declared});
    const Usage used = stop_counting();
    const std::string run = round == 0 ? "first run" : "second run";
    if (allowed.allocations >= 0) {
      EXPECT_LE(used.allocations, allowed.allocations)
          << run << ": " << used.allocations << " heap allocations (" << used.bytes
          << " bytes) during run(); allowance: " << allowed.why;
    }
    EXPECT_LE(used.peak, allowed.peak) << run << ": the heap grew by up to " << used.peak
                                       << " bytes during run(); allowance: " << allowed.why;
    EXPECT_LE(used.maps, allowed.maps)
        << run << ": " << used.maps << " anonymous mmaps (" << used.map_bytes
        << " bytes) during run(); allowance: " << allowed.why;
    std::cout << "  " << where << " " << run << ": " << used.allocations << " allocations of "
              << used.bytes << " bytes, peak " << used.peak << ", " << used.maps << " mmaps of "
              << used.map_bytes << " bytes\n";

    for (const GuardedBuffer* b : {&x, &w, &y, &workspace}) {
      const char* name = b == &x ? "x" : b == &w ? "w" : b == &y ? "y" : "workspace";
      EXPECT_EQ(b->damage(), "") << run << ": " << name;
    }
    // The inputs of the pass, bit for bit.
    EXPECT_TRUE(pass == Pass::backward_data || same(x, host.x)) << run << ": input x changed";
    EXPECT_TRUE(pass == Pass::backward_filter || same(w, host.w)) << run << ": input w changed";
    EXPECT_TRUE(pass == Pass::forward || same(y, host.y)) << run << ": input dy changed";

    std::memcpy(output.data(), out.data(), output.size() * sizeof(float));
    const AccuracyReport report =
        compare_with_reference(problem, pass, host, output, plan->error_bound());
    EXPECT_TRUE(report.within_bound) << run << ": " << report.detail;
    for (std::size_t i = 0; i < declared; ++i) {
      if (workspace.data()[i] != poison[round]) touched[i] = true;
    }
  }
  std::size_t written = 0, highest = 0;
  for (std::size_t i = 0; i < declared; ++i) {
    if (touched[i]) ++written, highest = i + 1;
  }
  std::cout << "  " << where << ": workspace " << declared << " bytes declared, " << written
            << " written, highest written byte " << highest << "\n";
  EXPECT_TRUE(declared == 0 || written > 0) << "declares a workspace it never writes";
}

class MemoryHonesty : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CONVLAB_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting is off under a sanitizer";
    set_num_threads(2);
    // Process-wide one-time set-up (the OpenMP team, FFTW and BLAS thread pools and buffers,
    // oneDNN's lazily generated sgemm kernels) happens here, unmeasured: every algorithm runs
    // every case once with a plan that is then thrown away. The measured plans are new, so a
    // plan that allocated on its own first run would still be caught.
    static const bool warmed = [] {
      for (const Algorithm* a : cpu_algorithms()) {
        for (const char* descriptor : kProblems) {
          const ConvProblem p = parse_descriptor(descriptor).problem;
          for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
            if (!a->supports(p, pass)) continue;
            auto plan = a->plan(p, pass);
            HostTensors t = make_inputs(p, pass, 1);
            GuardedBuffer ws(plan->workspace_bytes());
            plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), ws.bytes()});
          }
        }
      }
      return true;
    }();
    (void)warmed;
  }
};

TEST_F(MemoryHonesty, TheAllocatorIsCounted) {
  // The counter itself must see allocations, or every check above is vacuous.
  start_counting();
  std::vector<int>* v = new std::vector<int>(1000);
  void* m = std::malloc(100);
  const Usage used = stop_counting();
  std::free(m);
  delete v;
  EXPECT_GE(used.allocations, 3);
  EXPECT_GE(used.bytes, 4000 + 100);
}

TEST_F(MemoryHonesty, EveryCpuAlgorithmEveryPass) {
  const auto algorithms = cpu_algorithms();
  ASSERT_FALSE(algorithms.empty());
  uint64_t seed = 11;
  for (const Algorithm* a : algorithms) {
    std::cout << a->name() << ":\n";
    for (const char* descriptor : kProblems) {
      const ConvProblem problem = parse_descriptor(descriptor).problem;
      for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
        const Support s = a->supports(problem, pass);
        if (!s) {
          std::cout << "  " << descriptor << " " << to_string(pass) << ": unsupported: " << s.reason
                    << "\n";
          EXPECT_FALSE(s.reason.empty());
          continue;
        }
        check_plan(*a, problem, pass, seed++);
      }
    }
  }
}

// The CPU algorithms with a knob of this name and type, with that knob.
std::vector<std::pair<const Algorithm*, const KnobSpec*>> cpu_knobs_named(const std::string& name,
                                                                          KnobType type) {
  std::vector<std::pair<const Algorithm*, const KnobSpec*>> found;
  for (const Algorithm* a : cpu_algorithms()) {
    for (const KnobSpec& knob : a->info().knobs) {
      if (knob.name == name && knob.type == type) found.emplace_back(a, &knob);
    }
  }
  return found;
}

// check_plan with `knobs` for every problem and pass `algorithm` supports; how many.
int check_every_problem(const Algorithm& algorithm, const KnobValues& knobs, uint64_t& seed) {
  int checked = 0;
  for (const char* descriptor : kProblems) {
    const ConvProblem problem = parse_descriptor(descriptor).problem;
    for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
      if (!algorithm.supports(problem, pass)) continue;
      check_plan(algorithm, problem, pass, seed++, knobs);
      ++checked;
    }
  }
  return checked;
}

// The GEMM library is a knob of the algorithms that call one; each library the build offers
// is held to its own allowance (Eigen's packing buffers, for one, must come from the
// workspace). Found by the knob schema, not by the algorithm's name.
TEST_F(MemoryHonesty, EveryGemmLibraryOfAnAlgorithmWithAGemmKnob) {
  uint64_t seed = 101;
  int checked = 0;
  for (const auto& [a, knob] : cpu_knobs_named("gemm", KnobType::choice)) {
    for (const std::string& library : knob->choices) {
      std::cout << a->name() << " gemm=" << library << ":\n";
      // The library's one-time set-up (oneDNN generates its sgemm kernels on first use),
      // unmeasured, as SetUp does for the defaults.
      for (const char* descriptor : kProblems) {
        const ConvProblem p = parse_descriptor(descriptor).problem;
        if (!a->supports(p, Pass::forward)) continue;
        auto plan = a->plan(p, Pass::forward, {{"gemm", library}});
        HostTensors t = make_inputs(p, Pass::forward, 1);
        GuardedBuffer ws(plan->workspace_bytes());
        plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), ws.bytes()});
      }
      checked += check_every_problem(*a, {{"gemm", library}}, seed);
    }
  }
  std::cout << checked << " plans checked\n";
}

// A column tile shrinks the workspace an algorithm declares; the tiled plans are held to the
// same allowances (7 pixels divides none of the problems' outputs). Found by the knob schema.
TEST_F(MemoryHonesty, TiledPlansOfAnAlgorithmWithATileKnob) {
  uint64_t seed = 201;
  int checked = 0;
  for (const auto& [a, knob] : cpu_knobs_named("tile", KnobType::integer)) {
    std::cout << a->name() << " tile=7:\n";
    checked += check_every_problem(*a, {{"tile", "7"}}, seed);
  }
  std::cout << checked << " plans checked\n";
  EXPECT_GT(checked, 0) << "no CPU algorithm has a tile knob";
}

}  // namespace
}  // namespace convlab
