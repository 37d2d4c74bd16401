// cpu.onednn: the oneDNN (2.6, v2 C++ API) convolution primitive behind convlab's interface.
//
// What is computed. The same three passes as every convlab strategy, on NCHW activations
// and KCRS filters (cross-correlation, groups g, stride, padding, dilation):
//   forward:          y[n,k,p,q]  = sum_{c in group(k), r, s} x[n,c,p*sh-ph+r*dh, q*sw-pw+s*dw]
//                                                               * w[k,c',r,s]
//   backward-data:    dx[n,c,i,j] = sum_{k in group(c), r, s : i = p*sh-ph+r*dh, ...}
//                                     dy[n,k,p,q] * w[k,c',r,s]
//   backward-weights: dw[k,c',r,s] = sum_{n,p,q} dy[n,k,p,q] * x[n,c,p*sh-ph+r*dh, q*sw-pw+s*dw]
// oneDNN states the same problem with its own conventions, mapped here once:
//   - dilation: oneDNN counts inserted zeros, so dilates = convlab dilation - 1 (dense = 0);
//   - padding: padding_l = (ph, pw), padding_r = the end paddings (equal to padding_l unless
//     a descriptor's oh/ow made them differ). oneDNN requires
//     (h - ((r-1)(dh_dnnl+1)+1) + pl + pr) / sh + 1 = oh, with C++ floor division of a
//     non-negative numerator; that is convlab's out_h, so the descriptor is consistent for
//     every valid ConvProblem;
//   - filters: KCRS is oihw for g = 1; with g > 1 it is [g][K/g][C/g][R][S], goihw, the same
//     bytes viewed with a leading group dimension;
//   - prop_kind::forward_training for the forward pass (what a training sweep compares; for
//     a convolution without bias or post-ops the arithmetic is that of forward_inference,
//     but oneDNN's "auto" heuristics may choose differently between the two) and as the hint
//     of both backward passes.
//
// Layouts. Every tensor is declared format_tag::any, so oneDNN picks the layout its fastest
// implementation wants (on AVX-512: nChw16c activations, OIhw16i16o-like filters). The user
// tensors stay NCHW/KCRS, so run() reorders:
//   inputs  user -> internal   before the convolution,
//   output  internal -> user   after it,
// each only when oneDNN's layout differs from the user's. These reorders are part of the
// time of run(), as a user holding NCHW tensors would pay them; the primitive-only time is
// measured too (see notes()).
//
// Workspace. Laid out once in the constructor, every piece 64-byte aligned:
//   [internal copy of each reordered tensor: md.get_size(), rounded up to 64]...
//   [scratchpad: max(scratchpad of the convolution, of each reorder)]
// Reorders and the convolution run one after another, so they share one scratchpad.
// workspace_bytes() = sum of the rounded copies + that maximum, exactly what run() hands
// oneDNN (scratchpad_mode::user makes oneDNN take its scratch from us instead of the heap).
//
// Threads. Debian's libdnnl 2.6 uses the OpenMP runtime (DNNL_CPU_RUNTIME = OMP, libgomp).
// oneDNN reads omp_get_max_threads() both when it creates a primitive descriptor (work split
// and scratchpad size) and when it executes, so plan() and run() both set it to the plan's
// thread count, convlab::num_threads() at plan time, and restore the caller's value after.
#include "onednn_plan.hpp"

#include <dnnl_debug.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/threads.hpp"

