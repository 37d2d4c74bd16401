#pragma once
/// \file
/// ConvProblem: one 2-D convolution layer, and everything derived from it.
///
/// Conventions: fp32, NCHW activations, KCRS filters (K output channels, C/groups input
/// channels per filter, R x S taps), cross-correlation as in every DL framework. Dilation 1
/// is dense (cuDNN/PyTorch meaning; benchdnn descriptors write it as 0).
/// All sizes are int64_t and every derived count is computed with overflow checks.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace convlab {

/// The three passes of training.
enum class Pass {
  forward,          ///< y = conv(x, w)
  backward_data,    ///< dx = conv_transpose(dy, w)
  backward_filter,  ///< dw = correlate(x, dy) summed over the batch
};

/// CLI spelling: "fwd", "bwd_data", "bwd_filter".
const char* to_string(Pass pass) noexcept;
/// Parses a CLI spelling; throws Error{invalid_argument} naming the bad spelling.
Pass parse_pass(std::string_view text);

/// The tensors of a pass, by role.
struct TensorBytes {
  int64_t x = 0;  ///< input activations (dx for backward-data)
  int64_t w = 0;  ///< filter (dw for backward-filter)
  int64_t y = 0;  ///< output activations (dy for the backward passes)
  int64_t total() const;
};

/// One convolution layer. Fields are public and named; every derived quantity is a method.
struct ConvProblem {
  int64_t n = 2;  ///< minibatch
  int64_t c = 0;  ///< input channels (all groups together)
  int64_t h = 0;  ///< input height
  int64_t w = 0;  ///< input width
  int64_t k = 0;  ///< output channels (all groups together)
  int64_t r = 0;  ///< kernel height
  int64_t s = 0;  ///< kernel width
  int64_t pad_h = 0;  ///< padding before the first row (top)
  int64_t pad_w = 0;  ///< padding before the first column (left)
  /// Padding after the last row (bottom) / column (right); unset means equal to pad_h /
  /// pad_w. Only benchdnn's deduction from a given oh/ow makes them differ in descriptors.
  std::optional<int64_t> pad_h_end;
  std::optional<int64_t> pad_w_end;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t dilation_h = 1;  ///< 1 = dense
  int64_t dilation_w = 1;
  int64_t groups = 1;

  /// Throws Error{invalid_problem} naming this problem and the offending values unless the
  /// problem is a valid convolution whose element counts and byte sizes fit int64_t.
  void validate() const;

  /// The end paddings in effect: pad_h_end (pad_w_end) when set, else pad_h (pad_w).
  int64_t end_pad_h() const { return pad_h_end.value_or(pad_h); }
  int64_t end_pad_w() const { return pad_w_end.value_or(pad_w); }
  /// True when an end padding differs from its start padding.
  bool asymmetric_padding() const { return end_pad_h() != pad_h || end_pad_w() != pad_w; }

  /// (r-1)*dilation_h + 1, the extent of the dilated kernel.
  int64_t dilated_r() const;
  int64_t dilated_s() const;
  /// out_h = (h + pad_h + end_pad_h - dilated_r) / stride_h + 1 (floor division; may be
  /// <= 0 when the problem is invalid: validate() rejects that).
  int64_t out_h() const;
  int64_t out_w() const;
  int64_t c_per_group() const { return c / groups; }
  int64_t k_per_group() const { return k / groups; }

  int64_t x_elems() const;  ///< n*c*h*w
  int64_t w_elems() const;  ///< k*(c/groups)*r*s
  int64_t y_elems() const;  ///< n*k*out_h*out_w
  int64_t x_bytes() const;
  int64_t w_bytes() const;
  int64_t y_bytes() const;
  /// The bytes of the tensors a pass reads and writes (the same three tensors for each pass).
  TensorBytes tensor_bytes() const;

  /// Flops of direct convolution for a pass: 2 * n*k*out_h*out_w * (c/groups)*r*s multiply-adds
  /// counted as two flops. The same count for every pass (each is the same set of products);
  /// convbench divides it by time to report GFLOP/s regardless of the strategy used.
  int64_t flops(Pass pass) const;

  /// The canonical benchdnn descriptor of this problem (without a name), e.g.
  /// "g1mb2ic3ih5iw5oc8oh5ow5kh3kw3sh1sw1ph1pw1dh0dw0". Cheap; used in every message.
  std::string descriptor() const;

  /// Compares the paddings in effect: an unset end padding equals one set to the start's.
  bool operator==(const ConvProblem& other) const;
  bool operator!=(const ConvProblem& other) const { return !(*this == other); }
};

/// a*b, or Error{invalid_problem} if it overflows int64_t; `what` names the quantity.
int64_t checked_mul(int64_t a, int64_t b, const char* what);
/// a+b, or Error{invalid_problem} if it overflows int64_t.
int64_t checked_add(int64_t a, int64_t b, const char* what);

}  // namespace convlab
