#pragma once
// The CPU loops of cpu.im2col's implicit column buffer (strategy/im2col_padded_grid.hpp): the
// padded image the GEMM reads its rows from, and the GEMM's grid columns back into the output.

#include <cstdint>

#include "strategy/im2col_padded_grid.hpp"

namespace convlab::im2col {

/// Writes one image's group of channels (x_image, channel planes H*W apart) into its padded
/// grid, C/g planes of Hp rows at the grid's pitch: x where the grid covers it, zeros elsewhere.
void pad_into_grid(const Im2colGeometry& g, const PaddedGrid& grid, const float* x_image,
                   float* padded);

/// Copies the output pixels among the grid columns [begin, end) of a product
/// stage[rows, end - begin] (row stride end - begin) into out[rows, OH*OW] (row stride
/// OH*OW); the extra columns (ow >= OW) are dropped.
void scatter_grid_columns(const Im2colGeometry& g, const PaddedGrid& grid, const float* stage,
                          int64_t rows, int64_t begin, int64_t end, float* out);

}  // namespace convlab::im2col