namespace convlab::onednn {

using dnnl::memory;
using Tag = memory::format_tag;
using DataType = memory::data_type;

ThreadScope::ThreadScope(int threads) : previous_(omp_get_max_threads()) {
  omp_set_num_threads(threads);
}
ThreadScope::~ThreadScope() { omp_set_num_threads(previous_); }

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void throw_backend(const dnnl::error& error, const std::string& where) {
  throw Error(ErrorCode::backend, "cpu.onednn " + where + ": " + error.what() + " (" +
                                      dnnl_status2str(error.status) + ")");
}

namespace {

constexpr std::size_t kAlign = 64;
std::size_t align_up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::string where(const ConvProblem& p, Pass pass) {
  return std::string(to_string(pass)) + " " + p.descriptor();
}

memory::dims x_dims(const ConvProblem& p) { return {p.n, p.c, p.h, p.w}; }
memory::dims y_dims(const ConvProblem& p) { return {p.n, p.k, p.out_h(), p.out_w()}; }
memory::dims w_dims(const ConvProblem& p) {
  if (p.groups == 1) return {p.k, p.c, p.r, p.s};
  return {p.groups, p.k_per_group(), p.c_per_group(), p.r, p.s};
}

memory::desc user_x(const ConvProblem& p) { return {x_dims(p), DataType::f32, Tag::nchw}; }
memory::desc user_y(const ConvProblem& p) { return {y_dims(p), DataType::f32, Tag::nchw}; }
memory::desc user_w(const ConvProblem& p) {
  return {w_dims(p), DataType::f32, p.groups == 1 ? Tag::oihw : Tag::goihw};
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A layout in oneDNN's verbose spelling: dimensions outermost first by stride (a, b, c, ...
// upper-cased when blocked), then the inner blocks, e.g. "aBcd16b" for nChw16c.
std::string layout_name(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return dnnl_fmt_kind2str(d.format_kind);
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  std::vector<int> order(static_cast<std::size_t>(d.ndims));
  for (int i = 0; i < d.ndims; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int c) { return b.strides[a] > b.strides[c]; });
  std::vector<bool> blocked(static_cast<std::size_t>(d.ndims), false);
  for (int i = 0; i < b.inner_nblks; ++i) blocked[static_cast<std::size_t>(b.inner_idxs[i])] = true;
  std::string name;
  for (int dim : order) {
    name += static_cast<char>((blocked[static_cast<std::size_t>(dim)] ? 'A' : 'a') + dim);
  }
  for (int i = 0; i < b.inner_nblks; ++i) {
    name += std::to_string(b.inner_blks[i]) + static_cast<char>('a' + b.inner_idxs[i]);
  }
  return name;
}

}  // namespace

const char* algorithm_name(dnnl::algorithm algorithm) {
  switch (algorithm) {
    case dnnl::algorithm::convolution_direct:
      return "convolution_direct";
    case dnnl::algorithm::convolution_winograd:
      return "convolution_winograd";
    default:
      return "convolution_auto";
  }
}

dnnl::primitive_desc convolution_descriptor(const ConvProblem& p, Pass pass, dnnl::algorithm alg) {
  const memory::desc x_any(x_dims(p), DataType::f32, Tag::any);
  const memory::desc w_any(w_dims(p), DataType::f32, Tag::any);
  const memory::desc y_any(y_dims(p), DataType::f32, Tag::any);
  const memory::dims strides{p.stride_h, p.stride_w};
  const memory::dims dilates{p.dilation_h - 1, p.dilation_w - 1};
  const memory::dims padding{p.pad_h, p.pad_w};
  // oneDNN takes the end (bottom/right) paddings separately, as benchdnn deduces them.
  const memory::dims padding_r{p.end_pad_h(), p.end_pad_w()};
  const dnnl::primitive_attr attr = user_scratchpad();
  try {
    const dnnl::convolution_forward::primitive_desc forward(
        {dnnl::prop_kind::forward_training, alg, x_any, w_any, y_any, strides, dilates, padding,
         padding_r},
        attr, cpu_engine());
    switch (pass) {
      case Pass::forward:
        return forward;
      case Pass::backward_data:
        return dnnl::convolution_backward_data::primitive_desc(
            {alg, x_any, w_any, y_any, strides, dilates, padding, padding_r}, attr, cpu_engine(),
            forward);
      case Pass::backward_filter:
        return dnnl::convolution_backward_weights::primitive_desc(
            {alg, x_any, w_any, y_any, strides, dilates, padding, padding_r}, attr, cpu_engine(),
            forward);
    }
  } catch (const dnnl::error& e) {
    throw_backend(e, where(p, pass) + ": no " + algorithm_name(alg) + " primitive descriptor");
  }
  throw Error(ErrorCode::invalid_argument, "cpu.onednn: unknown pass");
}

bool is_winograd(const dnnl::primitive_desc& descriptor) {
  return std::string(descriptor.impl_info_str()).find("wino") != std::string::npos;
}

namespace {

// One tensor of the pass: where the user keeps it, where oneDNN wants it.
struct Operand {
  const char* name = "";
  int arg = 0;  // DNNL_ARG_* of the convolution
  float* Tensors::*role = nullptr;
  bool output = false;
  memory::desc user, internal;
  bool reordered = false;
  dnnl::reorder reorder;  // user -> internal (input) or internal -> user (output)
  memory::desc reorder_scratch;
  std::size_t offset = 0;  // of the internal copy in the workspace
};

class OnednnPlan final : public Plan {
 public:
  OnednnPlan(const ConvProblem& problem, Pass pass, dnnl::algorithm algorithm, std::string name)
      : problem_(problem), pass_(pass), threads_(num_threads()), name_(std::move(name)) {
    ThreadScope scope(threads_);
    const dnnl::primitive_desc pd = convolution_descriptor(problem, pass, algorithm);
    impl_ = pd.impl_info_str();
    const memory::desc ux = user_x(problem), uw = user_w(problem), uy = user_y(problem);
    switch (pass) {
      case Pass::forward:
        add("x", DNNL_ARG_SRC, &Tensors::x, false, ux, pd.src_desc());
        add("w", DNNL_ARG_WEIGHTS, &Tensors::w, false, uw, pd.weights_desc());
        add("y", DNNL_ARG_DST, &Tensors::y, true, uy, pd.dst_desc());
        break;
      case Pass::backward_data:
        add("dy", DNNL_ARG_DIFF_DST, &Tensors::y, false, uy, pd.diff_dst_desc());
        add("w", DNNL_ARG_WEIGHTS, &Tensors::w, false, uw, pd.weights_desc());
        add("dx", DNNL_ARG_DIFF_SRC, &Tensors::x, true, ux, pd.diff_src_desc());
        break;
      case Pass::backward_filter:
        add("x", DNNL_ARG_SRC, &Tensors::x, false, ux, pd.src_desc());
        add("dy", DNNL_ARG_DIFF_DST, &Tensors::y, false, uy, pd.diff_dst_desc());
        add("dw", DNNL_ARG_DIFF_WEIGHTS, &Tensors::w, true, uw, pd.diff_weights_desc());
        break;
    }
    conv_scratch_ = pd.scratchpad_desc();
    std::size_t scratch = conv_scratch_.get_size();
    std::size_t cursor = 0;
    try {
      for (Operand& op : operands_) {
        if (op.internal == op.user) continue;
        op.reordered = true;
        const memory::desc& from = op.output ? op.internal : op.user;
        const memory::desc& to = op.output ? op.user : op.internal;
        const dnnl::reorder::primitive_desc rpd(cpu_engine(), from, cpu_engine(), to,
                                                user_scratchpad());
        op.reorder = dnnl::reorder(rpd);
        op.reorder_scratch = rpd.scratchpad_desc();
        scratch = std::max(scratch, op.reorder_scratch.get_size());
        op.offset = cursor;
        reorder_bytes_ += align_up(op.internal.get_size());
        cursor += align_up(op.internal.get_size());
      }
      conv_ = dnnl::primitive(pd);
    } catch (const dnnl::error& e) {
      throw_backend(e, where(problem, pass) + ": creating the primitives");
    }
    scratch_offset_ = cursor;
    scratch_bytes_ = scratch;
    workspace_bytes_ = cursor + scratch;
    describe_plan();
  }

