#pragma once
// The CPU loops of cpu.im2col: im2col and col2im over whole rows, built on the shared index
// math of strategy/im2col_index.hpp. They produce bit for bit what the per-element
// functions im2col_element / col2im_element give (tests/cpu/test_im2col_index.cpp checks
// it), so cpu.im2col and cuda.im2col fold columns identically.

#include "strategy/im2col_index.hpp"

namespace convlab::im2col {

/// Writes col[col_rows(g), col_cols(g)] (row-major) from the g.images images of one group
/// starting at x_group (image stride g.image_stride). Padding becomes zeros.
void im2col_cpu(const Im2colGeometry& g, const float* x_group, float* col);

/// Gathers col[col_rows(g), col_cols(g)] back into dx for the g.images images of one group
/// starting at dx_group, overwriting it: each dx element is the (i, j)-ordered sum of its
/// contributions from zero, exactly col2im_element.
void col2im_cpu(const Im2colGeometry& g, const float* col, float* dx_group);

/// One block of one image's columns (the `tile` of cpu.im2col): writes the output pixels
/// [begin, end) of image x_image (g.images is ignored) into col[col_rows(g), end - begin]
/// with row stride `ld` >= end - begin. Padding becomes zeros. With begin = 0, end = OH*OW
/// it is that image's part of im2col_cpu, bit for bit.
void im2col_block_cpu(const Im2colGeometry& g, const float* x_image, int64_t begin, int64_t end,
                      float* col, int64_t ld);

/// The adjoint of im2col_block_cpu: adds each entry of the block col[col_rows(g), end - begin]
/// (row stride ld) into the dx_image element its forward tap read. Blocks of one image are
/// added in turn into a dx that starts at zero; the order of each sum is block by block, then
/// tap by tap (deterministic, but not col2im_cpu's order unless the block is the whole image).
void col2im_block_add_cpu(const Im2colGeometry& g, const float* col, int64_t ld, int64_t begin,
                          int64_t end, float* dx_image);

/// Copies the group's rows of an NCHW tensor with `channels_total` channels into a
/// [rows, images*pixels] matrix (image-major columns): dst[r, m*pixels + p] =
/// src[m*channels_total*pixels + r*pixels + p]. Used to stage dy when images > 1.
void gather_images(const float* src, int64_t rows, int64_t pixels, int64_t images,
                   int64_t channels_total, float* dst);

/// The inverse of gather_images: scatters a staged [rows, images*pixels] matrix into NCHW.
void scatter_images(const float* src, int64_t rows, int64_t pixels, int64_t images,
                    int64_t channels_total, float* dst);

}  // namespace convlab::im2col
