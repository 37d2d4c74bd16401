// When a plan with graphs on captures, updates, replays or bypasses its pass graph
// (cuda/common/graph_cache.hpp), on the host: the CUDA calls around it run where a GPU
// exists (test_gpu_graph's CudaFftGraph).
#include <gtest/gtest.h>

#include "cuda/common/graph_cache.hpp"

namespace convlab::cuda {
namespace {

const int kBuffers[6] = {};

GraphKey key_of(int variant = 0) {
  return {&kBuffers[0], &kBuffers[1], &kBuffers[2], &kBuffers[3], &kBuffers[4], variant};
}

TEST(GraphCache, OffAlwaysRunsDirectly) {
  GraphCache cache(false);
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::direct);
  cache.captured(key_of());
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::direct);
}

TEST(GraphCache, CapturesThenReplaysTheSameKey) {
  GraphCache cache(true);
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::capture);
  cache.captured(key_of());
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::replay);
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::replay);
}

TEST(GraphCache, EveryPartOfTheKeyChangingUpdates) {
  const GraphKey base = key_of();
  for (int part = 0; part < 6; ++part) {
    GraphKey changed = base;
    const void* elsewhere = &kBuffers[5];
    if (part == 0) changed.stream = elsewhere;
    if (part == 1) changed.x = elsewhere;
    if (part == 2) changed.w = elsewhere;
    if (part == 3) changed.y = elsewhere;
    if (part == 4) changed.workspace = elsewhere;
    if (part == 5) changed.variant = 1;
    GraphCache cache(true);
    cache.captured(base);
    EXPECT_EQ(cache.next(changed, false), GraphStep::update) << "part " << part;
    cache.captured(changed);
    EXPECT_EQ(cache.next(changed, false), GraphStep::replay) << "part " << part;
    EXPECT_EQ(cache.next(base, false), GraphStep::update) << "part " << part << ", back";
  }
}

TEST(GraphCache, InsideTheCallersCaptureRunsDirectlyAndKeepsTheGraph) {
  GraphCache cache(true);
  EXPECT_EQ(cache.next(key_of(), true), GraphStep::direct);
  cache.captured(key_of());
  EXPECT_EQ(cache.next(key_of(), true), GraphStep::direct);
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::replay);
}

TEST(GraphCache, ForgottenGraphIsCapturedAgain) {
  GraphCache cache(true);
  cache.captured(key_of());
  cache.forget();
  EXPECT_FALSE(cache.holds());
  EXPECT_EQ(cache.next(key_of(), false), GraphStep::capture);
}

}  // namespace
}  // namespace convlab::cuda