  std::size_t workspace_bytes() const override { return workspace_bytes_; }

  std::vector<std::pair<std::string, double>> last_run_phases() const override {
    if (last_total_ms_ <= 0) return {};
    return {{"primitive", last_primitive_ms_}, {"reorders", last_total_ms_ - last_primitive_ms_}};
  }

 protected:
  void execute(const Tensors& tensors, const Workspace& workspace, Stream) override {
    check_run_arguments(name_, problem_, pass_, tensors, workspace, workspace_bytes_);
    using Clock = std::chrono::steady_clock;
    ThreadScope scope(threads_);
    char* base = static_cast<char*>(workspace.data);
    char* scratch = base + scratch_offset_;
    const dnnl::engine& engine = cpu_engine();
    try {
      const auto start = Clock::now();
      std::unordered_map<int, memory> conv_args;
      if (conv_scratch_.get_size() > 0) {
        conv_args.emplace(DNNL_ARG_SCRATCHPAD, memory(conv_scratch_, engine, scratch));
      }
      std::vector<std::pair<const Operand*, memory>> outputs;
      for (const Operand& op : operands_) {
        memory user(op.user, engine, tensors.*(op.role));
        if (!op.reordered) {
          conv_args.emplace(op.arg, user);
          continue;
        }
        memory internal(op.internal, engine, base + op.offset);
        conv_args.emplace(op.arg, internal);
        if (op.output) {
          outputs.emplace_back(&op, user);
          continue;
        }
        execute_reorder(op, user, internal, scratch);
      }
      const auto conv_start = Clock::now();
      conv_.execute(stream_, conv_args);
      stream_.wait();
      const auto conv_stop = Clock::now();
      for (const auto& [op, user] : outputs) {
        execute_reorder(*op, conv_args.at(op->arg), user, scratch);
      }
      stream_.wait();
      const auto stop = Clock::now();
      last_primitive_ms_ =
          std::chrono::duration<double, std::milli>(conv_stop - conv_start).count();
      last_total_ms_ = std::chrono::duration<double, std::milli>(stop - start).count();
    } catch (const dnnl::error& e) {
      throw_backend(e, where(problem_, pass_) + ": executing");
    }
  }

  void describe_plan() {
    info_.kernel = impl_;
    // oneDNN's Winograd kernels name their transform: jit_wino_4x3 is F(4x4, 3x3). (Its tile
    // grid is its own; tile stays empty.)
    if (impl_.find("wino_4x3") != std::string::npos) info_.transform = "F(4x4,3x3)";
    info_.workspace_split = {{"reorders", reorder_bytes_}, {"scratchpad", scratch_bytes_}};
    std::string layouts;
    for (const Operand& op : operands_) {
      if (!layouts.empty()) layouts += ' ';
      layouts += std::string(op.name) + ":" + layout_name(op.internal) +
                 (op.reordered ? "(reordered)" : "(user)");
    }
    info_.details = {{"threads", std::to_string(threads_)}, {"layouts", layouts}};
    if (impl_.find("gemm") != std::string::npos) {
      // Not in the workspace, so said where a memory report will read it.
      info_.details.emplace_back("heap", "oneDNN's sgemm mallocs its packing buffers during run");
    }
  }

 private:
  void add(const char* name, int arg, float* Tensors::*role, bool output, const memory::desc& user,
           const memory::desc& internal) {
    Operand op;
    op.name = name;
    op.arg = arg;
    op.role = role;
    op.output = output;
    op.user = user;
    op.internal = internal;
    operands_.push_back(std::move(op));
  }

  void execute_reorder(const Operand& op, const memory& from, const memory& to,
                       char* scratch) const {
    std::unordered_map<int, memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    if (op.reorder_scratch.get_size() > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(op.reorder_scratch, cpu_engine(), scratch));
    }
    op.reorder.execute(stream_, args);
  }

  ConvProblem problem_;
  Pass pass_;
  int threads_;
  std::string name_;
  std::string impl_;
  std::vector<Operand> operands_;
  dnnl::primitive conv_;
  memory::desc conv_scratch_;
  dnnl::stream stream_{cpu_engine()};
  std::size_t reorder_bytes_ = 0, scratch_offset_ = 0, scratch_bytes_ = 0, workspace_bytes_ = 0;
  double last_primitive_ms_ = 0, last_total_ms_ = 0;
};

}  // namespace

std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass, dnnl::algorithm algorithm,
                                const std::string& name) {
  return std::make_unique<OnednnPlan>(problem, pass, algorithm, name);
}

}  // namespace convlab::onednn
